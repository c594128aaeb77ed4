// SPDX-License-Identifier: MIT
#pragma once
/// The references of the tests of diff/ (tests/diff/*.test.cpp): naive f64 loops
/// for the composite ops on plain st::Tensor (broadcasting by index arithmetic,
/// reductions by odometer, numerically stable formulas where the naive one
/// overflows), and the comparisons of a result with them.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <strata.hpp>
#include <vector>

namespace strata::testing::diff_ref {

/// Values, row-major.
using Vec = std::vector<double>;
/// A shape or a multi-index.
using Dims = std::vector<int64_t>;
/// +infinity.
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// n values uniform in [lo, hi) from a fixed seed.
inline Vec random_values(std::size_t n, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  std::mt19937_64 rng(seed);
  Vec v(n);
  for (double& x : v) x = lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53;
  return v;
}

/// An f64 tensor of the given values.
inline strata::Tensor tensor(const Vec& v, const strata::Shape& shape) {
  return strata::from_vector(v, shape);
}

/// The element count of a shape.
inline int64_t numel(const Dims& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// Row-major multi-index of flat position i in shape s.
inline Dims unravel(int64_t i, const Dims& s) {
  Dims idx(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}
/// The row-major flat position of a multi-index in shape s.
inline int64_t ravel(const Dims& idx, const Dims& s) {
  int64_t i = 0;
  for (std::size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
  return i;
}

/// A value with its shape, for the reference computations.
struct Ref {
  Dims shape;
  Vec v;
};

/// NumPy broadcasting of two references through fn, by index arithmetic.
inline Ref broadcast(const Ref& a, const Ref& b, const std::function<double(double, double)>& fn) {
  const std::size_t n = std::max(a.shape.size(), b.shape.size());
  Dims out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.shape.size() ? 1 : a.shape[i - (n - a.shape.size())];
    const int64_t db = i < n - b.shape.size() ? 1 : b.shape[i - (n - b.shape.size())];
    out[i] = da == 1 ? db : da;
  }
  auto pick = [&](const Ref& r, const Dims& idx) {
    Dims sub(r.shape.size());
    for (std::size_t d = 0; d < r.shape.size(); ++d) {
      sub[d] = r.shape[d] == 1 ? 0 : idx[d + (n - r.shape.size())];
    }
    return r.v[std::size_t(ravel(sub, r.shape))];
  };
  Ref r{out, Vec(std::size_t(numel(out)))};
  for (int64_t i = 0; i < numel(out); ++i) {
    const Dims idx = unravel(i, out);
    r.v[std::size_t(i)] = fn(pick(a, idx), pick(b, idx));
  }
  return r;
}

/// Reduces the given axes with fn from init; keepdims keeps them as size 1.
inline Ref reduce(const Ref& x, const Dims& axes, bool keepdims, double init,
                  const std::function<double(double, double)>& fn) {
  std::vector<bool> reduced(x.shape.size(), axes.empty());
  for (int64_t a : axes) reduced[std::size_t(a < 0 ? a + int64_t(x.shape.size()) : a)] = true;
  Dims kept;
  for (std::size_t d = 0; d < x.shape.size(); ++d) kept.push_back(reduced[d] ? 1 : x.shape[d]);
  Vec acc(std::size_t(numel(kept)), init);
  for (int64_t i = 0; i < numel(x.shape); ++i) {
    Dims idx = unravel(i, x.shape);
    for (std::size_t d = 0; d < idx.size(); ++d) {
      if (reduced[d]) idx[d] = 0;
    }
    double& slot = acc[std::size_t(ravel(idx, kept))];
    slot = fn(slot, x.v[std::size_t(i)]);
  }
  if (keepdims) return {kept, acc};
  Dims out;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (!reduced[d]) out.push_back(x.shape[d]);
  }
  return {out, acc};
}

/// fn of every element.
inline Ref map(const Ref& x, const std::function<double(double)>& fn) {
  Ref r = x;
  for (double& v : r.v) v = fn(v);
  return r;
}

/// Checks shape, dtype and every value (relative tolerance above 1, absolute below).
inline void require_values(const strata::Tensor& t, const Dims& shape, const Vec& expected,
                           double tol = 1e-12, strata::DType dtype = strata::f64) {
  INFO("shape " << t.shape() << ", dtype " << t.dtype());
  REQUIRE(t.shape() == strata::Shape(shape));
  REQUIRE(t.dtype() == dtype);
  const Vec got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isinf(expected[i])) {
      REQUIRE(got[i] == expected[i]);
    } else {
      REQUIRE(std::abs(got[i] - expected[i]) <= tol * (1.0 + std::abs(expected[i])));
    }
  }
}
/// require_values against a reference.
inline void require_ref(const strata::Tensor& t, const Ref& r, double tol = 1e-12,
                        strata::DType dtype = strata::f64) {
  require_values(t, r.shape, r.v, tol, dtype);
}

/// The same shape, dtype and values (bit for bit, as doubles).
inline void require_same(const strata::Tensor& a, const strata::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.to_vector<double>() == b.to_vector<double>());
}

/// 1 / (1 + e^-x), without overflow.
inline double sigmoid_ref(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}
/// log(1 + e^x), without overflow.
inline double softplus_ref(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}
/// GELU, its tanh approximation.
inline double gelu_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

/// Stable log-sum-exp of a row.
inline double lse_ref(const Vec& row) {
  double m = -kInf;
  for (double v : row) m = std::max(m, v);
  if (m == -kInf) return -kInf;
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  return m + std::log(s);
}

}  // namespace strata::testing::diff_ref
