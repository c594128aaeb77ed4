// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp) over a sweep of primitives and composites: unary,
// binary with broadcasting, reductions, matmul, movement, indexing, and the
// data-dependent masks (relu, maximum, where on a comparison, max's ties).
// This file: elementwise and binary ops; vmap_ops.test.cpp: reductions, matmul,
// movement, indexing. For each, on f64 inputs from fixed seeds with B = 3
// examples (tests/support/vmap_sweep.hpp):
//   - vmap(f)(a, b) equals the stack of f(a_i, b_i) (a loop on plain tensors);
//   - vmap(f, {0, st::none})(a, b) equals the stack of f(a_i, b) (b shared);
//   - vmap(grad(sum(sin(f))))(a, b) equals the stack of grad(...)(a_i, b_i),
//     for both arguments (per-example gradients).
// The in_axes / out_axes variants, trees, the composition with the other
// transforms and the errors are in vmap_transforms.test.cpp.
#include "support/vmap_preamble.hpp"

TEST_CASE("vmap: elementwise primitives equal a loop over examples", "[ad][vmap]") {
  const Operands one{{2, 3}, {2, 3}}, pos{{2, 3}, {2, 3}, 1, 1}, nz{{2, 3}, {2, 3}, 2, 2};
  SECTION("exp") {
    check(
        "exp", one, [](auto a, auto b) { return st::exp(a) + b; }, 10);
  }
  SECTION("log") {
    check(
        "log", pos, [](auto a, auto b) { return st::log(a) * b; }, 20);
  }
  SECTION("sin cos") {
    check(
        "sin", one, [](auto a, auto b) { return st::sin(a) * st::cos(b); }, 30);
  }
  SECTION("tanh") {
    check(
        "tanh", one, [](auto a, auto b) { return st::tanh(a * b); }, 40);
  }
  SECTION("sqrt") {
    check(
        "sqrt", pos, [](auto a, auto b) { return st::sqrt(a) - b; }, 50);
  }
  SECTION("abs, neg") {
    check(
        "abs", nz, [](auto a, auto b) { return st::abs(a) * -b; }, 60);
  }
  SECTION("sigmoid, softplus") {
    check(
        "sigmoid", one, [](auto a, auto b) { return st::sigmoid(a) + st::softplus(b); }, 70);
  }
  SECTION("relu (a comparison and a where on each example's values)") {
    check(
        "relu", nz, [](auto a, auto b) { return st::relu(a) * b; }, 80);
  }
  SECTION("where on a data-dependent condition") {
    check(
        "where", nz, [](auto a, auto b) { return st::where(a > b, a * a, st::sin(b)); }, 90);
  }
  SECTION("logical ops on batched masks") {
    check(
        "logical", nz,
        [](auto a, auto b) {
          return st::where(st::logical_and(a > 0.0, st::logical_not(b > 0.0)), a, b * 2.0);
        },
        100);
  }
}

TEST_CASE("vmap: binary primitives with broadcasting", "[ad][vmap]") {
  SECTION("add: [2,3] + [3]") {
    check(
        "add", {{2, 3}, {3}}, [](auto a, auto b) { return a + b; }, 110);
  }
  SECTION("mul: [2,1] * [3]") {
    check(
        "mul", {{2, 1}, {3}}, [](auto a, auto b) { return a * b; }, 120);
  }
  SECTION("sub with a scalar") {
    check(
        "sub", {{2, 3}, {}}, [](auto a, auto b) { return (a - b) - 1.5; }, 130);
  }
  SECTION("div") {
    check(
        "div", {{2, 3}, {2, 3}, 0, 2}, [](auto a, auto b) { return a / b; }, 140);
  }
  SECTION("pow") {
    check(
        "pow", {{2, 3}, {3}, 1, 0}, [](auto a, auto b) { return st::pow(a, b); }, 150);
  }
  SECTION("maximum, minimum (masks of each example)") {
    check(
        "maximum", {{2, 3}, {2, 3}},
        [](auto a, auto b) { return st::maximum(a, b) + st::minimum(a, b * 0.5); }, 160);
  }
  SECTION("clamp") {
    check(
        "clamp", {{4}, {4}}, [](auto a, auto b) { return st::clamp(a, -0.5, 0.5) * b; }, 170);
  }
}
