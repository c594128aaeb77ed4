// SPDX-License-Identifier: MIT
// Tests for diff/ops.hpp: the composite ops on plain st::Tensor, against naive
// f64 loops written here (broadcasting by index arithmetic, reductions by
// odometer, numerically stable references where the naive formula overflows).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/device.hpp"

namespace st = strata;
using Catch::Matchers::Contains;

namespace {

using Vec = std::vector<double>;
using Dims = std::vector<int64_t>;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// n values uniform in [lo, hi) from a fixed seed.
Vec random_values(std::size_t n, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  std::mt19937_64 rng(seed);
  Vec v(n);
  for (double& x : v) x = lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53;
  return v;
}

st::Tensor tensor(const Vec& v, const st::Shape& shape) { return st::from_vector(v, shape); }

int64_t numel(const Dims& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// Row-major multi-index of flat position i in shape s.
Dims unravel(int64_t i, const Dims& s) {
  Dims idx(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}
int64_t ravel(const Dims& idx, const Dims& s) {
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
Ref broadcast(const Ref& a, const Ref& b, const std::function<double(double, double)>& fn) {
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
Ref reduce(const Ref& x, const Dims& axes, bool keepdims, double init,
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

Ref map(const Ref& x, const std::function<double(double)>& fn) {
  Ref r = x;
  for (double& v : r.v) v = fn(v);
  return r;
}

/// Checks shape, dtype and every value (relative tolerance above 1, absolute below).
void require_values(const st::Tensor& t, const Dims& shape, const Vec& expected, double tol = 1e-12,
                    st::DType dtype = st::f64) {
  INFO("shape " << t.shape() << ", dtype " << t.dtype());
  REQUIRE(t.shape() == st::Shape(shape));
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
void require_ref(const st::Tensor& t, const Ref& r, double tol = 1e-12, st::DType dtype = st::f64) {
  require_values(t, r.shape, r.v, tol, dtype);
}

void require_same(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.to_vector<double>() == b.to_vector<double>());
}

/// The message of the E that fn throws; fails the test when fn throws nothing.
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception was thrown");
  return {};
}

double sigmoid_ref(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}
double softplus_ref(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double gelu_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

/// Stable log-sum-exp of a row.
double lse_ref(const Vec& row) {
  double m = -kInf;
  for (double v : row) m = std::max(m, v);
  if (m == -kInf) return -kInf;
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  return m + std::log(s);
}

}  // namespace

TEST_CASE("broadcasting arithmetic", "[diff]") {
  const Ref a{{3, 1}, {1.5, -2.0, 3.25}}, b{{4}, {0.5, -1.25, 2.0, 4.0}};
  const st::Tensor ta = tensor(a.v, {3, 1}), tb = tensor(b.v, {4});
  SECTION("[3, 1] with [4]") {
    require_ref(ta + tb, broadcast(a, b, std::plus<>()));
    require_ref(ta - tb, broadcast(a, b, std::minus<>()));
    require_ref(ta * tb, broadcast(a, b, std::multiplies<>()));
    require_ref(ta / tb, broadcast(a, b, std::divides<>()));
    require_ref(tb - ta, broadcast(b, a, std::minus<>()));
    require_ref(st::add(ta, tb), broadcast(a, b, std::plus<>()));
    require_ref(st::sub(ta, tb), broadcast(a, b, std::minus<>()));
    require_ref(st::mul(ta, tb), broadcast(a, b, std::multiplies<>()));
    require_ref(st::div(ta, tb), broadcast(a, b, std::divides<>()));
    require_ref(st::maximum(ta, tb),
                broadcast(a, b, [](double x, double y) { return std::max(x, y); }));
    require_ref(st::minimum(ta, tb),
                broadcast(a, b, [](double x, double y) { return std::min(x, y); }));
  }
  SECTION("rank 3 with rank 2, size-1 dims on both sides") {
    const Ref c{{2, 1, 4}, random_values(8, 1)}, d{{3, 1}, random_values(3, 2)};
    const st::Tensor tc = tensor(c.v, {2, 1, 4}), td = tensor(d.v, {3, 1});
    require_ref(tc * td, broadcast(c, d, std::multiplies<>()));
    require_ref(td - tc, broadcast(d, c, std::minus<>()));
  }
  SECTION("scalars on either side") {
    require_ref(ta + 2.0, map(a, [](double x) { return x + 2; }));
    require_ref(2.0 + ta, map(a, [](double x) { return 2 + x; }));
    require_ref(ta - 2.0, map(a, [](double x) { return x - 2; }));
    require_ref(2.0 - ta, map(a, [](double x) { return 2 - x; }));
    require_ref(ta * 3, map(a, [](double x) { return x * 3; }));
    require_ref(3 * ta, map(a, [](double x) { return 3 * x; }));
    require_ref(ta / 4.0, map(a, [](double x) { return x / 4; }));
    require_ref(4.0 / ta, map(a, [](double x) { return 4 / x; }));
    require_ref(-ta, map(a, [](double x) { return -x; }));
    require_ref(st::maximum(ta, 0.0), map(a, [](double x) { return std::max(x, 0.0); }));
    require_ref(st::minimum(1.0, ta), map(a, [](double x) { return std::min(1.0, x); }));
  }
  SECTION("dtype promotion") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{3, -4, 7}, {3});
    const st::Tensor f = st::from_vector(std::vector<float>{0.5f, 1.25f, -2.0f}, {3});
    require_values(i + f, {3}, {3.5, -2.75, 5.0}, 1e-7, st::f32);
    require_values(f * i, {3}, {1.5, -5.0, -14.0}, 1e-7, st::f32);
    const st::Tensor i32 = st::from_vector(std::vector<int32_t>{1, 2, 3}, {3});
    require_values(i32 + i, {3}, {4, -2, 10}, 0, st::i64);
    require_values(f + tensor({1, 2, 3}, {3}), {3}, {1.5, 3.25, 1.0}, 0, st::f64);
    const st::Tensor bools = st::from_vector(std::vector<bool>{true, false, true}, {3});
    require_values(bools + i32, {3}, {2, 2, 4}, 0, st::i32);
  }
  SECTION("integer / integer is true division in f32") {
    const st::Tensor n = st::from_vector(std::vector<int64_t>{7, -7, 1, 6}, {4});
    const st::Tensor d = st::from_vector(std::vector<int64_t>{2, 2, 3, -4}, {4});
    require_values(n / d, {4}, {3.5, -3.5, 1.0 / 3.0, -1.5}, 1e-7, st::f32);
    require_values(n / 2, {4}, {3.5, -3.5, 0.5, 3.0}, 1e-7, st::f32);
    require_values(st::div(1, d), {4}, {0.5, 0.5, 1.0 / 3.0, -0.25}, 1e-7, st::f32);
  }
  SECTION("C++ scalars are weak") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{3, -4}, {2});
    require_values(i * 1.5, {2}, {4.5, -6.0}, 0, st::f32);  // float scalar, int tensor: f32
    require_values(2.5 + i, {2}, {5.5, -1.5}, 0, st::f32);
    require_values(i + 2, {2}, {5, -2}, 0, st::i64);  // int scalar keeps the int dtype
    const st::Tensor f = st::from_vector(std::vector<float>{0.5f, 1.5f}, {2});
    require_values(f * 2.0, {2}, {1.0, 3.0}, 0, st::f32);  // double scalar keeps f32
    require_values(f + 1, {2}, {1.5, 2.5}, 0, st::f32);
    const st::Tensor i32 = st::from_vector(std::vector<int32_t>{5, 6}, {2});
    require_values(i32 - int64_t(1), {2}, {4, 5}, 0, st::i32);
  }
  SECTION("pow") {
    const Ref p{{2, 3}, random_values(6, 3, 0.1, 3.0)};
    const st::Tensor tp = tensor(p.v, {2, 3});
    require_ref(st::pow(tp, 2.5), map(p, [](double x) { return std::pow(x, 2.5); }));
    require_ref(tp.pow(-1.5), map(p, [](double x) { return std::pow(x, -1.5); }));
    const Ref e{{3}, {0.5, 2.0, -1.0}};
    require_ref(st::pow(tp, tensor(e.v, {3})),
                broadcast(p, e, [](double x, double y) { return std::pow(x, y); }));
    require_values(st::pow(2.0, tensor(e.v, {3})), {3}, {std::sqrt(2.0), 4.0, 0.5});
  }
}

TEST_CASE("comparisons and logic return bool tensors", "[diff]") {
  const Ref a{{3, 1}, {1.0, -2.0, 0.5}}, b{{4}, {0.5, 1.0, -2.0, 3.0}};
  const st::Tensor ta = tensor(a.v, {3, 1}), tb = tensor(b.v, {4});
  auto check = [&](const st::Tensor& t, const std::function<bool(double, double)>& fn) {
    require_ref(t, broadcast(a, b, [&](double x, double y) { return fn(x, y) ? 1.0 : 0.0; }), 0,
                st::bool_);
  };
  check(ta > tb, std::greater<>());
  check(ta >= tb, std::greater_equal<>());
  check(ta < tb, std::less<>());
  check(ta <= tb, std::less_equal<>());
  check(ta == tb, std::equal_to<>());
  check(ta != tb, std::not_equal_to<>());
  check(st::gt(ta, tb), std::greater<>());
  check(st::eq(ta, tb), std::equal_to<>());
  require_values(ta > 0.0, {3, 1}, {1, 0, 1}, 0, st::bool_);
  require_values(0.75 < ta, {3, 1}, {1, 0, 0}, 0, st::bool_);
  require_values(ta == 0.5, {3, 1}, {0, 0, 1}, 0, st::bool_);
  // An integer tensor against a fractional scalar compares the values, not a truncation.
  const st::Tensor i = st::from_vector(std::vector<int64_t>{0, 1, 2}, {3});
  require_values(i > 0.5, {3}, {0, 1, 1}, 0, st::bool_);
  require_values(i == 1, {3}, {0, 1, 0}, 0, st::bool_);
  const st::Tensor p = ta > 0.0, q = tb > 0.0;
  check(st::logical_and(p, q), [](double x, double y) { return x > 0 && y > 0; });
  check(st::logical_or(p, q), [](double x, double y) { return x > 0 || y > 0; });
  require_values(st::logical_not(p), {3, 1}, {0, 1, 0}, 0, st::bool_);
}

TEST_CASE("where broadcasts condition and both branches", "[diff]") {
  const st::Tensor cond = st::from_vector(std::vector<bool>{true, false, true}, {3, 1});
  const Vec av = {1.0, 2.0, 3.0, 4.0};
  const st::Tensor a = tensor(av, {4});
  Vec expected;
  for (int r = 0; r < 3; ++r) {
    for (double v : av) expected.push_back(r != 1 ? v : -1.0);
  }
  require_values(st::where(cond, a, -1.0), {3, 4}, expected);
  Vec flipped;
  for (int r = 0; r < 3; ++r) {
    for (double v : av) flipped.push_back(r != 1 ? -1.0 : v);
  }
  require_values(st::where(cond, -1.0, a), {3, 4}, flipped);
  const st::Tensor m = tensor({-1.5, 2.0, 0.0, 3.5, -0.25, 1.0}, {2, 3});
  require_values(st::where(m > 0.0, m, 0.0), {2, 3}, {0, 2, 0, 3.5, 0, 1});
  // Both branches tensors of different shapes, condition a third shape.
  const st::Tensor row = tensor({10.0, 20.0, 30.0}, {3});
  const st::Tensor col = tensor({-1.0, -2.0}, {2, 1});
  require_values(st::where(m > 0.0, row, col), {2, 3}, {-1, 20, -1, 10, -2, 30});
}

TEST_CASE("elementwise functions", "[diff]") {
  const Ref x{{2, 4}, random_values(8, 11, -3.0, 3.0)};
  const st::Tensor t = tensor(x.v, {2, 4});
  const Ref pos = map(x, [](double v) { return std::abs(v) + 0.1; });
  const st::Tensor tp = tensor(pos.v, {2, 4});
  SECTION("math functions as free functions and methods") {
    require_ref(st::exp(t), map(x, [](double v) { return std::exp(v); }));
    require_ref(st::log(tp), map(pos, [](double v) { return std::log(v); }));
    require_ref(st::sin(t), map(x, [](double v) { return std::sin(v); }));
    require_ref(st::cos(t), map(x, [](double v) { return std::cos(v); }));
    require_ref(st::sqrt(tp), map(pos, [](double v) { return std::sqrt(v); }));
    require_ref(st::tanh(t), map(x, [](double v) { return std::tanh(v); }));
    require_ref(st::abs(t), map(x, [](double v) { return std::abs(v); }));
    require_ref(st::sign(t), map(x, [](double v) { return double((v > 0) - (v < 0)); }));
    require_same(t.exp(), st::exp(t));
    require_same(tp.log(), st::log(tp));
    require_same(t.sin(), st::sin(t));
    require_same(t.cos(), st::cos(t));
    require_same(tp.sqrt(), st::sqrt(tp));
    require_same(t.tanh(), st::tanh(t));
    require_same(t.abs(), st::abs(t));
    require_same(t.sign(), st::sign(t));
  }
  SECTION("integer input gives f32") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{0, 1, 2}, {3});
    require_values(st::exp(i), {3}, {1.0, std::exp(1.0), std::exp(2.0)}, 1e-6, st::f32);
    require_values(st::sqrt(i), {3}, {0.0, 1.0, std::sqrt(2.0)}, 1e-6, st::f32);
  }
  SECTION("activations") {
    require_ref(st::sigmoid(t), map(x, sigmoid_ref));
    require_ref(st::relu(t), map(x, [](double v) { return v > 0 ? v : 0.0; }));
    require_ref(st::gelu(t), map(x, gelu_ref));
    require_ref(st::silu(t), map(x, [](double v) { return v * sigmoid_ref(v); }));
    require_ref(st::softplus(t), map(x, softplus_ref));
    require_ref(st::clamp(t, -1.0, 0.5),
                map(x, [](double v) { return std::min(std::max(v, -1.0), 0.5); }));
    require_same(t.sigmoid(), st::sigmoid(t));
    require_same(t.relu(), st::relu(t));
    require_same(t.gelu(), st::gelu(t));
    require_same(t.silu(), st::silu(t));
    require_same(t.softplus(), st::softplus(t));
    require_same(t.clamp(-1.0, 0.5), st::clamp(t, -1.0, 0.5));
  }
  SECTION("large |x| gives no NaN or overflow") {
    const Vec big = {-1000.0, -50.0, 0.0, 50.0, 1000.0};
    const st::Tensor b = tensor(big, {5});
    require_values(st::sigmoid(b), {5}, {0.0, sigmoid_ref(-50), 0.5, 1.0, 1.0}, 1e-12);
    require_values(st::softplus(b), {5}, {0.0, softplus_ref(-50), std::log(2.0), 50.0, 1000.0});
    require_values(st::silu(b), {5}, {0.0, -50 * sigmoid_ref(-50), 0.0, 50.0, 1000.0}, 1e-12);
    require_values(st::gelu(b), {5}, {0.0, 0.0, 0.0, 50.0, 1000.0}, 1e-12);
    const st::Tensor b32 = b.to(st::f32);
    for (const st::Tensor& r : {st::sigmoid(b32), st::softplus(b32), st::silu(b32)}) {
      for (double v : r.to_vector<double>()) CHECK(std::isfinite(v));
    }
  }
  SECTION("relu at exactly 0 and of integers") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{-2, 0, 3}, {3});
    require_values(st::relu(i), {3}, {0, 0, 3}, 0, st::i64);
    require_values(st::clamp(i, -1.0, 2.0), {3}, {-1, 0, 2}, 0, st::f32);
  }
}

TEST_CASE("reductions with axes and keepdims", "[diff]") {
  const Ref x{{2, 3, 4}, random_values(24, 21)};
  const st::Tensor t = tensor(x.v, {2, 3, 4});
  const auto plus = [](double a, double b) { return a + b; };
  const auto maxf = [](double a, double b) { return std::max(a, b); };
  const auto minf = [](double a, double b) { return std::min(a, b); };
  const std::vector<Dims> axis_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const Dims& axes : axis_sets) {
    for (bool keep : {false, true}) {
      INFO("axes " << st::Shape(axes) << ", keepdims " << keep);
      const st::Shape ax(axes);
      require_ref(st::sum(t, ax, keep), reduce(x, axes, keep, 0.0, plus), 1e-12);
      require_ref(st::max(t, ax, keep), reduce(x, axes, keep, -kInf, maxf), 0);
      require_ref(st::min(t, ax, keep), reduce(x, axes, keep, kInf, minf), 0);
      require_same(t.sum(ax, keep), st::sum(t, ax, keep));
      require_same(t.max(ax, keep), st::max(t, ax, keep));
      require_same(t.min(ax, keep), st::min(t, ax, keep));
      // mean, var (population) and std from the sums.
      const Ref s = reduce(x, axes, keep, 0.0, plus);
      const double count = double(numel(x.shape) / numel(s.shape));
      const Ref mean = map(s, [&](double v) { return v / count; });
      require_ref(st::mean(t, ax, keep), mean, 1e-12);
      // Sum of squared deviations: broadcast the kept-dims mean back over x.
      const Ref mean_kept =
          map(reduce(x, axes, true, 0.0, plus), [&](double v) { return v / count; });
      const Ref sq = broadcast(x, mean_kept, [](double a, double m) { return (a - m) * (a - m); });
      const Ref var = map(reduce(sq, axes, keep, 0.0, plus), [&](double v) { return v / count; });
      require_ref(st::var(t, ax, keep), var, 1e-12);
      require_ref(st::std(t, ax, keep), map(var, [](double v) { return std::sqrt(v); }), 1e-12);
      require_same(t.mean(ax, keep), st::mean(t, ax, keep));
      require_same(t.var(ax, keep), st::var(t, ax, keep));
      require_same(t.std(ax, keep), st::std(t, ax, keep));
    }
  }
  SECTION("norm") {
    double ss = 0;
    for (double v : x.v) ss += v * v;
    require_values(st::norm(t), {}, {std::sqrt(ss)});
    require_same(t.norm(), st::norm(t));
  }
  SECTION("mean of integers is f32") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{1, 2, 3, 5}, {2, 2});
    require_values(st::mean(i), {}, {2.75}, 1e-7, st::f32);
    require_values(st::mean(i, {0}), {2}, {2.0, 3.5}, 1e-7, st::f32);
    require_values(st::sum(i, {1}), {2}, {3, 8}, 0, st::i64);
  }
  SECTION("argmax and argmin, ties give the first position") {
    const st::Tensor m = tensor({1.0, 3.0, 3.0, -1.0, 0.5, -4.0, -4.0, 2.0}, {2, 4});
    require_values(st::argmax(m, 1), {2}, {1, 3}, 0, st::i64);
    require_values(st::argmin(m, 1), {2}, {3, 1}, 0, st::i64);
    require_values(st::argmax(m, 0), {4}, {0, 0, 0, 1}, 0, st::i64);
    require_values(st::argmin(m, 0, true), {1, 4}, {1, 1, 1, 0}, 0, st::i64);
    require_values(st::argmax(m, -1, true), {2, 1}, {1, 3}, 0, st::i64);
    // Against a loop on random data.
    Vec expected;
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t k = 0; k < 4; ++k) {
        int64_t best = 0;
        for (int64_t j = 1; j < 3; ++j) {
          if (x.v[std::size_t((i * 3 + j) * 4 + k)] > x.v[std::size_t((i * 3 + best) * 4 + k)])
            best = j;
        }
        expected.push_back(double(best));
      }
    }
    require_values(st::argmax(t, 1), {2, 4}, expected, 0, st::i64);
  }
}

TEST_CASE("logsumexp, softmax and log_softmax are stable", "[diff]") {
  // Rows of ordinary, huge, hugely negative and mixed values.
  const Vec v = {0.5,    -1.0,   2.0,   0.25,  1000.0, 1000.5, 999.0, 1001.0,
                 -1000., -999.5, -1001, -1000, 1000.0, -1000., 0.0,   3.0};
  const st::Tensor t = tensor(v, {4, 4});
  Vec lse, soft, logsoft;
  for (std::size_t r = 0; r < 4; ++r) {
    const Vec row(v.begin() + std::ptrdiff_t(4 * r), v.begin() + std::ptrdiff_t(4 * r + 4));
    const double l = lse_ref(row);
    lse.push_back(l);
    for (double e : row) {
      soft.push_back(std::exp(e - l));
      logsoft.push_back(e - l);
    }
  }
  require_values(st::logsumexp(t, {1}), {4}, lse);
  require_values(st::logsumexp(t, {1}, true), {4, 1}, lse);
  require_values(st::softmax(t, 1), {4, 4}, soft);
  require_values(st::log_softmax(t, 1), {4, 4}, logsoft);
  require_same(t.logsumexp({1}), st::logsumexp(t, {1}));
  require_same(t.softmax(1), st::softmax(t, 1));
  require_same(t.log_softmax(1), st::log_softmax(t, 1));
  // Along axis 0 and over everything.
  Vec lse0;
  for (std::size_t c = 0; c < 4; ++c)
    lse0.push_back(lse_ref({v[c], v[4 + c], v[8 + c], v[12 + c]}));
  require_values(st::logsumexp(t, {0}), {4}, lse0);
  require_values(st::logsumexp(t), {}, {lse_ref(v)});
  Vec soft0(16);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t c = 0; c < 4; ++c) soft0[r * 4 + c] = std::exp(v[r * 4 + c] - lse0[c]);
  }
  require_values(st::softmax(t, 0), {4, 4}, soft0);
  SECTION("f32 rows of huge values") {
    const st::Tensor t32 = t.to(st::f32);
    require_values(st::logsumexp(t32, {1}), {4}, lse, 1e-6, st::f32);
    require_values(st::softmax(t32, 1), {4, 4}, soft, 1e-6, st::f32);
  }
  SECTION("a row of -inf stays -inf") {
    const st::Tensor n = tensor({-kInf, -kInf, 0.0, 1.0}, {2, 2});
    require_values(st::logsumexp(n, {1}), {2}, {-kInf, lse_ref({0.0, 1.0})});
  }
}

TEST_CASE("movement ops", "[diff]") {
  const Vec v = random_values(6, 31);
  const st::Tensor a = tensor(v, {2, 3});
  SECTION("transpose, permute, reshape, flatten") {
    const Vec vt = {v[0], v[3], v[1], v[4], v[2], v[5]};
    require_values(st::transpose(a, 0, 1), {3, 2}, vt, 0);
    require_values(a.transpose(-1, -2), {3, 2}, vt, 0);
    require_values(st::permute(a, {1, 0}), {3, 2}, vt, 0);
    require_values(a.permute({1, 0}), {3, 2}, vt, 0);
    require_values(st::reshape(a, {3, 2}), {3, 2}, v, 0);
    require_values(a.reshape({6}), {6}, v, 0);
    require_values(st::flatten(st::transpose(a, 0, 1)), {6}, vt, 0);
    require_values(a.transpose(0, 1).flatten(), {6}, vt, 0);
    // A rank-3 transpose against index arithmetic.
    const Vec w = random_values(24, 32);
    Vec expected(24);
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t k = 0; k < 4; ++k)
          expected[std::size_t((k * 3 + j) * 2 + i)] = w[std::size_t((i * 3 + j) * 4 + k)];
      }
    }
    require_values(st::transpose(tensor(w, {2, 3, 4}), 0, 2), {4, 3, 2}, expected, 0);
  }
  SECTION("squeeze and unsqueeze") {
    require_values(st::unsqueeze(a, 0), {1, 2, 3}, v, 0);
    require_values(a.unsqueeze(1), {2, 1, 3}, v, 0);
    require_values(st::unsqueeze(a, -1), {2, 3, 1}, v, 0);
    require_values(st::squeeze(st::unsqueeze(a, 1), 1), {2, 3}, v, 0);
    require_values(a.unsqueeze(2).squeeze(-1), {2, 3}, v, 0);
  }
  SECTION("flip") {
    require_values(st::flip(a, 1), {2, 3}, {v[2], v[1], v[0], v[5], v[4], v[3]}, 0);
    require_values(a.flip(0), {2, 3}, {v[3], v[4], v[5], v[0], v[1], v[2]}, 0);
    require_values(st::flip(a, -1), {2, 3}, {v[2], v[1], v[0], v[5], v[4], v[3]}, 0);
  }
  SECTION("pad with zeros and with a value") {
    const st::Tensor p = st::pad(a, {{1, 0}, {0, 2}});
    Vec expected(3 * 5, 0.0);
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 3; ++j) expected[(i + 1) * 5 + j] = v[i * 3 + j];
    }
    require_values(p, {3, 5}, expected, 0);
    Vec filled(2 * 7, -1.5);
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 3; ++j) filled[i * 7 + j + 3] = v[i * 3 + j];
    }
    require_values(st::pad(a, {{0, 0}, {3, 1}}, -1.5), {2, 7}, filled, 0);
  }
  SECTION("concat with dtype promotion") {
    const st::Tensor b = tensor({7.0, 8.0, 9.0}, {1, 3});
    Vec rows = v;
    rows.insert(rows.end(), {7.0, 8.0, 9.0});
    require_values(st::concat({a, b}, 0), {3, 3}, rows, 0);
    require_values(st::concat({a, a}, 1), {2, 6},
                   {v[0], v[1], v[2], v[0], v[1], v[2], v[3], v[4], v[5], v[3], v[4], v[5]}, 0);
    require_values(st::concat({a, b}, -2), {3, 3}, rows, 0);
    const st::Tensor i = st::from_vector(std::vector<int64_t>{1, 2}, {2});
    const st::Tensor f = st::from_vector(std::vector<float>{0.5f}, {1});
    require_values(st::concat({i, f}, 0), {3}, {1.0, 2.0, 0.5}, 0, st::f32);
    const std::vector<st::Tensor> parts = {b, b, a};
    require_values(st::concat(parts, 0), {4, 3},
                   {7, 8, 9, 7, 8, 9, v[0], v[1], v[2], v[3], v[4], v[5]}, 0);
  }
  SECTION("stack") {
    const st::Tensor b = a * 2.0;
    Vec doubled;
    for (double e : v) doubled.push_back(2 * e);
    Vec s0 = v;
    s0.insert(s0.end(), doubled.begin(), doubled.end());
    require_values(st::stack({a, b}, 0), {2, 2, 3}, s0, 0);
    Vec s2;
    for (std::size_t k = 0; k < 6; ++k) s2.insert(s2.end(), {v[k], doubled[k]});
    require_values(st::stack({a, b}, 2), {2, 3, 2}, s2, 0);
    require_values(st::stack({a, b}, -1), {2, 3, 2}, s2, 0);
    Vec s1;
    for (std::size_t i = 0; i < 2; ++i) {
      s1.insert(s1.end(), v.begin() + std::ptrdiff_t(3 * i), v.begin() + std::ptrdiff_t(3 * i + 3));
      s1.insert(s1.end(), doubled.begin() + std::ptrdiff_t(3 * i),
                doubled.begin() + std::ptrdiff_t(3 * i + 3));
    }
    require_values(st::stack({a, b}, 1), {2, 2, 3}, s1, 0);
  }
  SECTION("split") {
    const std::vector<st::Tensor> parts = st::split(a, {1, 2}, 1);
    REQUIRE(parts.size() == 2);
    require_values(parts[0], {2, 1}, {v[0], v[3]}, 0);
    require_values(parts[1], {2, 2}, {v[1], v[2], v[4], v[5]}, 0);
    const std::vector<st::Tensor> rows = st::split(a, {1, 0, 1}, 0);
    REQUIRE(rows.size() == 3);
    require_values(rows[0], {1, 3}, {v[0], v[1], v[2]}, 0);
    require_values(rows[1], {0, 3}, {}, 0);
    require_values(rows[2], {1, 3}, {v[3], v[4], v[5]}, 0);
    require_values(st::split(a, {3}, -1)[0], {2, 3}, v, 0);
  }
}

TEST_CASE("matmul and dot", "[diff]") {
  auto matmul_ref = [](const Vec& x, const Vec& y, int64_t m, int64_t k, int64_t n) {
    Vec out(std::size_t(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t p = 0; p < k; ++p)
          out[std::size_t(i * n + j)] += x[std::size_t(i * k + p)] * y[std::size_t(p * n + j)];
      }
    }
    return out;
  };
  const Vec a = random_values(12, 41), b = random_values(20, 42), u = random_values(4, 43),
            w = random_values(4, 44), r = random_values(3, 45);
  const st::Tensor ta = tensor(a, {3, 4}), tb = tensor(b, {4, 5}), tu = tensor(u, {4}),
                   tw = tensor(w, {4}), tr = tensor(r, {3});
  SECTION("matrix x matrix") {
    require_values(st::matmul(ta, tb), {3, 5}, matmul_ref(a, b, 3, 4, 5));
    require_same(ta.matmul(tb), st::matmul(ta, tb));
  }
  SECTION("1-D operands") {
    double uw = 0;
    for (std::size_t i = 0; i < 4; ++i) uw += u[i] * w[i];
    require_values(st::matmul(tu, tw), {}, {uw});
    require_values(st::dot(tu, tw), {}, {uw});
    require_values(tu.dot(tw), {}, {uw});
    require_values(st::matmul(ta, tu), {3}, matmul_ref(a, u, 3, 4, 1));
    require_values(st::matmul(tr, ta), {4}, matmul_ref(r, a, 1, 3, 4));
    require_values(tr.matmul(ta), {4}, matmul_ref(r, a, 1, 3, 4));
  }
  SECTION("batch dims broadcast") {
    // [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2].
    const Vec x = random_values(24, 46), y = random_values(40, 47);
    Vec expected;
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 5; ++j) {
        const Vec xi(x.begin() + std::ptrdiff_t(i * 12), x.begin() + std::ptrdiff_t(i * 12 + 12));
        const Vec yj(y.begin() + std::ptrdiff_t(j * 8), y.begin() + std::ptrdiff_t(j * 8 + 8));
        const Vec p = matmul_ref(xi, yj, 3, 4, 2);
        expected.insert(expected.end(), p.begin(), p.end());
      }
    }
    require_values(st::matmul(tensor(x, {2, 1, 3, 4}), tensor(y, {5, 4, 2})), {2, 5, 3, 2},
                   expected);
    // A vector with a batch of matrices: [4] x [2, 4, 3] -> [2, 3].
    const Vec z = random_values(24, 48);
    Vec ez;
    for (std::size_t i = 0; i < 2; ++i) {
      const Vec zi(z.begin() + std::ptrdiff_t(i * 12), z.begin() + std::ptrdiff_t(i * 12 + 12));
      const Vec p = matmul_ref(u, zi, 1, 4, 3);
      ez.insert(ez.end(), p.begin(), p.end());
    }
    require_values(st::matmul(tu, tensor(z, {2, 4, 3})), {2, 3}, ez);
    // A batch of matrices with a vector: [2, 3, 4] x [4] -> [2, 3].
    Vec ez2;
    for (std::size_t i = 0; i < 2; ++i) {
      const Vec zi(z.begin() + std::ptrdiff_t(i * 12), z.begin() + std::ptrdiff_t(i * 12 + 12));
      const Vec p = matmul_ref(zi, u, 3, 4, 1);
      ez2.insert(ez2.end(), p.begin(), p.end());
    }
    require_values(st::matmul(tensor(z, {2, 3, 4}), tu), {2, 3}, ez2);
  }
  SECTION("dtype promotion and transposed operands") {
    const st::Tensor f = st::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
    require_values(st::matmul(ta, f), {3}, matmul_ref(a, {1, 2, 3, 4}, 3, 4, 1), 1e-12, st::f64);
    const st::Tensor at = st::transpose(tensor(a, {4, 3}), 0, 1);  // [3, 4], strided
    Vec a_t(12);
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t k = 0; k < 4; ++k) a_t[i * 4 + k] = a[k * 3 + i];
    }
    require_values(st::matmul(at, tb), {3, 5}, matmul_ref(a_t, b, 3, 4, 5));
  }
}

TEST_CASE("one_hot, eye, tril and triu", "[diff]") {
  SECTION("one_hot") {
    const st::Tensor idx = st::from_vector(std::vector<int64_t>{2, 0, 3}, {3});
    require_values(st::one_hot(idx, 4), {3, 4}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}, 0, st::f32);
    const st::Tensor idx2 = st::from_vector(std::vector<int32_t>{1, 0, 1, 1}, {2, 2});
    require_values(st::one_hot(idx2, 2, st::f64), {2, 2, 2}, {0, 1, 1, 0, 0, 1, 0, 1}, 0);
  }
  SECTION("eye") {
    require_values(st::eye(3, st::f64), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, 0);
    require_values(st::eye(2), {2, 2}, {1, 0, 0, 1}, 0, st::f32);
  }
  SECTION("tril and triu with offsets") {
    const Vec v = random_values(12, 51);
    const st::Tensor m = tensor(v, {3, 4});
    for (int64_t k : {-2, -1, 0, 1, 2, 5}) {
      INFO("k = " << k);
      Vec lower(12), upper(12);
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          const std::size_t at = std::size_t(i * 4 + j);
          lower[at] = j - i <= k ? v[at] : 0.0;
          upper[at] = j - i >= k ? v[at] : 0.0;
        }
      }
      require_values(st::tril(m, k), {3, 4}, lower, 0);
      require_values(st::triu(m, k), {3, 4}, upper, 0);
    }
    require_values(st::tril(m), {3, 4}, {v[0], 0, 0, 0, v[4], v[5], 0, 0, v[8], v[9], v[10], 0}, 0);
    // Batched: each matrix of [2, 2, 2] separately.
    const st::Tensor batch = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
    require_values(st::triu(batch), {2, 2, 2}, {1, 2, 0, 4, 5, 6, 0, 8}, 0);
    require_values(st::tril(batch, -1), {2, 2, 2}, {0, 0, 3, 0, 0, 0, 7, 0}, 0);
  }
}

TEST_CASE("the exact spelling of DESIGN.md compiles and runs", "[diff]") {
  st::Tensor a = st::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});  // f64
  st::Tensor b = st::from_vector(std::vector<float>{1, 2, 3}, {3});               // f32
  st::Tensor i = st::from_vector(std::vector<int64_t>{2, 0}, {2});                // i64
  st::Tensor z = st::zeros({2, 3});
  st::Tensor o = st::ones({2, 3}, st::f64);
  st::Tensor f = st::full({2}, 1.5, st::f64);
  st::Tensor r = st::arange(0, 10);
  st::Tensor e = st::eye(3, st::f64);
  st::Tensor l = st::linspace(0.0, 1.0, 5, st::f64);
  st::Tensor n = st::randn({3, 4}, /*seed=*/42, st::f64);
  CHECK(a.dtype() == st::f64);
  CHECK(b.dtype() == st::f32);
  CHECK(i.dtype() == st::i64);
  CHECK(z.dtype() == st::f32);
  CHECK(st::zeros({2, 3}, st::f64).dtype() == st::f64);
  CHECK(o.dtype() == st::f64);
  CHECK(f.to_vector<double>() == Vec{1.5, 1.5});
  CHECK(r.dtype() == st::i64);
  CHECK(st::arange(0, 10, 1, st::f32).dtype() == st::f32);
  CHECK(e.shape() == st::Shape{3, 3});
  CHECK(l.to_vector<double>() == Vec{0.0, 0.25, 0.5, 0.75, 1.0});
  CHECK(n.shape() == st::Shape{3, 4});
  CHECK(st::rand({3, 4}, 42).shape() == st::Shape{3, 4});
  CHECK(a.shape() == st::Shape{2, 3});
  CHECK(a.ndim() == 2);
  CHECK(a.numel() == 6);
  CHECK(a.device() == st::testing::test_device());
  std::vector<int64_t> dims(a.shape().begin(), a.shape().end());
  CHECK(dims == std::vector<int64_t>{2, 3});
  std::vector<double> v = a.to_vector<double>();
  CHECK(v == Vec{1, 2, 3, 4, 5, 6});
  double s = st::sum(a).item<double>();
  CHECK(s == 21.0);
  CHECK(a.to(st::f32).dtype() == st::f32);
  bool has_cuda = true;
  st::Tensor on_gpu;
  try {
    on_gpu = a.to(st::Device::cuda(0));
  } catch (const st::DeviceError&) {
    has_cuda = false;  // a build or machine without CUDA: the one allowed failure
  }
  if (has_cuda) CHECK(on_gpu.device() == st::Device::cuda(0));
  std::ostringstream os;
  os << a;
  CHECK_THAT(os.str(), Contains("6"));
  require_values(st::matmul(a, b), {2}, {14, 32});
  require_values(a.matmul(b), {2}, {14, 32});
  require_values(st::sum(a, {0}), {3}, {5, 7, 9});
  require_values(st::sum(a, {1}, /*keepdims=*/true), {2, 1}, {6, 15});
  require_values(st::max(a, {0}), {3}, {4, 5, 6});
  require_values(st::mean(a), {}, {3.5});
  require_values(a.reshape({3, 2}), {3, 2}, {1, 2, 3, 4, 5, 6}, 0);
  require_values(a.permute({1, 0}), {3, 2}, {1, 4, 2, 5, 3, 6}, 0);
  require_values(a.transpose(0, 1), {3, 2}, {1, 4, 2, 5, 3, 6}, 0);
  require_values(st::where(a > 0.0, a, 0.0), {2, 3}, {1, 2, 3, 4, 5, 6}, 0);
  require_values(st::where(a > 3.5, a, 0.0), {2, 3}, {0, 0, 0, 4, 5, 6}, 0);
  require_values(
      st::exp(a), {2, 3},
      {std::exp(1.), std::exp(2.), std::exp(3.), std::exp(4.), std::exp(5.), std::exp(6.)});
  require_values(
      st::tanh(a), {2, 3},
      {std::tanh(1.), std::tanh(2.), std::tanh(3.), std::tanh(4.), std::tanh(5.), std::tanh(6.)});
  require_values(st::sigmoid(a), {2, 3},
                 {sigmoid_ref(1), sigmoid_ref(2), sigmoid_ref(3), sigmoid_ref(4), sigmoid_ref(5),
                  sigmoid_ref(6)});
  const double l1 = lse_ref({1, 2, 3}), l2 = lse_ref({4, 5, 6});
  require_values(st::log_softmax(a, 1), {2, 3}, {1 - l1, 2 - l1, 3 - l1, 4 - l2, 5 - l2, 6 - l2});
  require_values(st::pow(a, 2.5), {2, 3},
                 {1, std::pow(2, 2.5), std::pow(3, 2.5), 32, std::pow(5, 2.5), std::pow(6, 2.5)});
  require_values(st::logsumexp(a, {1}), {2}, {l1, l2});
  require_values(st::pad(a, {{1, 0}, {0, 2}}), {3, 5},
                 {0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0}, 0);
  require_values(st::flip(a, 1), {2, 3}, {3, 2, 1, 6, 5, 4}, 0);
  require_values(st::concat({a, a}, 0), {4, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 0);
  require_values(st::stack({a, a}, 0), {2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 0);
  require_values(a.unsqueeze(0), {1, 2, 3}, v, 0);
  require_values(a.unsqueeze(0).squeeze(0), {2, 3}, v, 0);
  CHECK_THROWS_AS(a.squeeze(0), st::ShapeError);  // axis 0 has size 2
  // Not tested here because they do not exist yet (reported): a.ix/oix/vix,
  // st::slice/all/newaxis/ellipsis/none, st::Index, st::save_safetensors and
  // st::load_safetensors.
}

TEST_CASE("bad inputs throw the right error", "[diff]") {
  const st::Tensor a = st::zeros({2, 3}, st::f64), c = st::ones({4, 3}, st::f64);
  SECTION("shapes that do not broadcast") {
    const std::string msg = message_of<st::ShapeError>([&] { (void)(a + c); });
    CHECK_THAT(msg, Contains("[2, 3]") && Contains("[4, 3]"));
    CHECK_THAT(message_of<st::ShapeError>([&] { (void)(a * c); }), Contains("[2, 3]"));
    CHECK_THROWS_AS(a - c, st::ShapeError);
    CHECK_THROWS_AS(a / c, st::ShapeError);
    CHECK_THROWS_AS(a < c, st::ShapeError);
    CHECK_THROWS_AS(st::maximum(a, c), st::ShapeError);
    CHECK_THROWS_AS(st::where(a > 0.0, a, c), st::ShapeError);
    CHECK_THROWS_AS(st::where(c > 0.0, a, a), st::ShapeError);
    CHECK_THROWS_AS(st::pow(a, c), st::ShapeError);
  }
  SECTION("split sizes that do not add up") {
    const std::string msg = message_of<st::ShapeError>([&] { st::split(a, {1, 1}, 1); });
    CHECK_THAT(msg, Contains("[2, 3]"));
    CHECK_THROWS_AS(st::split(a, {2, 2}, 1), st::ShapeError);
    CHECK_THROWS_AS(st::split(a, {4, -1}, 1), st::ValueError);
    // Sizes whose int64 sum would wrap around to the axis size (3).
    constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
    CHECK_THAT(message_of<st::ShapeError>([&] {
                 st::split(a, {kBig, kBig, 2, 3}, 1);
               }),
               Contains("more than axis 1"));
    CHECK_THROWS_AS(st::split(a, {2, kBig}, 1), st::ShapeError);
  }
  SECTION("squeeze of an axis that is not 1") {
    CHECK_THAT(message_of<st::ShapeError>([&] { st::squeeze(a, 1); }), Contains("[2, 3]"));
    CHECK_THROWS_AS(st::squeeze(a, 2), st::IndexError);
    CHECK_THROWS_AS(st::unsqueeze(a, 4), st::IndexError);
  }
  SECTION("matmul") {
    const st::Tensor s = st::full({}, 2.0, st::f64);
    CHECK_THAT(message_of<st::ShapeError>([&] { st::matmul(s, a); }), Contains("matmul"));
    CHECK_THROWS_AS(st::matmul(a, s), st::ShapeError);
    CHECK_THROWS_AS(st::matmul(a, a), st::ShapeError);  // [2, 3] x [2, 3]
    CHECK_THROWS_AS(st::dot(st::zeros({3}, st::f64), st::zeros({4}, st::f64)), st::ShapeError);
  }
  SECTION("other bad arguments") {
    CHECK_THROWS_AS(st::stack({a, c}, 0), st::ShapeError);
    CHECK_THROWS_AS(st::concat(std::vector<st::Tensor>{}, 0), st::ValueError);
    CHECK_THROWS_AS(st::concat({a, st::zeros({2, 4}, st::f64)}, 0), st::ShapeError);
    CHECK_THROWS_AS(st::tril(st::zeros({3}, st::f64)), st::ShapeError);
    CHECK_THROWS_AS(st::one_hot(a, 3), st::DTypeError);
    CHECK_THROWS_AS(st::one_hot(st::arange(0, 3), -1), st::ValueError);
    CHECK_THROWS_AS(st::sum(a, {2}), st::IndexError);
    CHECK_THROWS_AS(st::mean(a, {-3}), st::IndexError);
    CHECK_THROWS_AS(st::softmax(a, 2), st::IndexError);
    CHECK_THROWS_AS(st::transpose(a, 0, 2), st::IndexError);
    CHECK_THROWS_AS(st::argmax(a, 5), st::IndexError);
  }
}

namespace {

/// Checks t against fn applied to each input, NaN where the reference is NaN.
void require_nan_aware(const st::Tensor& t, const Dims& shape, const Vec& expected) {
  INFO("shape " << t.shape());
  REQUIRE(t.shape() == st::Shape(shape));
  const Vec got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(got[i] == expected[i]);
    } else {
      CHECK(std::abs(got[i] - expected[i]) <= 1e-6 * (1.0 + std::abs(expected[i])));
    }
  }
}

/// fn of every element; NaN in gives NaN out (what fn does with NaN is not trusted).
Vec map_nan(const Vec& x, const std::function<double(double)>& fn) {
  Vec r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = std::isnan(x[i]) ? NAN : fn(x[i]);
  return r;
}

}  // namespace

TEST_CASE("NaN in gives NaN out through every composite built on where or comparisons", "[diff]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vec x = random_values(12, 77);
  x[1] = nan;
  x[6] = nan;
  x[4] = 0.0;
  x[9] = kInf;
  x[10] = -kInf;
  const Dims shape{3, 4};
  for (st::DType dt : {st::f64, st::f32}) {
    INFO("dtype " << st::dtype_name(dt));
    const st::Tensor t = tensor(x, {3, 4}).to(dt);
    {  // elementwise
      require_nan_aware(st::relu(t), shape, map_nan(x, [](double v) { return v > 0 ? v : 0.0; }));
      require_nan_aware(st::clamp(t, -1.0, 0.5), shape,
                        map_nan(x, [](double v) { return std::min(std::max(v, -1.0), 0.5); }));
      require_nan_aware(st::maximum(t, 0.25), shape,
                        map_nan(x, [](double v) { return std::max(v, 0.25); }));
      require_nan_aware(st::minimum(t, 0.25), shape,
                        map_nan(x, [](double v) { return std::min(v, 0.25); }));
      require_nan_aware(st::maximum(0.25, t), shape,
                        map_nan(x, [](double v) { return std::max(v, 0.25); }));
      require_nan_aware(st::abs(t), shape, map_nan(x, [](double v) { return std::abs(v); }));
      require_nan_aware(st::softplus(t), shape, map_nan(x, softplus_ref));
      require_nan_aware(st::sigmoid(t), shape, map_nan(x, sigmoid_ref));
      require_nan_aware(st::silu(t), shape,
                        map_nan(x, [](double v) { return v * sigmoid_ref(v); }));
    }
    {  // reductions and normalisations: a row with a NaN is NaN, the others are not.
      // Rows: {x0..x3} has x1 = NaN, {x4..x7} has x6 = NaN, {x8..x11} has +inf and -inf.
      require_nan_aware(st::max(t, {1}), {3}, {nan, nan, kInf});
      require_nan_aware(st::min(t, {1}), {3}, {nan, nan, -kInf});
      require_nan_aware(st::logsumexp(t, {1}), {3}, {nan, nan, kInf});
      require_nan_aware(st::softmax(t, 1).ix(st::slice(0, 2)), {2, 4}, Vec(8, nan));
      require_nan_aware(st::log_softmax(t, 1).ix(st::slice(0, 2)), {2, 4}, Vec(8, nan));
      // Column 0 holds no NaN or inf: its max and softmax are ordinary numbers.
      const double c0 = std::max({x[0], x[4], x[8]});
      require_nan_aware(st::max(t.ix(st::all, 0), {0}), {}, {c0});
    }
  }
}

TEST_CASE("softmax, log_softmax and logsumexp over an empty axis", "[diff]") {
  const st::Tensor e = st::zeros({3, 0}, st::f64);
  // An empty axis: softmax and log_softmax are empty of the same shape (NumPy,
  // PyTorch, JAX); logsumexp is the log of an empty sum, -inf.
  require_values(st::softmax(e, 1), {3, 0}, {});
  require_values(st::log_softmax(e, 1), {3, 0}, {});
  require_values(st::logsumexp(e, {1}), {3}, {-kInf, -kInf, -kInf});
  require_values(st::logsumexp(e, {1}, true), {3, 1}, {-kInf, -kInf, -kInf});
  require_values(st::logsumexp(st::zeros({0}, st::f64)), {}, {-kInf});
  // Empty along another axis: every row there is, is empty too.
  const st::Tensor r = st::zeros({0, 3}, st::f64);
  require_values(st::softmax(r, 1), {0, 3}, {});
  require_values(st::log_softmax(r, 1), {0, 3}, {});
  require_values(st::logsumexp(r, {1}), {0}, {});
  require_values(st::softmax(r, 0), {0, 3}, {});
  require_values(st::logsumexp(r, {0}), {3}, {-kInf, -kInf, -kInf});
  // Their derivatives are empty (or zero) too, not an error.
  const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::softmax(x, 1)); }, e);
  CHECK(g.shape() == st::Shape{3, 0});
}

TEST_CASE("errors of softmax, log_softmax, logsumexp, min, var and std name that op", "[diff]") {
  const st::Tensor a = tensor(random_values(6, 5), {2, 3});
  const st::Tensor s = st::full({}, 2.0, st::f64);
  using Catch::Matchers::StartsWith;
  CHECK_THAT(message_of<st::IndexError>([&] { st::softmax(s, 0); }), StartsWith("softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::log_softmax(s, 0); }),
             StartsWith("log_softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::softmax(a, 2); }), StartsWith("softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::log_softmax(a, -3); }),
             StartsWith("log_softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::logsumexp(a, {2}); }), StartsWith("logsumexp:"));
  const std::string repeated = message_of<st::IndexError>([&] { st::logsumexp(a, {1, -1}); });
  CHECK_THAT(repeated, StartsWith("logsumexp:"));
  CHECK_THAT(repeated, Contains("repeated"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::min(a, {3}); }), StartsWith("min:"));
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::min(st::zeros({2, 0}, st::f64), {1});
             }),
             StartsWith("min:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::var(a, {2}); }), StartsWith("var:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::std(a, {-3}); }), StartsWith("std:"));
}
