// SPDX-License-Identifier: MIT
// layer_norm and rms_norm (diff/normalization.hpp) against f64 finite differences, forward and
// reverse mode, to order 3 (tests/support/check_grads.hpp), with and without their affine
// parameters. group_norm and batch_norm: norms_grads_batch.test.cpp.
#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;

TEST_CASE("layer_norm and rms_norm: finite differences to order 3", "[ad][norms]") {
  const st::Tensor x = normal({2, 3, 4}, 501), w = normal({4}, 502), b = normal({4}, 503);
  SECTION("layer_norm") {
    check_grads<3>([](const auto& x) { return st::layer_norm(x, {3, 4}); }, {x});
    check_grads<3>([](const auto& x, const auto& w,
                      const auto& b) { return st::layer_norm(x, {4}, w, b, 1e-3); },
                   {x, w, b});
  }
  SECTION("rms_norm") {
    check_grads<3>([](const auto& x) { return st::rms_norm(x, {4}); }, {x});
    check_grads<2>(
        [](const auto& x, const auto& w) {
          return st::rms_norm(x, {3, 4}, st::reshape(st::concat({w, w, w}, 0), {3, 4}), 1e-2);
        },
        {x, w});
  }
}
