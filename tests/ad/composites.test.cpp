// SPDX-License-Identifier: MIT
// Derivative tests for the broadcasting arithmetic of diff/arithmetic.hpp (composites
// written once over Diffable, differentiable because they lower to primitives):
// check_grads against central finite differences in f64, forward and reverse mode, up to
// order 3.
#include "support/composites_preamble.hpp"

TEST_CASE("composite derivatives: broadcasting arithmetic", "[ad]") {
  const st::Tensor a = normal({3, 1}, 101), b = normal({4}, 102);
  SECTION("[3,1] with [4]") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(a + b); }, {a, b});
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(a - b); }, {a, b});
    check_grads<3>([](const auto& a, const auto& b) { return a * b; }, {a, b});
    check_grads<3>([](const auto& a, const auto& b) { return a / b; }, {a, nonzero({4}, 103)});
    check_grads<3>([](const auto& a, const auto& b) { return st::pow(a, b); },
                   {positive({3, 1}, 104), b});
    check_grads<2>([](const auto& a, const auto& b) { return st::sin(st::maximum(a, b)); }, {a, b});
    check_grads<2>([](const auto& a, const auto& b) { return st::sin(st::minimum(b, a)); }, {a, b});
    // A rank-0 operand.
    check_grads<3>([](const auto& a, const auto& s) { return st::sin(a * s); },
                   {a, normal({}, 105)});
  }
  SECTION("captured tensors are constants") {
    const st::Tensor w = normal({3}, 108), x = normal({2, 3}, 109);
    check_grads<3>([w](const auto& x) { return st::sin(x * w) - w / (x * x + 1.0); }, {x});
    check_grads<2>([w](const auto& x) { return st::matmul(x, w); }, {x});
  }
  SECTION("where with broadcasting condition and operands") {
    const st::Tensor cond = st::from_vector(std::vector<bool>{true, false, true, true}, {1, 4});
    check_grads<3>([cond](const auto& a) { return st::sin(st::where(cond, a, 0.5)); }, {a});
    check_grads<3>(
        [cond](const auto& a, const auto& b) { return st::sin(st::where(cond, b, a * a)); },
        {a, b});
  }
  SECTION("unary minus") {
    check_grads<3>([](const auto& x) { return -(x * st::sin(x)); }, {normal({2, 3}, 110)});
    check_grads<2>([](const auto& a, const auto& b) { return -a * b; }, {a, b});
  }
}
