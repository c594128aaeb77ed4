// SPDX-License-Identifier: MIT
// Derivative tests at rank-0 and empty operands: check_grads against f64 finite
// differences up to order 3.
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
TEST_CASE("primitive derivatives: rank-0 and empty tensors", "[ad]") {
  SECTION("rank 0") {
    const st::Tensor x = normal({}, 95);
    check_grads<3>([](const auto& x) { return st::exp(x) * st::sin(x); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::expand(x, {2, 3})) * st::sum(x); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::reshape(x, {1, 1})) * st::max(x); }, {x});
    check_grads<3>([](const auto& a, const auto& b) { return st::pow(a * a + 1.0, b); },
                   {x, normal({}, 96)});
  }
  SECTION("empty tensors: derivatives are empty, or zero, of the right shapes") {
    const st::Tensor e = normal({2, 0}, 97);
    check_grads<2>([](const auto& x) { return st::exp(x); }, {e});
    check_grads<2>([](const auto& x) { return st::sin(st::sum(x, {1})) + st::sum(x * x); }, {e});
    check_grads<2>([](const auto& a, const auto& b) { return st::matmul(a, b); },
                   {e, normal({0, 3}, 98)});
    check_grads<2>(
        [](const auto& a, const auto& b) {
          return st::sin(st::concat({a, b}, 1));
        },
        {e, normal({2, 2}, 99)});
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::exp(x)); }, e);
    CHECK(g.shape() == st::Shape{2, 0});
  }
}
