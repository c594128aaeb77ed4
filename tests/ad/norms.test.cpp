// SPDX-License-Identifier: MIT
// The normalisation composites (diff/normalization.hpp): jacfwd = jacrev, st::vmap against a
// loop (values and per-example gradients), numerical stability far from 0, and the errors of
// bad input. Finite differences: norms_grads.test.cpp; PyTorch's values: norms_torch.test.cpp.
#include <catch2/catch.hpp>
#include <strata.hpp>
#include <string>

#include "support/ad_inputs.hpp"
#include "support/approx.hpp"
#include "support/message_of.hpp"

namespace st = strata;
using Catch::Matchers::Contains;
using st::testing::message_of;
using st::testing::normal;
using st::testing::require_approx;
using st::testing::require_vmap_approx_loop;

TEST_CASE("norms: jacfwd equals jacrev, the Hessian is symmetric", "[ad][norms]") {
  const st::Tensor x = normal({2, 5}, 512);
  auto ln = [](const auto& x) { return st::layer_norm(x, {5}); };
  require_approx(st::jacfwd(ln, x), st::jacrev(ln, x), 1e-13);
  auto gn = [](const auto& x) {
    return st::sum(st::sin(st::group_norm(st::reshape(x, {1, 2, 5}), 2)));
  };
  const st::Tensor h = st::hessian(gn, x).reshape({10, 10});
  require_approx(h, h.transpose(0, 1), 1e-12);
}

TEST_CASE("norms under vmap equal a loop over the examples", "[ad][norms][vmap]") {
  const st::Tensor xs = normal({3, 2, 4, 3}, 513), w = normal({3}, 514), b = normal({3}, 515);
  const st::Tensor cw = normal({4}, 516), m = normal({4}, 517), v = st::testing::positive({4}, 518);
  auto ln = [&](const auto& x) { return st::layer_norm(x, {3}, w, b); };
  auto rms = [&](const auto& x) { return st::rms_norm(x, {4, 3}); };
  auto gn = [&](const auto& x) { return st::group_norm(x, 2, cw, cw); };
  auto bn = [&](const auto& x) { return st::batch_norm(x, m, v, cw, cw, true).out; };
  auto bn_stats = [&](const auto& x) { return st::batch_norm(x, m, v, true).running_var; };
  require_vmap_approx_loop(ln, xs);
  require_vmap_approx_loop(rms, xs);
  require_vmap_approx_loop(gn, xs);
  require_vmap_approx_loop(bn, xs);
  require_vmap_approx_loop(bn_stats, xs);
  // Per-example gradients: the rules of every op inside run on batched values.
  auto loss = [&](const auto& f) {
    return [f](const auto& x) {
      return st::sum(st::tanh(f(x)) * st::reshape(st::arange(0, 24, 1, st::f64), {2, 4, 3}));
    };
  };
  require_vmap_approx_loop(st::grad(loss(ln)), xs);
  require_vmap_approx_loop(st::grad(loss(gn)), xs);
  require_vmap_approx_loop(st::grad(loss(bn)), xs);
}

TEST_CASE("norms are stable far from zero and run in f32", "[ad][norms]") {
  // Values 1e3 + N(0, 1) in f32: E[x^2] - E[x]^2 would be off by ~6e-2 (f32's epsilon times
  // 1e6); two passes stay within 1e-3 of the f64 result on the same (f32-rounded) inputs.
  const st::Tensor x32 = (normal({4, 8}, 519) + 1e3).to(st::f32), x = x32.to(st::f64);
  const st::Tensor y32 = st::layer_norm(x32, {8});
  CHECK(y32.dtype() == st::f32);
  require_approx(y32.to(st::f64), st::layer_norm(x, {8}), 1e-3);
  const auto r = st::batch_norm(x32, st::zeros({8}), st::ones({8}), true);
  const auto r64 = st::batch_norm(x, st::zeros({8}, st::f64), st::ones({8}, st::f64), true);
  require_approx(r.out.to(st::f64), r64.out, 1e-3);
  require_approx(r.running_var.to(st::f64), r64.running_var, 1e-4);
  // The standardised rows have mean 0 and variance 1 / (1 + eps / var).
  const st::Tensor z = st::layer_norm(normal({3, 6}, 520), {6}, 0.0);
  require_approx(st::mean(z, {1}), st::zeros({3}, st::f64), 1e-14);
  require_approx(st::var(z, {1}), st::ones({3}, st::f64), 1e-13);
}

TEST_CASE("norms: bad input gives a clear error", "[ad][norms][errors]") {
  const st::Tensor x = st::ones({2, 6, 3}, st::f64), c = st::ones({6}, st::f64);
  CHECK_THAT(
      message_of<st::ShapeError>([&] { st::layer_norm(x, {4}); }),
      Contains("layer_norm: input of shape [2, 6, 3] does not end with normalized_shape [4]") &&
          Contains("e.g. [3]"));
  CHECK_THAT(message_of<st::ShapeError>([&] { st::layer_norm(x, {}); }), Contains("empty"));
  CHECK_THAT(message_of<st::ShapeError>([&] { st::layer_norm(x, {3}, c, st::ones({3}, st::f64)); }),
             Contains("layer_norm: weight has shape [6], need [3]"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::layer_norm(x, {3}, -1.0); }),
             Contains("eps = -1"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               st::rms_norm(x, {2, 3});
             }),
             Contains("rms_norm: input of shape [2, 6, 3]"));
  CHECK_THAT(message_of<st::ShapeError>([&] { st::group_norm(x, 4); }),
             Contains("group_norm: the 6 channels of input of shape [2, 6, 3] do not divide into "
                      "groups = 4 (choose one of 1, 2, 3, 6)"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::group_norm(x, 0); }), Contains("groups = 0"));
  CHECK_THAT(message_of<st::ShapeError>([&] { st::group_norm(c, 2); }), Contains("rank >= 2"));
  CHECK_THAT(message_of<st::ShapeError>([&] { st::group_norm(x, 3, c, st::ones({3}, st::f64)); }),
             Contains("group_norm: bias has shape [3], need [6]"));
  CHECK_THAT(
      message_of<st::ShapeError>([&] { st::batch_norm(x, st::ones({3}, st::f64), c, true); }),
      Contains("batch_norm: running_mean has shape [3], need [6]"));
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::batch_norm(st::ones({1, 6}, st::f64), c, c, true);
             }),
             Contains("batch_norm: training needs more than 1 value per channel"));
  CHECK_NOTHROW(st::batch_norm(st::ones({1, 6}, st::f64), c, c, false));
  CHECK_THAT(message_of<st::ValueError>([&] { st::batch_norm(x, c, c, true, NAN); }),
             Contains("momentum"));
}
