// SPDX-License-Identifier: MIT
// PyTorch's and NumPy's semantics at the edges, each case one that a differential run of
// strata against torch 1.13 and numpy 1.24 found different: integer extremes, signed zeros,
// the negative tails of sigmoid and softplus, the dtypes of clamp, cumsum and tril, exact
// integer scalars, 0-d tensors in promotion, argument checks of stack and one_hot, logical
// ops on numbers, f32 variance far from 0, and errors that name the op called. The
// references are exact values or long double evaluations of the definitions.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <strata.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/message_of.hpp"

namespace st = strata;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using st::testing::message_of;

namespace {
template <class T>
st::Tensor vec(std::vector<T> v) {
  const auto n = int64_t(v.size());
  return st::from_vector(std::move(v), {n});
}
}  // namespace

TEST_CASE("min is exact at the integer extremes and defined for bool", "[diff]") {
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  const int32_t lo32 = std::numeric_limits<int32_t>::min();
  const int64_t hi64 = std::numeric_limits<int64_t>::max();
  CHECK(st::min(vec<int64_t>({lo64, 0, 5})).item<int64_t>() == lo64);
  CHECK(st::min(vec<int32_t>({7, lo32, 0})).item<int32_t>() == lo32);
  CHECK(st::min(vec<int64_t>({hi64, hi64})).item<int64_t>() == hi64);
  const st::Tensor m = st::from_vector(std::vector<int64_t>{3, lo64, hi64, -1}, {2, 2});
  CHECK(st::min(m, {1}).to_vector<int64_t>() == std::vector<int64_t>{lo64, -1});
  CHECK(st::min(m, {0}, true).to_vector<int64_t>() == std::vector<int64_t>{3, lo64});
  const st::Tensor b = vec<bool>({false, true});
  CHECK(st::min(b).dtype() == st::bool_);
  CHECK_FALSE(st::min(b).item<bool>());
  CHECK(st::min(vec<bool>({true, true})).item<bool>());
  CHECK(st::max(b).item<bool>());
}

TEST_CASE("abs clears the sign of -0", "[diff]") {
  for (const st::DType t : {st::f32, st::f64}) {
    // 1000 elements: the vector kernel; one element: the scalar functor.
    for (const int64_t n : {int64_t{1}, int64_t{1000}}) {
      const std::vector<double> a = st::abs(st::full({n}, -0.0, t)).to(st::f64).to_vector<double>();
      for (const double v : a) CHECK_FALSE(std::signbit(v));
      const double inv = (1.0 / st::abs(st::full({n}, -0.0, t))).to(st::f64).to_vector<double>()[0];
      CHECK(inv == std::numeric_limits<double>::infinity());
    }
  }
}

TEST_CASE("sigmoid, silu and softplus keep their accuracy in the negative tail", "[diff]") {
  auto sigmoid_ref = [](double x) { return double(1.0L / (1.0L + std::exp(-(long double)x))); };
  auto softplus_ref = [](double x) {
    return double(x > 0 ? x + std::log1p(std::exp(-(long double)x))
                        : std::log1p(std::exp((long double)x)));
  };
  const std::vector<double> xs = {-700.0, -200.0, -40.0, -37.0, -20.0,
                                  -10.0,  -1e-3,  0.0,   3.0,   40.0};
  const st::Tensor x = vec(xs);
  const std::vector<double> s = st::sigmoid(x).to_vector<double>();
  const std::vector<double> u = st::silu(x).to_vector<double>();
  const std::vector<double> p = st::softplus(x).to_vector<double>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    INFO("x = " << xs[i]);
    CHECK(s[i] == Approx(sigmoid_ref(xs[i])).epsilon(1e-14).margin(0));
    CHECK(u[i] == Approx(xs[i] * sigmoid_ref(xs[i])).epsilon(1e-14).margin(0));
    CHECK(p[i] == Approx(softplus_ref(xs[i])).epsilon(1e-14).margin(0));
  }
  // f32 down to where the value is still a normal float.
  const std::vector<float> xf = {-80.0f, -20.0f, -16.0f, -10.0f, 5.0f};
  const std::vector<float> sf = st::sigmoid(vec(xf)).to_vector<float>();
  const std::vector<float> pf = st::softplus(vec(xf)).to_vector<float>();
  for (std::size_t i = 0; i < xf.size(); ++i) {
    INFO("x = " << xf[i]);
    CHECK(double(sf[i]) == Approx(sigmoid_ref(xf[i])).epsilon(1e-6).margin(0));
    CHECK(double(pf[i]) == Approx(softplus_ref(xf[i])).epsilon(1e-6).margin(0));
  }
  // Where e^-x overflows, the value and its derivative are 0, not NaN.
  const st::Tensor far = st::full({1}, -1000.0, st::f64);
  CHECK(st::sigmoid(far).item<double>() == 0.0);
  const double g =
      st::grad([](const auto& v) { return st::sum(st::sigmoid(v)); }, far).item<double>();
  CHECK(g == 0.0);
  const double h =
      st::hessian([](const auto& v) { return st::sum(st::sigmoid(v)); }, far).item<double>();
  CHECK(h == 0.0);
}

TEST_CASE("clamp promotes with its bounds as torch.clamp", "[diff]") {
  const st::Tensor i = vec<int64_t>({-3, 0, 7, 123456789});
  const st::Tensor c = st::clamp(i, 0, 1000000000);  // integer bounds: stays i64, exactly
  CHECK(c.dtype() == st::i64);
  CHECK(c.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 7, 123456789});
  const st::Tensor f = st::clamp(i, -0.5, 6.5);  // floating bounds: f32, as torch's float32
  CHECK(f.dtype() == st::f32);
  CHECK(f.to_vector<float>() == std::vector<float>{-0.5f, 0.0f, 6.5f, 6.5f});
  const st::Tensor i32 = vec<int32_t>({-5, 5});
  CHECK(st::clamp(i32, int64_t{-7}, 2).dtype() == st::i32);
  CHECK(st::clamp(i32, int64_t{-7}, 2).to_vector<int32_t>() == std::vector<int32_t>{-5, 2});
  CHECK(st::clamp(vec<double>({-2.0, 2.0}), -1, 1).dtype() == st::f64);
  // lo > hi: hi everywhere, as min(max(x, lo), hi).
  CHECK(st::clamp(vec<double>({0.0, 2.0, 5.0}), 3.0, 1.0).to_vector<double>() ==
        std::vector<double>{1, 1, 1});
  CHECK(std::isnan(st::clamp(vec<double>({std::nan("")}), 0.0, 1.0).item<double>()));
}

TEST_CASE("clamp's derivative is 1 at its bounds, as torch.clamp's", "[diff]") {
  const st::Tensor x = vec<double>({-1.0, 2.0, 0.5, -3.0, 5.0});
  auto f = [](const auto& v) { return st::sum(st::clamp(v, -1.0, 2.0)); };
  const std::vector<double> want = {1, 1, 1, 0, 0};
  CHECK(st::grad(f, x).to_vector<double>() == want);
  CHECK(st::jacfwd(f, x).to_vector<double>() == want);
  auto g = [](const auto& v) { return st::sum(st::clamp(v, 1.0, 1.0)); };
  CHECK(st::grad(g, vec<double>({1.0})).item<double>() == 1.0);
  // d^2/dx^2 of clamp(x) * x is 2 inside the bounds (their points included), 0 outside.
  auto h = [](const auto& v) { return st::sum(st::clamp(v, -1.0, 2.0) * v); };
  const std::vector<double> hd = st::diagonal(st::hessian(h, x)).to_vector<double>();
  CHECK(hd == std::vector<double>{2, 2, 2, 0, 0});
}

TEST_CASE("std's derivatives at a constant input are 0, not NaN", "[diff]") {
  const st::Tensor x = vec<double>({2.0, 2.0, 2.0});
  auto f = [](const auto& v) { return st::std(v); };
  CHECK(st::grad(f, x).to_vector<double>() == std::vector<double>{0, 0, 0});
  for (const double v : st::hessian(f, x).to_vector<double>()) CHECK(v == 0.0);
  // Elsewhere the usual (x - mean) / (n std).
  const std::vector<double> g = st::grad(f, vec<double>({1.0, 2.0, 3.0})).to_vector<double>();
  const double s = std::sqrt(2.0 / 3.0);
  CHECK(g[0] == Approx(-1.0 / (3 * s)));
  CHECK(g[2] == Approx(1.0 / (3 * s)));
}

TEST_CASE("integer C++ scalars beyond 2^53 stay exact", "[diff]") {
  const int64_t big = 9007199254740993;  // 2^53 + 1: no double holds it
  CHECK(st::add(vec<int64_t>({0}), big).item<int64_t>() == big);
  CHECK((vec<int64_t>({big}) == big).item<bool>());
  CHECK((vec<int64_t>({1}) * int64_t{4611686018427387903}).item<int64_t>() == 4611686018427387903);
  CHECK((big - vec<int64_t>({1})).item<int64_t>() == big - 1);
  // A float tensor still rounds the number as a double would.
  CHECK((vec<double>({0.0}) + big).item<double>() == double(big));
}

TEST_CASE("a 0-d tensor promotes like torch.result_type", "[diff]") {
  const st::Tensor f32 = vec<float>({1, 2});
  const st::Tensor i64 = vec<int64_t>({1, 2});
  const st::Tensor i32 = vec<int32_t>({1, 2});
  const st::Tensor d0 = st::full({}, 1.5, st::f64);
  CHECK((f32 + d0).dtype() == st::f32);
  CHECK((d0 * f32).dtype() == st::f32);
  CHECK((i64 + st::full({}, 1.5, st::f32)).dtype() == st::f32);
  CHECK((i32 + d0).dtype() == st::f64);
  CHECK((i32 + st::full({}, 5, st::i64)).dtype() == st::i32);
  CHECK((vec<bool>({true}) + st::full({}, 5, st::i32)).dtype() == st::i32);
  CHECK((st::full({}, 1.0, st::f32) + d0).dtype() == st::f64);  // both 0-d: as usual
  CHECK(st::where(vec<bool>({true, false}), f32, d0).dtype() == st::f32);
  CHECK((f32 + d0).to_vector<float>() == std::vector<float>{2.5f, 3.5f});
}

TEST_CASE("cumsum and cumprod of i32 and bool give i64", "[diff]") {
  const st::Tensor s = st::cumsum(vec<int32_t>({2147483647, 1}), 0);
  CHECK(s.dtype() == st::i64);
  CHECK(s.to_vector<int64_t>() == std::vector<int64_t>{2147483647, 2147483648});
  const st::Tensor p = st::cumprod(vec<int32_t>({65536, 65536}));
  CHECK(p.dtype() == st::i64);
  CHECK(p.to_vector<int64_t>() == std::vector<int64_t>{65536, 4294967296});
  CHECK(st::cumsum(vec<bool>({true, true})).dtype() == st::i64);
  CHECK(st::cumsum(vec<float>({1, 2})).dtype() == st::f32);
}

TEST_CASE("tril and triu keep bool", "[diff]") {
  const st::Tensor m = st::full({3, 3}, 1.0, st::bool_);
  const st::Tensor l = st::tril(m), u = st::triu(m, 1);
  CHECK(l.dtype() == st::bool_);
  CHECK(u.dtype() == st::bool_);
  CHECK(l.to_vector<bool>() ==
        std::vector<bool>{true, false, false, true, true, false, true, true, true});
  CHECK(u.to_vector<bool>() ==
        std::vector<bool>{false, true, true, false, false, true, false, false, false});
}

TEST_CASE("pad with a value keeps the interior's bits", "[diff]") {
  const std::vector<double> p =
      st::pad(vec<double>({-0.0, 2.0}), {{1, 1}}, 3.0).to_vector<double>();
  REQUIRE(p.size() == 4);
  CHECK(p[0] == 3.0);
  CHECK(std::signbit(p[1]));
  CHECK(p[2] == 2.0);
  CHECK(p[3] == 3.0);
  const st::Tensor b = st::pad(vec<bool>({false}), {{1, 1}}, 1.0);
  CHECK(b.dtype() == st::bool_);
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, true});
  // -0.0 pads with -0.0 (numpy.pad, torch's pad).
  const std::vector<double> z = st::pad(vec<double>({1.0}), {{1, 0}}, -0.0).to_vector<double>();
  CHECK((z[0] == 0.0 && std::signbit(z[0])));
}

TEST_CASE("stack checks its axis against the result's rank", "[diff]") {
  const st::Tensor a = st::zeros({2, 3});
  CHECK(st::stack({a, a}, -3).shape() == st::Shape{2, 2, 3});
  CHECK(st::stack({a, a}, 2).shape() == st::Shape{2, 3, 2});
  CHECK_THAT(message_of<st::IndexError>([&] {
               (void)st::stack({a, a}, -4);
             }),
             Contains("stack") && Contains("-4"));
  CHECK_THAT(message_of<st::IndexError>([&] {
               (void)st::stack({a, a}, 3);
             }),
             Contains("stack") && Contains("3"));
}

TEST_CASE("one_hot rejects positions outside [0, n)", "[diff]") {
  CHECK(st::one_hot(vec<int64_t>({0, 2}), 3).to_vector<float>() ==
        std::vector<float>{1, 0, 0, 0, 0, 1});
  CHECK_THAT(message_of<st::IndexError>([&] {
               (void)st::one_hot(vec<int64_t>({0, 3}), 3);
             }),
             Contains("one_hot") && Contains("3 is out of range [0, 3)"));
  CHECK_THAT(message_of<st::IndexError>([&] { (void)st::one_hot(vec<int32_t>({-1}), 3); }),
             Contains("-1 is out of range"));
  // The type's minimum is out of range too (a min through negation would wrap to it).
  CHECK_THROWS_AS(st::one_hot(vec<int64_t>({std::numeric_limits<int64_t>::min()}), 3),
                  st::IndexError);
}

TEST_CASE("logical ops count any non-zero number as true", "[diff]") {
  CHECK(st::logical_not(vec<int64_t>({0, 3})).to_vector<bool>() == std::vector<bool>{true, false});
  const st::Tensor nan = vec<double>({0.0, 2.0, std::nan("")});
  CHECK(st::logical_and(nan, vec<double>({1.0, 1.0, 1.0})).to_vector<bool>() ==
        std::vector<bool>{false, true, true});
  CHECK(st::logical_or(vec<int32_t>({0, 0}), vec<bool>({false, true})).to_vector<bool>() ==
        std::vector<bool>{false, true});
}

TEST_CASE("f32 variance far from 0 is accurate", "[diff]") {
  std::vector<float> v(1000);
  long double mean = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = 1000.0f + float(i % 7) * 0.001f;
    mean += v[i];
  }
  mean /= v.size();
  long double exact = 0;
  for (const float x : v) exact += (x - mean) * (x - mean);
  exact /= v.size();
  CHECK(double(st::var(vec(v)).item<float>()) == Approx(double(exact)).epsilon(1e-4));
  // Constant data: exactly 0, never a negative rounding (sqrt would give NaN).
  CHECK(st::var(st::full({5}, 1000.1, st::f32)).item<float>() == 0.0f);
  CHECK(st::std(st::full({7}, 0.1, st::f64)).item<double>() == 0.0);
}

TEST_CASE("errors name the op that was called", "[diff]") {
  const st::Tensor a = st::zeros({2, 3});
  CHECK_THAT(message_of<st::IndexError>([&] {
               (void)st::mean(a, {1, 1});
             }),
             Contains("mean") && Contains("repeated"));
  CHECK_THAT(message_of<st::IndexError>([&] { (void)st::flip(st::full({}, 1.0), 0); }),
             StartsWith("flip"));
  st::Tensor m = st::eye(2, st::f64);
  m = m + st::from_vector(std::vector<double>{0, std::nan(""), 0, 0}, {2, 2});
  for (auto [name, fn] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"det", [&] { (void)st::linalg::det(m); }},
           {"slogdet", [&] { (void)st::linalg::slogdet(m); }},
           {"inv", [&] { (void)st::linalg::inv(m); }},
           {"solve", [&] { (void)st::linalg::solve(m, st::ones({2}, st::f64)); }}}) {
    INFO(name);
    CHECK_THAT(message_of<st::LinAlgError>(fn), StartsWith(name + ": ") && Contains("NaN"));
  }
}

TEST_CASE("diagonal takes any offset, the most negative included", "[diff]") {
  const st::Tensor m = st::reshape(st::arange(9, st::f64), {3, 3});
  CHECK(st::diagonal(m, INT64_MIN).numel() == 0);
  CHECK(st::diagonal(m, INT64_MAX).numel() == 0);
  CHECK(st::diagonal(m, -2).to_vector<double>() == std::vector<double>{6});
}

TEST_CASE("pad under vmap names the example's shape", "[diff]") {
  const st::Tensor xs = st::ones({5, 3});
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)st::vmap([](const auto& x) { return st::pad(x, {{1, 1}, {0, 0}}); })(xs);
             }),
             Contains("2 (before, after) pairs") && Contains("shape [3]"));
}
