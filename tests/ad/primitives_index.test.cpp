// SPDX-License-Identifier: MIT
// Derivative tests of index_select and index_add: check_grads against f64
// finite differences up to order 3.
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
TEST_CASE("primitive derivatives: index_select and index_add", "[ad]") {
  SECTION("index_select with repeated indices") {
    const st::Tensor x = normal({4, 3}, 81);
    const st::Tensor idx = i64s({2, 0, 2, 1, 2}, {5});
    check_grads<3>(
        [idx](const auto& x) { return st::sin(prims_of<decltype(x)>::index_select(x, 0, idx)); },
        {x});
    const st::Tensor idx2 = i64s({1, 1, 0, 2}, {2, 2});  // an index of rank 2 replaces axis 1
    check_grads<3>(
        [idx2](const auto& x) { return st::sin(prims_of<decltype(x)>::index_select(x, 1, idx2)); },
        {x});
    // Repeated picks accumulate: row 2 is picked three times.
    const st::Tensor g = st::grad(
        [idx](const auto& x) { return st::sum(prims_of<decltype(x)>::index_select(x, 0, idx)); },
        x);
    CHECK(g.to_vector<double>() == std::vector<double>{1, 1, 1, 1, 1, 1, 3, 3, 3, 0, 0, 0});
  }
  SECTION("index_add with repeated indices") {
    const st::Tensor x = normal({4, 3}, 82), src = normal({5, 3}, 83);
    const st::Tensor idx = i64s({1, 3, 1, 0, 1}, {5});
    check_grads<3>(
        [idx](const auto& x, const auto& src) {
          return st::sin(prims_of<decltype(x)>::index_add(x, 0, idx, src));
        },
        {x, src});
    const st::Tensor idx2 = i64s({2, 2}, {2});
    check_grads<3>(
        [idx2](const auto& x, const auto& src) {
          return st::sin(prims_of<decltype(x)>::index_add(x, 1, idx2, src)) * x;
        },
        {x, normal({4, 2}, 84)});
    // Negative axes.
    check_grads<3>(
        [idx2](const auto& x, const auto& src) {
          const auto y = prims_of<decltype(x)>::index_add(x, -1, idx2, src);
          return st::sin(prims_of<decltype(x)>::index_select(y, -1, idx2));
        },
        {x, normal({4, 2}, 85)});
  }
}
