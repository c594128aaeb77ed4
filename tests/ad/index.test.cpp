// SPDX-License-Identifier: MIT
// Derivatives through indexing (diff/index.hpp) on every dual-type stack:
// check_grads against f64 finite differences up to order 3, exact gradients
// of repeated indices (they accumulate), and forward/reverse agreement.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::i64s;
using st::testing::normal;

TEST_CASE("indexing derivatives: basic views", "[ad][index]") {
  const st::Tensor x = normal({4, 3, 2}, 301);
  check_grads<3>([](const auto& x) { return st::sin(x.ix(1, st::slice(0, 2))); }, {x});
  check_grads<3>(
      [](const auto& x) {
        return x.ix(st::slice(st::none, st::none, -2), st::newaxis, st::ellipsis, -1) *
               x.ix(0, 0, 0);
      },
      {x});
}

TEST_CASE("indexing derivatives: outer indexing with repeated indices", "[ad][index]") {
  const st::Tensor x = normal({4, 3, 2}, 302);
  const st::Tensor rows = i64s({3, 0, 3, -1, 1}, {5});
  const st::Tensor cols = i64s({2, 2, 0, 1}, {2, 2});
  check_grads<3>([&](const auto& x) { return st::tanh(x.oix(rows)); }, {x});
  check_grads<2>([&](const auto& x) { return x.oix(rows, cols) * x.oix(rows, cols); }, {x});
  check_grads<2>([&](const auto& x) { return st::exp(x.oix(st::all, cols, 1)); }, {x});
}

TEST_CASE("indexing derivatives: take with repeated and negative positions", "[ad][index]") {
  const st::Tensor x = normal({4, 3, 2}, 303);
  const st::Tensor rows = i64s({3, 0, 3, -1, 1, 0}, {2, 3});
  const st::Tensor one = i64s({1, 1, -2}, {3});
  check_grads<3>([&](const auto& x) { return st::tanh(st::take(x, rows, 0)); }, {x});
  check_grads<2>([&](const auto& x) { return st::take(x, one, -2) * x.take(one, 1); }, {x});
}
