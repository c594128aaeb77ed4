// SPDX-License-Identifier: MIT
// Derivative tests of the unary primitives (rules in ad/rules.hpp):
// check_grads against central finite differences in f64, forward and reverse
// mode, up to order 3 through nested dual types.
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
TEST_CASE("primitive derivatives: unary", "[ad]") {
  const st::Tensor x = normal({2, 3}, 11);
  const st::Tensor p = positive({2, 3}, 12);
  SECTION("neg") {
    check_grads([](const auto& x) { return -x * st::sin(x); }, {x}, 3);
  }
  SECTION("exp") {
    check_grads([](const auto& x) { return st::exp(x); }, {x}, 3);
  }
  SECTION("log") {
    check_grads([](const auto& x) { return st::log(x); }, {p}, 3);
  }
  SECTION("sin") {
    check_grads([](const auto& x) { return st::sin(x); }, {x}, 3);
  }
  SECTION("cos") {
    check_grads([](const auto& x) { return st::cos(x); }, {x}, 3);
  }
  SECTION("sqrt") {
    check_grads([](const auto& x) { return st::sqrt(x); }, {p}, 3);
  }
  SECTION("tanh") {
    check_grads([](const auto& x) { return st::tanh(x); }, {x}, 3);
  }
  SECTION("abs") {
    check_grads([](const auto& x) { return st::sin(st::abs(x)); }, {nonzero({2, 3}, 13)}, 3);
  }
  SECTION("sign has derivative zero") {
    const st::Tensor z = nonzero({2, 3}, 14);
    check_grads([](const auto& x) { return st::sign(x) * x; }, {z}, 2);
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::sign(x)); }, z);
    CHECK(g.to_vector<double>() == std::vector<double>(6, 0.0));
  }
}
