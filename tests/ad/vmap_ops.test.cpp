// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp) over reductions (max's ties, between constants and
// between copies of one value, and logsumexp's masks included) and matmul
// (movement and indexing: vmap_movement.test.cpp): each case is checked as in
// vmap.test.cpp (tests/support/vmap_sweep.hpp) against loops over examples:
// vmap(f), vmap(f, {0, st::none}) and vmap(grad(sum(sin(f)))).
#include "support/vmap_preamble.hpp"

TEST_CASE("vmap: reductions", "[ad][vmap]") {
  const Operands o{{3, 4}, {4}};
  SECTION("sum over an axis and over all") {
    check(
        "sum", o, [](auto a, auto b) { return st::sum(a, {0}) * b + st::sum(a); }, 210);
  }
  SECTION("max over an axis (each example's maxima)") {
    check(
        "max", o, [](auto a, auto b) { return st::max(a, {1}) + st::max(b); }, 220);
  }
  SECTION("max with ties") {
    check(
        "max ties", o, [](auto a, auto b) { return st::max(st::where(a > 0.0, 1.0, a), {0}) * b; },
        225);
  }
  SECTION("max with ties that carry the derivative") {
    // Every maximum appears three times (a, its copy, a reversed): each copy gets a third
    // of the derivative, which sums back to 1 at the element (the ties above are between
    // constants, where the split makes no difference).
    check(
        "max ties of one value", o,
        [](auto a, auto b) {
          return st::max(st::concat({a, a, st::flip(a, 0)}, 0), {0}) * b;
        },
        226);
  }
  SECTION("mean, var") {
    check(
        "mean", o, [](auto a, auto b) { return st::mean(a, {0}) + st::var(a, {0}) * b; }, 230);
  }
  SECTION("logsumexp, softmax, log_softmax") {
    check(
        "softmax", o,
        [](auto a, auto b) {
          return st::logsumexp(a, {1}) + st::sum(st::softmax(a * b, 1) * st::log_softmax(a, 1));
        },
        240);
  }
  SECTION("norm") {
    check(
        "norm", o, [](auto a, auto b) { return st::norm(a) * b; }, 250);
  }
}

TEST_CASE("vmap: matmul", "[ad][vmap]") {
  SECTION("matrix x matrix") {
    check(
        "mm", {{2, 3}, {3, 4}}, [](auto a, auto b) { return st::matmul(a, b); }, 310);
  }
  SECTION("matrix x vector") {
    check(
        "mv", {{2, 3}, {3}}, [](auto a, auto b) { return st::matmul(a, b); }, 320);
  }
  SECTION("vector x matrix") {
    check(
        "vm", {{3}, {3, 2}}, [](auto a, auto b) { return st::matmul(a, b); }, 330);
  }
  SECTION("dot") {
    check(
        "dot", {{4}, {4}}, [](auto a, auto b) { return st::dot(a, b); }, 340);
  }
  SECTION("batched matmul with broadcast batch dims") {
    check(
        "bmm", {{2, 2, 3}, {1, 3, 2}}, [](auto a, auto b) { return st::matmul(a, b); }, 350);
  }
}
