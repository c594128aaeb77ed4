// SPDX-License-Identifier: MIT
// Derivative tests for the composite movement ops of diff/movement.hpp
// (squeeze, stack, split, pad with a value) and tril/triu (diff/matrix.hpp): check_grads against
// central finite differences in f64, forward and reverse mode, up to order 3.
#include "support/composites_preamble.hpp"

TEST_CASE("composite derivatives: movement", "[ad]") {
  SECTION("squeeze, unsqueeze, flatten, transpose") {
    check_grads<3>([](const auto& x) { return st::sin(st::squeeze(x, 1)); },
                   {normal({2, 1, 3}, 141)});
    check_grads<3>([](const auto& x) { return st::sin(st::unsqueeze(x, 0)) * st::unsqueeze(x, 1); },
                   {normal({2, 3}, 142)});
    check_grads<3>([](const auto& x) { return st::sin(st::flatten(st::transpose(x, 0, 1))); },
                   {normal({2, 3}, 143)});
    check_grads<3>([](const auto& x) { return st::sin(st::transpose(x, 0, 2)); },
                   {normal({2, 1, 3}, 144)});
  }
  SECTION("stack") {
    const st::Tensor a = normal({2, 3}, 145), b = normal({2, 3}, 146);
    check_grads<3>(
        [](const auto& a, const auto& b) {
          return st::sin(st::stack({a, b}, 1));
        },
        {a, b});
    check_grads<2>(
        [](const auto& a, const auto& b) {
          return st::sin(st::stack({b, a, b}, -1));
        },
        {a, b});
  }
  SECTION("split") {
    check_grads<3>(
        [](const auto& x) {
          const auto p = st::split(x, {1, 2}, 1);
          return st::concat({st::sin(p[1]), p[0] * p[0]}, 1);
        },
        {normal({2, 3}, 147)});
    check_grads<3>(
        [](const auto& x) {
          const auto p = st::split(x, {2, 0, 1}, 0);
          return st::sin(p[0]) * p[2];
        },
        {normal({3, 2}, 148)});
  }
  SECTION("pad with a value") {
    check_grads<3>(
        [](const auto& x) {
          return st::sin(st::pad(x, {{1, 1}, {0, 1}}, 2.5));
        },
        {normal({2, 3}, 149)});
  }
  SECTION("tril and triu") {
    const st::Tensor x = normal({3, 3}, 150);
    check_grads<3>([](const auto& x) { return st::sin(st::tril(x)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::tril(x, -1)); }, {x});
    check_grads<3>([](const auto& x) { return st::sin(st::triu(x)); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::triu(x, 1)) * x; },
                   {normal({2, 3}, 151)});
  }
}
