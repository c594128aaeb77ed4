// SPDX-License-Identifier: MIT
// Derivative tests of the view primitives (permute, expand, reshape, slice,
// flip):
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

TEST_CASE("primitive derivatives: views", "[ad]") {
  SECTION("permute") {
    check_grads<3>(
        [](const auto& x) {
          return st::sin(st::permute(x, {2, 0, 1}));
        },
        {normal({2, 3, 2}, 51)});
  }
  SECTION("expand: the gradient sums back to the input shape") {
    const st::Tensor x = normal({3, 1}, 52);
    auto f = [](const auto& x) { return st::sin(st::expand(x, {2, 3, 4})); };
    check_grads<3>(f, {x});
    auto g = st::grad([&f](const auto& x) { return st::sum(f(x)); }, x);
    CHECK(g.shape() == st::Shape{3, 1});
    // d/dx sum(sin(broadcast x)) = 8 cos(x) (2 * 4 copies of each element).
    const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) CHECK(gv[i] == Approx(8 * std::cos(xv[i])).epsilon(1e-12));
    check_grads<3>([](const auto& x) { return st::sin(st::expand(x, {3, 4})); }, {normal({4}, 53)});
  }
  SECTION("reshape") {
    const st::Tensor x = normal({2, 3}, 54);
    check_grads<3>([](const auto& x) { return st::sin(st::reshape(x, {3, 2})); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::reshape(x, {-1})); }, {x});
    // A non-contiguous input: reshape has to copy.
    check_grads<3>(
        [](const auto& x) {
          return st::sin(st::reshape(st::permute(x, {1, 0}), {6}));
        },
        {x});
  }
  SECTION("slice with steps and negative steps") {
    const st::Tensor x = normal({3, 5}, 55);
    check_grads<3>([](const auto& x) { return st::sin(st::slice(x, 1, 0, 5, 2)); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::slice(x, 1, 4, std::nullopt, -2)); },
                   {x});
    check_grads<2>([](const auto& x) { return st::sin(st::slice(x, 1, 3, 0, -1)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::slice(x, 0, -2, std::nullopt, 1)); },
                   {x});
    check_grads<2>([](const auto& x) { return st::sin(st::slice(x, -1, 1, 4, 1)); }, {x});
    // Slices of slices, overlapping the same elements twice.
    check_grads<3>(
        [](const auto& x) {
          const auto s = st::slice(x, 1, std::nullopt, std::nullopt, -1);
          return st::sin(st::slice(s, 1, 1, 4, 2) * st::slice(x, 1, 0, 2, 1));
        },
        {x});
  }
  SECTION("flip") {
    const st::Tensor x = normal({2, 3}, 56);
    check_grads<3>([](const auto& x) { return st::sin(st::flip(x, 1)) * x; }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::flip(x, 0)) * x; }, {x});
  }
}
