// SPDX-License-Identifier: MIT
// Derivative tests of the reductions (sum, max): check_grads against f64
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
TEST_CASE("primitive derivatives: reductions", "[ad]") {
  const st::Tensor x = normal({2, 3, 2}, 41);
  SECTION("sum") {
    check_grads<3>([](const auto& x) { return st::sin(st::sum(x, {1})); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::sum(x, {0, 2}, true)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::sum(x, {-1}, true)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::sum(x, {-1, 0})); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::sum(x)); }, {x});
  }
  SECTION("max") {
    check_grads<3>([](const auto& x) { return st::sin(st::max(x, {1})); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::max(x, {0, 2}, true)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::max(x, {2}, false)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::max(x, {-1, 0})); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::max(x, {-2}, true)); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::max(x)); }, {x});
  }
}
