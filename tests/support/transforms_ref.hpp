// SPDX-License-Identifier: MIT
#pragma once
/// f64 references for the transform tests (tests/ad/transforms*.test.cpp):
/// random values from fixed seeds, closed forms of the test functions and
/// their derivatives computed by loops, and central finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <strata.hpp>
#include <vector>

namespace transforms_ref {

namespace st = strata;

using Vec = std::vector<double>;

/// n values uniform in [lo, hi) from a fixed seed (bit arithmetic: the same on every platform).
inline Vec random_values(std::size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  Vec v(n);
  for (double& x : v) x = lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53;
  return v;
}

inline st::Tensor tensor(const Vec& v, const st::Shape& shape) { return st::from_vector(v, shape); }
inline st::Tensor scalar(double v) { return st::full({}, v, st::f64); }

/// Every element of t within tol (relative above 1, absolute below) of expected.
inline void require_close(const st::Tensor& t, const Vec& expected, double tol = 1e-10) {
  const Vec got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    REQUIRE(std::abs(got[i] - expected[i]) <= tol * (1.0 + std::abs(expected[i])));
  }
}

inline void require_shape(const st::Tensor& t, const st::Shape& shape) {
  INFO("shape " << t.shape() << ", expected " << shape);
  REQUIRE(t.shape() == shape);
}

inline double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

/// y = W x for a row-major [rows, cols] W.
inline Vec matvec(const Vec& w, std::size_t rows, const Vec& x) {
  const std::size_t cols = x.size();
  Vec y(rows, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) y[i] += w[i * cols + j] * x[j];
  }
  return y;
}

/// Central-difference Hessian of a scalar f64 function.
template <class Fn>
inline Vec fd_hessian(Fn f, const Vec& x, double h = 2e-4) {
  const std::size_t n = x.size();
  Vec hess(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      auto at = [&](double si, double sj) {
        Vec y = x;
        y[i] += si * h;
        y[j] += sj * h;
        return f(y);
      };
      hess[i * n + j] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * h * h);
    }
  }
  return hess;
}

/// Central-difference Jacobian [m, n] of a vector f64 function.
template <class Fn>
inline Vec fd_jacobian(Fn f, const Vec& x, double h = 1e-6) {
  const std::size_t n = x.size(), m = f(x).size();
  Vec jac(m * n);
  for (std::size_t j = 0; j < n; ++j) {
    Vec xp = x, xm = x;
    xp[j] += h;
    xm[j] -= h;
    const Vec fp = f(xp), fm = f(xm);
    for (std::size_t i = 0; i < m; ++i) jac[i * n + j] = (fp[i] - fm[i]) / (2 * h);
  }
  return jac;
}

// f(x) = sum(tanh(W x)^2) + 0.5 sum(x^2), W [4, 3], x [3].
inline constexpr std::size_t kRows = 4, kCols = 3;

inline auto make_quartic(const st::Tensor& w) {
  return [w](const auto& x) {
    const auto t = st::tanh(st::matmul(w, x));
    return st::sum(t * t) + 0.5 * st::sum(x * x);
  };
}
inline double quartic_ref(const Vec& w, const Vec& x) {
  double s = 0;
  for (double z : matvec(w, kRows, x)) s += std::tanh(z) * std::tanh(z);
  return s + 0.5 * dot(x, x);
}
inline Vec quartic_grad_ref(const Vec& w, const Vec& x) {
  const Vec z = matvec(w, kRows, x);
  Vec g = x;
  for (std::size_t k = 0; k < kRows; ++k) {
    const double t = std::tanh(z[k]);
    for (std::size_t j = 0; j < kCols; ++j) g[j] += 2 * t * (1 - t * t) * w[k * kCols + j];
  }
  return g;
}
/// d2/dz2 tanh(z)^2 = 2 (1 - t^2)(1 - 3 t^2), so H = W^T diag(...) W + I.
inline Vec quartic_hessian_ref(const Vec& w, const Vec& x) {
  const Vec z = matvec(w, kRows, x);
  Vec h(kCols * kCols, 0.0);
  for (std::size_t i = 0; i < kCols; ++i) h[i * kCols + i] = 1.0;
  for (std::size_t k = 0; k < kRows; ++k) {
    const double t = std::tanh(z[k]);
    const double c = 2 * (1 - t * t) * (1 - 3 * t * t);
    for (std::size_t i = 0; i < kCols; ++i) {
      for (std::size_t j = 0; j < kCols; ++j) {
        h[i * kCols + j] += w[k * kCols + i] * c * w[k * kCols + j];
      }
    }
  }
  return h;
}

// g(x) = tanh(W x) * sum(x): [3] -> [4], a vector-valued function.
inline auto make_vector_fn(const st::Tensor& w) {
  return [w](const auto& x) { return st::tanh(st::matmul(w, x)) * st::sum(x); };
}
inline Vec vector_fn_ref(const Vec& w, const Vec& x) {
  Vec y = matvec(w, kRows, x);
  double s = 0;
  for (double v : x) s += v;
  for (double& v : y) v = std::tanh(v) * s;
  return y;
}

/// The derivative of a one-element function along 1, by forward mode.
inline auto fwd_derivative = [](auto fn) {
  return [fn](const auto& x) { return st::jvp(fn, x, st::constant_like(x, 1.0)).second; };
};
inline auto rev_derivative = [](auto fn) { return st::grad(fn); };

inline double value(const st::Tensor& t) { return t.item<double>(); }

}  // namespace transforms_ref
