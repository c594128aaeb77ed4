// SPDX-License-Identifier: MIT
// Derivative tests for the composite reductions and statistics of
// diff/reductions.hpp and diff/statistics.hpp (mean, var, std, norm, logsumexp, min): check_grads
// against central finite differences in f64, forward and reverse mode, up to order 3.
#include "support/composites_preamble.hpp"

TEST_CASE("composite derivatives: reductions and statistics", "[ad]") {
  const st::Tensor x = normal({2, 3}, 121);
  SECTION("mean") {
    check_grads<3>([](const auto& x) { return st::sin(st::mean(x)); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::mean(x, {1})); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::mean(x, {0}, true)); }, {x});
  }
  SECTION("var") {
    check_grads<3>([](const auto& x) { return st::var(x); }, {x});
    check_grads<3>([](const auto& x) { return st::var(x, {1}); }, {x});
    check_grads<2>([](const auto& x) { return st::var(x, {0}, true); }, {x});
  }
  SECTION("std") {
    check_grads<3>([](const auto& x) { return st::std(x); }, {x});
    check_grads<3>([](const auto& x) { return st::std(x, {1}, true); }, {x});
  }
  SECTION("norm") {
    check_grads<3>([](const auto& x) { return st::norm(x); }, {x});
  }
  SECTION("logsumexp, with and without keepdims") {
    check_grads<3>([](const auto& x) { return st::logsumexp(x); }, {x});
    check_grads<3>([](const auto& x) { return st::logsumexp(x, {1}); }, {x});
    check_grads<3>([](const auto& x) { return st::logsumexp(x, {1}, true); }, {x});
    check_grads<2>([](const auto& x) { return st::logsumexp(x, {0}, true) * x; }, {x});
    // Large values (exp overflows without the shift by the max): the derivative
    // stays finite and right. Steeper function, smaller step.
    st::testing::GradCheckOptions o;
    o.eps = 1e-7;
    check_grads<2>([](const auto& x) { return st::logsumexp(x * 1000.0, {1}); }, {x},
                   st::testing::Modes::both, o);
  }
  SECTION("min") {
    check_grads<3>([](const auto& x) { return st::sin(st::min(x, {1})); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::min(x, {0}, true)); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::min(x)); }, {x});
  }
}
