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
#include "support/op_reference.hpp"

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
namespace {

// Inputs inside the op's domain (its row in tests/support/op_reference.hpp).
st::Tensor unary_input(st::UnaryOp op, uint64_t seed) {
  const st::Shape s = {2, 3};
  switch (st::testing::unary_reference(op).domain) {
    case st::testing::Domain::positive:
      return positive(s, seed);
    case st::testing::Domain::nonzero:
      return nonzero(s, seed);  // away from the kink
    case st::testing::Domain::all:
      return normal(s, seed);
    case st::testing::Domain::none:
      break;  // bool: no derivative
  }
  return {};
}

}  // namespace

TEST_CASE("primitive derivatives: every unary op of the op table", "[ad]") {
  for (const auto& row : st::kUnaryOps) {
    if (!st::admits(row.dtypes, st::f64)) continue;  // logical_not
    DYNAMIC_SECTION(row.name) {
      const st::UnaryOp op = row.op;
      const st::Tensor x = unary_input(op, 11 + uint64_t(op));
      REQUIRE(x.defined());
      check_grads<3>([op](const auto& x) { return prims_of<decltype(x)>::unary(op, x); }, {x});
    }
  }
}

TEST_CASE("primitive derivatives: unary", "[ad]") {
  SECTION("neg inside a product") {
    check_grads<3>([](const auto& x) { return -x * st::sin(x); }, {normal({2, 3}, 11)});
  }
  SECTION("the public functions of the new rows") {
    check_grads<2>([](const auto& x) { return st::log1p(x) * st::expm1(x) + st::erf(x * 0.7); },
                   {positive({2, 3}, 15)});
  }
  SECTION("sign has derivative zero") {
    const st::Tensor z = nonzero({2, 3}, 14);
    check_grads<2>([](const auto& x) { return st::sign(x) * x; }, {z});
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::sign(x)); }, z);
    CHECK(g.to_vector<double>() == std::vector<double>(6, 0.0));
  }
}
