// SPDX-License-Identifier: MIT
// scaled_dot_product_attention (diff/attention.hpp) against f64 finite differences, forward and
// reverse mode (tests/support/check_grads.hpp): to order 3 plain and causal, to order 2 with a
// bool mask holding a fully masked row and with a float mask.
#include <catch2/catch.hpp>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::attention_bool_mask;
using st::testing::check_grads;
using st::testing::normal;

TEST_CASE("attention: finite differences to order 3", "[ad][attention]") {
  const st::Tensor q = normal({2, 3, 2}, 701), k = normal({2, 4, 2}, 702),
                   v = normal({2, 4, 3}, 703);
  const st::Tensor fmask = normal({3, 4}, 704);
  check_grads<3>([](const auto& q, const auto& k,
                    const auto& v) { return st::scaled_dot_product_attention(q, k, v); },
                 {q, k, v});
  check_grads<3>(
      [](const auto& q, const auto& k, const auto& v) {
        return st::scaled_dot_product_attention(q, k, v, /*causal=*/true);
      },
      {q, k, v});
  // A bool mask with a fully masked row: its output and derivatives are zero, so the checks
  // see finite values everywhere.
  check_grads<2>(
      [&](const auto& q, const auto& k, const auto& v) {
        return st::scaled_dot_product_attention(q, k, v, false, attention_bool_mask(), 0.7);
      },
      {q, k, v});
  check_grads<2>(
      [&](const auto& q, const auto& k, const auto& v) {
        return st::scaled_dot_product_attention(q, k, v, true, fmask);
      },
      {q, k, v});
}
