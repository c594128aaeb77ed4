// SPDX-License-Identifier: MIT
// The NaN-safe gradient rule of ad/rules/elementwise.hpp: a tangent or
// cotangent that is exactly zero contributes exactly zero, even through an
// infinite or NaN local derivative. The four cases below give NaN in JAX and
// PyTorch; here each is finite and right, in reverse and forward mode and at
// second order. Expected values are the one-sided calculus, written out.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::doubles;
using st::testing::f64s;
using st::testing::prims_of;

namespace {

bool all_finite(const st::Tensor& t) {
  for (double v : doubles(t)) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("NaN-safe gradients: a where's unselected branch does not poison", "[ad]") {
  SECTION("sum(where(x > 0, sqrt(x), 0)) at 0") {
    auto f = [](const auto& x) { return st::sum(st::where(x > 0, st::sqrt(x), 0)); };
    const st::Tensor x = f64s({0.0, 4.0, -1.0, 0.25}, {4});
    CHECK(doubles(st::grad(f, x)) == std::vector<double>{0.0, 0.25, 0.0, 1.0});
    // Forward mode: a unit tangent at 0 meets d sqrt = inf in the branch where drops.
    const auto [y, t] = st::jvp(f, x, f64s({1, 0, 0, 0}, {4}));
    CHECK(doubles(t) == std::vector<double>{0.0});
    // Second order: the Hessian's diagonal is finite (-1/4 x^-3/2 where x > 0, else 0).
    const st::Tensor h = st::hessian(f, x);
    REQUIRE(all_finite(h));
    CHECK(doubles(h)[5] == Approx(-0.25 * std::pow(4.0, -1.5)));
    CHECK(doubles(h)[0] == 0.0);
  }
  SECTION("where(x != 0, sin(x) / x, 1) at 0 (sinc)") {
    auto f = [](const auto& x) { return st::sum(st::where(x != 0, st::sin(x) / x, 1)); };
    const st::Tensor x = f64s({0.0, 0.5}, {2});
    const std::vector<double> g = doubles(st::grad(f, x));
    CHECK(g[0] == 0.0);  // sinc'(0) = 0
    CHECK(g[1] == Approx((std::cos(0.5) * 0.5 - std::sin(0.5)) / 0.25));
    REQUIRE(all_finite(st::hessian(f, x)));
  }
  SECTION("norm(x) at x = 0: the subgradient 0") {
    auto f = [](const auto& x) { return st::norm(x); };
    const st::Tensor z = f64s({0.0, 0.0, 0.0}, {3});
    CHECK(doubles(st::grad(f, z)) == std::vector<double>{0.0, 0.0, 0.0});
    const std::vector<double> gx = doubles(st::grad(f, f64s({3.0, 0.0, -4.0}, {3})));
    CHECK(gx[0] == Approx(0.6));
    CHECK(gx[1] == 0.0);
    CHECK(gx[2] == Approx(-0.8));
    // Over an axis: a zero row gets 0, a nonzero row x / |x|.
    auto g = [](const auto& x) { return st::sum(st::norm(x, 1)); };
    const st::Tensor m = f64s({0.0, 0.0, 3.0, 4.0}, {2, 2});
    const std::vector<double> gm = doubles(st::grad(g, m));
    CHECK(gm[0] == 0.0);
    CHECK(gm[1] == 0.0);
    CHECK(gm[2] == Approx(0.6));
    CHECK(gm[3] == Approx(0.8));
  }
  SECTION("where(x > 0, log(x), 0) at negative x and at 0") {
    auto f = [](const auto& x) { return st::sum(st::where(x > 0, st::log(x), 0)); };
    const st::Tensor x = f64s({-2.0, 0.0, 2.0}, {3});
    CHECK(doubles(st::grad(f, x)) == std::vector<double>{0.0, 0.0, 0.5});
    REQUIRE(all_finite(st::hessian(f, x)));
  }
}

TEST_CASE("NaN-safe gradients: a nonzero cotangent still meets the infinity", "[ad]") {
  // Only an exactly-zero contribution is forced to zero: d sqrt(x) at 0 is +inf,
  // and a NaN input still gives a NaN gradient.
  const st::Tensor g =
      st::grad([](const auto& x) { return st::sum(st::sqrt(x)); }, f64s({0.0, 1.0}, {2}));
  CHECK(doubles(g)[0] == std::numeric_limits<double>::infinity());
  CHECK(doubles(g)[1] == 0.5);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const st::Tensor gn =
      st::grad([](const auto& x) { return st::sum(st::exp(x)); }, f64s({nan, 0.0}, {2}));
  CHECK(std::isnan(doubles(gn)[0]));
  CHECK(doubles(gn)[1] == 1.0);
  // relu passes NaN on (its derivative there is 1, as in PyTorch).
  const st::Tensor r = st::relu(f64s({nan, -1.0, 2.0}, {3}));
  CHECK(std::isnan(doubles(r)[0]));
}

TEST_CASE("safe_mul and safe_div: the primitives the rules multiply with", "[ad]") {
  const st::Tensor a = st::testing::nonzero({2, 3}, 31), b = st::testing::nonzero({2, 3}, 32);
  // Away from a == 0 they are a * b and a / b, with the same derivatives to order 3.
  check_grads<3>(
      [](const auto& a, const auto& b) {
        return prims_of<decltype(a)>::binary(st::BinaryOp::safe_mul, a, b);
      },
      {a, b});
  check_grads<3>(
      [](const auto& a, const auto& b) {
        return prims_of<decltype(a)>::binary(st::BinaryOp::safe_div, a, b);
      },
      {a, b});
  // At a == 0 the result is 0 whatever b is.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const st::Tensor z = f64s({0.0, 0.0, 0.0, 2.0}, {4}), w = f64s({inf, nan, 0.0, inf}, {4});
  const std::vector<double> m = doubles(prims_of<st::Tensor>::binary(st::BinaryOp::safe_mul, z, w));
  CHECK(m[0] == 0.0);
  CHECK(m[1] == 0.0);
  CHECK(m[2] == 0.0);
  CHECK(m[3] == inf);
  // Symmetric: a zero second operand wins over an infinite or NaN first one.
  const std::vector<double> m2 =
      doubles(prims_of<st::Tensor>::binary(st::BinaryOp::safe_mul, w, z));
  CHECK(m2 == std::vector<double>{0.0, 0.0, 0.0, inf});
  const std::vector<double> d = doubles(prims_of<st::Tensor>::binary(st::BinaryOp::safe_div, z, w));
  CHECK(d[0] == 0.0);
  CHECK(d[1] == 0.0);
  CHECK(d[2] == 0.0);  // 0 / 0
  CHECK(d[3] == 0.0);  // 2 / inf
}
