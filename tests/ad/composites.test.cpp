// SPDX-License-Identifier: MIT
// Derivative tests for the broadcasting arithmetic of diff/arithmetic.hpp (composites
// written once over Diffable, differentiable because they lower to primitives):
// check_grads against central finite differences in f64, forward and reverse mode, up to
// order 3.
#include "support/composites_preamble.hpp"

TEST_CASE("composite derivatives: broadcasting arithmetic", "[ad]") {
  const st::Tensor a = normal({3, 1}, 101), b = normal({4}, 102);
  SECTION("[3,1] with [4]") {
    check_grads([](const auto& a, const auto& b) { return st::sin(a + b); }, {a, b}, 3);
    check_grads([](const auto& a, const auto& b) { return st::sin(a - b); }, {a, b}, 3);
    check_grads([](const auto& a, const auto& b) { return a * b; }, {a, b}, 3);
    check_grads([](const auto& a, const auto& b) { return a / b; }, {a, nonzero({4}, 103)}, 3);
    check_grads([](const auto& a, const auto& b) { return st::pow(a, b); },
                {positive({3, 1}, 104), b}, 3);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::maximum(a, b)); }, {a, b}, 2);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::minimum(b, a)); }, {a, b}, 2);
    // A rank-0 operand.
    check_grads([](const auto& a, const auto& s) { return st::sin(a * s); }, {a, normal({}, 105)},
                3);
  }
  SECTION("captured tensors are constants") {
    const st::Tensor w = normal({3}, 108), x = normal({2, 3}, 109);
    check_grads([w](const auto& x) { return st::sin(x * w) - w / (x * x + 1.0); }, {x}, 3);
    check_grads([w](const auto& x) { return st::matmul(x, w); }, {x}, 2);
  }
  SECTION("where with broadcasting condition and operands") {
    const st::Tensor cond = st::from_vector(std::vector<bool>{true, false, true, true}, {1, 4});
    check_grads([cond](const auto& a) { return st::sin(st::where(cond, a, 0.5)); }, {a}, 3);
    check_grads([cond](const auto& a, const auto& b) { return st::sin(st::where(cond, b, a * a)); },
                {a, b}, 3);
  }
  SECTION("unary minus") {
    check_grads([](const auto& x) { return -(x * st::sin(x)); }, {normal({2, 3}, 110)}, 3);
    check_grads([](const auto& a, const auto& b) { return -a * b; }, {a, b}, 2);
  }
}
