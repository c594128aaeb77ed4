// SPDX-License-Identifier: MIT
// scaled_dot_product_attention (diff/attention.hpp): jacfwd = jacrev, st::vmap against a loop
// (values and per-example gradients), rows with nothing to attend to, large scores, broadcast
// batch dims, and the errors of bad input. Finite differences: attention_grads.test.cpp;
// PyTorch's values: attention_torch.test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/approx.hpp"
#include "support/message_of.hpp"

namespace st = strata;
using Catch::Matchers::Contains;
using st::testing::attention_bool_mask;
using st::testing::message_of;
using st::testing::normal;
using st::testing::require_approx;

TEST_CASE("attention: jacfwd = jacrev, vmap equals a loop", "[ad][attention][vmap]") {
  const st::Tensor q = normal({3, 2}, 705), k = normal({4, 2}, 706), v = normal({4, 2}, 707);
  auto att = [&](const auto& q) { return st::scaled_dot_product_attention(q, k, v, true); };
  require_approx(st::jacfwd(att, q), st::jacrev(att, q), 1e-13);
  const st::Tensor qs = normal({5, 3, 2}, 708);
  auto masked = [&](const auto& q) {
    return st::scaled_dot_product_attention(q, k, v, false, attention_bool_mask());
  };
  const st::Tensor m1 = st::vmap(att)(qs), m2 = st::vmap(masked)(qs);
  auto loss = [&](const auto& q) {
    return st::sum(
        st::tanh(st::scaled_dot_product_attention(q, k, v, false, attention_bool_mask())));
  };
  const st::Tensor g = st::vmap(st::grad(loss))(qs);
  for (int64_t i = 0; i < 5; ++i) {
    const st::Tensor qi = qs.ix(i);
    require_approx(st::Tensor(m1.ix(i)), att(qi), 1e-13);
    require_approx(st::Tensor(m2.ix(i)), masked(qi), 1e-13);
    require_approx(st::Tensor(g.ix(i)), st::grad(loss, qi), 1e-13);
  }
  // Keys and values mapped too (in_axes 0 for all three).
  const st::Tensor ks = normal({5, 4, 2}, 709), vs = normal({5, 4, 2}, 710);
  const st::Tensor all = st::vmap([](const auto& q, const auto& k, const auto& v) {
    return st::scaled_dot_product_attention(q, k, v, true);
  })(qs, ks, vs);
  for (int64_t i = 0; i < 5; ++i) {
    require_approx(st::Tensor(all.ix(i)),
                   st::scaled_dot_product_attention(st::Tensor(qs.ix(i)), st::Tensor(ks.ix(i)),
                                                    st::Tensor(vs.ix(i)), true),
                   1e-13);
  }
}

TEST_CASE("attention: masked rows, large scores, broadcast batch dims", "[ad][attention]") {
  const st::Tensor q = normal({3, 2}, 711), k = normal({4, 2}, 712), v = normal({4, 2}, 713);
  // A fully masked row is zero, with zero gradient; the other rows are the softmax of theirs.
  const st::Tensor y = st::scaled_dot_product_attention(q, k, v, false, attention_bool_mask());
  CHECK(st::Tensor(y.ix(1)).to_vector<double>() == std::vector<double>{0.0, 0.0});
  const st::Tensor gq = st::grad(
      [&](const auto& q) {
        return st::sum(st::scaled_dot_product_attention(q, k, v, false, attention_bool_mask()));
      },
      q);
  CHECK(st::Tensor(gq.ix(1)).to_vector<double>() == std::vector<double>{0.0, 0.0});
  for (double x : gq.to_vector<double>()) CHECK(std::isfinite(x));
  // The same through a float mask of -inf.
  const st::Tensor fmask = st::where(attention_bool_mask(), st::zeros({3, 4}, st::f64), -INFINITY);
  require_approx(st::scaled_dot_product_attention(q, k, v, false, fmask), y, 1e-15);
  // Row 0 of a causal mask sees key 0 only: its output is v[0].
  const st::Tensor c = st::scaled_dot_product_attention(q, k, v, true);
  require_approx(st::Tensor(c.ix(0)), st::Tensor(v.ix(0)), 1e-15);
  // Scores of 1e4 neither overflow nor lose the answer: attention picks the best key.
  const st::Tensor big = st::scaled_dot_product_attention(q * 1e4, k, v, false, st::Tensor(), 1.0);
  for (double x : big.to_vector<double>()) CHECK(std::isfinite(x));
  // Multi-head shapes: q [B, H, L, E] against k, v [B, 1, S, E] broadcast over heads.
  const st::Tensor qh = normal({2, 3, 4, 5}, 714), kh = normal({2, 1, 6, 5}, 715);
  const st::Tensor vh = normal({2, 1, 6, 3}, 716);
  const st::Tensor out = st::scaled_dot_product_attention(qh, kh, vh, true);
  CHECK(out.shape() == st::Shape{2, 3, 4, 3});
  const st::Tensor one = st::scaled_dot_product_attention(
      st::Tensor(qh.ix(1, 2)), st::Tensor(kh.ix(1, 0)), st::Tensor(vh.ix(1, 0)), true);
  require_approx(st::Tensor(out.ix(1, 2)), one, 1e-14);
  // f32 in, f32 out.
  CHECK(
      st::scaled_dot_product_attention(q.to(st::f32), k.to(st::f32), v.to(st::f32), true).dtype() ==
      st::f32);
}

TEST_CASE("attention: bad input gives a clear error", "[ad][attention][errors]") {
  const st::Tensor q = st::ones({2, 3, 4}, st::f64), k = st::ones({2, 5, 4}, st::f64);
  const st::Tensor v = st::ones({2, 5, 6}, st::f64);
  auto sdpa = [](const st::Tensor& q, const st::Tensor& k, const st::Tensor& v,
                 const st::Tensor& mask = st::Tensor()) {
    return st::scaled_dot_product_attention(q, k, v, false, mask);
  };
  CHECK_NOTHROW(sdpa(q, k, v));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               sdpa(q, st::ones({2, 5, 3}, st::f64), v);
             }),
             Contains("scaled_dot_product_attention: q [2, 3, 4] and k [2, 5, 3] must have the "
                      "same last dim"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               sdpa(q, k, st::ones({2, 4, 6}, st::f64));
             }),
             Contains("k [2, 5, 4] and v [2, 4, 6] must have the same number of keys S"));
  CHECK_THAT(message_of<st::ShapeError>([&] { sdpa(st::ones({4}, st::f64), k, v); }),
             Contains("rank >= 2"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               sdpa(st::ones({3, 3, 4}, st::f64), k, v);
             }),
             Contains("do not broadcast together"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               sdpa(q, k, v, st::ones({3, 4}, st::f64));
             }),
             Contains("mask of shape [3, 4] does not broadcast to the scores' shape [2, 3, 5]"));
  CHECK_THAT(message_of<st::DTypeError>([&] {
               sdpa(q, k, v, st::ones({3, 5}, st::i64));
             }),
             Contains("mask has dtype i64"));
  CHECK_THAT(message_of<st::ValueError>(
                 [&] { st::scaled_dot_product_attention(q, k, v, false, st::Tensor(), NAN); }),
             Contains("scale = nan"));
}

TEST_CASE("attention_weights: the softmax that scaled_dot_product_attention applies to v",
          "[ad][attention]") {
  const st::Tensor q = normal({2, 3, 3}, 931), k = normal({2, 4, 3}, 932);
  const st::Tensor v = normal({2, 4, 6}, 933);
  const st::Tensor mask = attention_bool_mask();  // [3, 4]: row 1 attends to no key
  for (const bool causal : {false, true}) {
    for (const bool masked : {false, true}) {
      INFO("causal " << causal << ", masked " << masked);
      const st::Tensor m = masked ? mask : st::Tensor();
      const st::Tensor w = st::attention_weights(q, k, causal, m);
      REQUIRE(w.shape() == st::Shape{2, 3, 4});
      // Computed here from its definition: masked scores, then a softmax over the keys.
      const std::vector<double> got = w.to_vector<double>();
      const std::vector<double> qs = q.to_vector<double>(), ks = k.to_vector<double>();
      const std::vector<bool> allowed = [&] {
        std::vector<bool> a(12, true);
        if (masked) {
          const std::vector<double> mv = mask.to(st::f64).to_vector<double>();
          for (std::size_t i = 0; i < 12; ++i) a[i] = mv[i] != 0.0;
        }
        return a;
      }();
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t i = 0; i < 3; ++i) {
          std::vector<double> s(4);
          double top = -INFINITY;
          for (int64_t j = 0; j < 4; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < 3; ++e)
              dot += qs[std::size_t((b * 3 + i) * 3 + e)] * ks[std::size_t((b * 4 + j) * 3 + e)];
            const bool ok = allowed[std::size_t(i * 4 + j)] && (!causal || j <= i);
            s[std::size_t(j)] = ok ? dot / std::sqrt(3.0) : -INFINITY;
            top = std::max(top, s[std::size_t(j)]);
          }
          double total = 0;
          for (double& x : s) total += x = top == -INFINITY ? 0.0 : std::exp(x - top);
          for (int64_t j = 0; j < 4; ++j) {
            const double want = total == 0 ? 0.0 : s[std::size_t(j)] / total;
            CHECK(got[std::size_t((b * 3 + i) * 4 + j)] == Approx(want).margin(1e-14));
          }
        }
      }
      require_approx(st::matmul(w, v), st::scaled_dot_product_attention(q, k, v, causal, m), 1e-14);
    }
  }
  CHECK_THAT(
      message_of<st::ShapeError>([&] {
        st::attention_weights(q, st::ones({2, 4, 2}, st::f64));
      }),
      Contains("attention_weights: q [2, 3, 3] and k [2, 4, 2] must have the same last dim"));
}
