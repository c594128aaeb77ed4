// SPDX-License-Identifier: MIT
// group_norm and batch_norm (diff/normalization.hpp) against f64 finite differences, forward and
// reverse mode, to order 3 (tests/support/check_grads.hpp), with and without their affine
// parameters; batch_norm in training (batch statistics) and evaluation (running statistics).
#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;

TEST_CASE("group_norm and batch_norm: finite differences to order 3", "[ad][norms]") {
  SECTION("group_norm") {
    const st::Tensor img = normal({2, 4, 3}, 504), gw = normal({4}, 505), gb = normal({4}, 506);
    check_grads<3>([](const auto& x) { return st::group_norm(x, 2); }, {img});
    check_grads<2>([](const auto& x, const auto& w,
                      const auto& b) { return st::group_norm(x, 4, w, b, 1e-3); },
                   {img, gw, gb});
  }
  SECTION("batch_norm, training and evaluation") {
    const st::Tensor img = normal({3, 2, 2}, 507), m = normal({2}, 508);
    const st::Tensor v = st::testing::positive({2}, 509), bw = normal({2}, 510);
    check_grads<3>([&](const auto& x) { return st::batch_norm(x, m, v, true).out; }, {img});
    check_grads<2>(
        [&](const auto& x, const auto& w, const auto& b) {
          return st::batch_norm(x, m, v, w, b, true, 0.1, 1e-3).out;
        },
        {img, bw, normal({2}, 511)});
    check_grads<3>(
        [&](const auto& x, const auto& w) { return st::batch_norm(x, m, v, w, w, false).out; },
        {img, bw});
  }
}
