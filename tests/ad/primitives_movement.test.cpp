// SPDX-License-Identifier: MIT
// Derivative tests of the copying movement primitives (pad, concat, cast):
// check_grads against f64 finite differences up to order 3. Linear
// primitives are wrapped in sin so that their second and third derivatives
// are not trivially zero.
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

TEST_CASE("primitive derivatives: pad, concat and cast", "[ad]") {
  SECTION("pad") {
    const st::Tensor x = normal({2, 3}, 57);
    check_grads<3>([](const auto& x) { return st::sin(st::pad(x, {{1, 0}, {0, 2}})); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::pad(x, {{0, 0}, {2, 1}})); }, {x});
  }
  SECTION("concat") {
    const st::Tensor a = normal({2, 3}, 58), b = normal({2, 2}, 59), c = normal({3, 2}, 62);
    check_grads<3>(
        [](const auto& a, const auto& b) {
          return st::sin(st::concat({a, b}, 1));
        },
        {a, b});
    check_grads<2>(
        [](const auto& a, const auto& b) {
          return st::sin(st::concat({b, a}, -1));
        },
        {a, b});
    // Three pieces, one of them a transposed view, one argument used twice.
    check_grads<3>(
        [](const auto& a, const auto& c) {
          return st::sin(st::concat({a, st::permute(c, {1, 0}), a * 2.0}, 0));
        },
        {a, c});
  }
  SECTION("cast f64 -> f32 -> f64") {
    // The round trip through f32 limits the accuracy of both the values and
    // the derivatives: a larger step and tolerance.
    GradCheckOptions o;
    o.eps = 1e-2;
    o.tol = o.tol_higher = 2e-3;
    auto f = [](const auto& x) { return st::cast(st::sin(st::cast(x, st::f32)), st::f64) * x; };
    check_grads<3>(f, {normal({2, 3}, 60)}, Modes::both, o);
    const st::Tensor x = normal({4}, 61);
    auto [y, dy] = st::jvp([](const auto& x) { return st::cast(st::cast(x, st::f32), st::f64); }, x,
                           st::ones({4}, st::f64));
    CHECK(dy.dtype() == st::f64);
    CHECK(dy.to_vector<double>() == std::vector<double>(4, 1.0));
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::cast(x, st::f32)); }, x);
    CHECK(g.dtype() == st::f64);
    CHECK(g.to_vector<double>() == std::vector<double>(4, 1.0));
  }
}
