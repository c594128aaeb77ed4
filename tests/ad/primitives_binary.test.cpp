// SPDX-License-Identifier: MIT
// Derivative tests of the binary primitives and where (rules in ad/rules.hpp):
// check_grads against f64 finite differences up to order 3, and the tie
// conventions of maximum/minimum and max (split evenly, like JAX).
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <strata.hpp>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::check_grads_error;
using st::testing::f64s;
using st::testing::GradCheckOptions;
using st::testing::i64s;
using st::testing::Modes;
using st::testing::nonzero;
using st::testing::normal;
using st::testing::positive;
using st::testing::prims_of;
TEST_CASE("primitive derivatives: binary", "[ad]") {
  const st::Tensor a = normal({2, 3}, 21), b = normal({2, 3}, 22);
  SECTION("add") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(a + b); }, {a, b});
  }
  SECTION("sub") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(a - b); }, {a, b});
  }
  SECTION("mul") {
    check_grads<3>([](const auto& a, const auto& b) { return a * b; }, {a, b});
    check_grads<3>([](const auto& a) { return a * a * a; }, {a});
  }
  SECTION("div") {
    check_grads<3>([](const auto& a, const auto& b) { return a / b; }, {a, nonzero({2, 3}, 23)});
  }
  SECTION("pow") {
    check_grads<3>([](const auto& a, const auto& b) { return st::pow(a, b); },
                   {positive({2, 3}, 24), b});
  }
  SECTION("maximum") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::maximum(a, b)); }, {a, b});
  }
  SECTION("minimum") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::minimum(a, b)); }, {a, b});
  }
}

TEST_CASE("primitive derivatives: where", "[ad]") {
  const st::Tensor a = normal({2, 3}, 31), b = normal({2, 3}, 32);
  const st::Tensor cond = normal({2, 3}, 33) > 0.0;
  check_grads<3>([cond](const auto& a, const auto& b) { return st::sin(st::where(cond, a, b)); },
                 {a, b});
  check_grads<3>([cond](const auto& a) { return st::sin(st::where(cond, a * a, 0.5)); }, {a});
}

TEST_CASE("ties split the derivative evenly, like JAX", "[ad]") {
  const st::Tensor x = f64s({1.5, -2, 0.25, 3}, {4});
  const st::Tensor y = f64s({1.5, -2, 0.25, 3}, {4});  // equal values, a separate tensor
  const st::Tensor ones = st::ones({4}, st::f64), zeros = st::zeros({4}, st::f64);
  const std::vector<double> half(4, 0.5), one(4, 1.0);
  SECTION("maximum and minimum at x == y: 0.5 to each operand") {
    auto fmax = [](const auto& a, const auto& b) { return st::sum(st::maximum(a, b)); };
    auto fmin = [](const auto& a, const auto& b) { return st::sum(st::minimum(a, b)); };
    for (int k = 0; k < 2; ++k) {
      auto [ga, gb] = k == 0 ? st::grad(fmax, x, y) : st::grad(fmin, x, y);
      CHECK(ga.to_vector<double>() == half);
      CHECK(gb.to_vector<double>() == half);
    }
    // Forward mode: the tangent of one operand gives half of itself.
    auto fm = [](const auto& ab) { return st::maximum(ab[0], ab[1]); };
    auto [m, dm] = st::jvp(fm, std::vector<st::Tensor>{x, y}, std::vector<st::Tensor>{ones, zeros});
    CHECK(dm.to_vector<double>() == half);
    auto [n, dn] = st::jvp(fm, std::vector<st::Tensor>{x, y}, std::vector<st::Tensor>{ones, ones});
    CHECK(dn.to_vector<double>() == one);
  }
  SECTION("maximum(x, x) and minimum(x, x) have derivative 1") {
    CHECK(
        st::grad([](const auto& a) { return st::sum(st::maximum(a, a)); }, x).to_vector<double>() ==
        one);
    CHECK(
        st::grad([](const auto& a) { return st::sum(st::minimum(a, a)); }, x).to_vector<double>() ==
        one);
    auto [v, dv] = st::jvp([](const auto& a) { return st::maximum(a, a); }, x, ones);
    CHECK(dv.to_vector<double>() == one);
  }
  SECTION("ties at some positions only") {
    const st::Tensor b = f64s({1.5, 0, 0.25, 4}, {4});
    auto [ga, gb] =
        st::grad([](const auto& a, const auto& b) { return st::sum(st::maximum(a, b)); }, x, b);
    CHECK(ga.to_vector<double>() == std::vector<double>{0.5, 0, 0.5, 0});
    CHECK(gb.to_vector<double>() == std::vector<double>{0.5, 1, 0.5, 1});
  }
  SECTION("max over an axis with equal maxima: an equal share to each") {
    const st::Tensor t = f64s({1, 3, 3, 2, 0, 1, 5, 5, 5}, {3, 3});
    const std::vector<double> expected{0, 0.5, 0.5, 1, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    auto f = [](const auto& t) { return st::sum(st::max(t, {1})); };
    CHECK(st::grad(f, t).to_vector<double>() == expected);
    auto fk = [](const auto& t) { return st::sum(st::max(t, {1}, true)); };
    CHECK(st::grad(fk, t).to_vector<double>() == expected);
    // The Jacobian of the row maxima, forward and reverse: shape [3] ++ [3, 3].
    auto rows = [](const auto& t) { return st::max(t, {1}); };
    const std::vector<double> jac{0, 0.5, 0.5, 0, 0, 0, 0,       0,       0,  //
                                  0, 0,   0,   1, 0, 0, 0,       0,       0,  //
                                  0, 0,   0,   0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    const st::Tensor jf = st::jacfwd(rows, t), jr = st::jacrev(rows, t);
    CHECK(jf.shape() == st::Shape{3, 3, 3});
    CHECK(jf.to_vector<double>() == jac);
    CHECK(jr.to_vector<double>() == jac);
    // Over every element: two global maxima among 9 values... here three (the 5s).
    const std::vector<double> all{0, 0, 0, 0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    CHECK(st::grad([](const auto& t) { return st::max(t); }, t).to_vector<double>() == all);
    auto [v, dv] =
        st::jvp([](const auto& t) { return st::max(t, {0}); }, t, st::ones({3, 3}, st::f64));
    CHECK(dv.to_vector<double>() == std::vector<double>{1, 1, 1});
  }
  SECTION("the tie rule is itself differentiable: second derivatives at a tie") {
    // d/dx sum(maximum(x^2, y^2)) at x == y is 0.5 * 2x; its derivative is 1 (0.5 * 2).
    auto f = [](const auto& a) { return st::sum(st::maximum(a * a, st::stop_gradient(a) * a)); };
    const st::Tensor h = st::hessian(f, x);
    const std::vector<double> hv = h.to_vector<double>();
    // maximum(a^2, c a) with c = a: ties everywhere; d/da = 0.5 (2a) + 0.5 c = 1.5 a,
    // so the Hessian is diag(0.5 * 2) = diag(1) (c is a constant).
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 4; ++j) CHECK(hv[i * 4 + j] == (i == j ? 1.0 : 0.0));
    }
  }
}
