// SPDX-License-Identifier: MIT
// Derivatives of the convolutions and poolings (diff/conv.hpp, diff/pool.hpp): check_grads
// against f64 finite differences to order 3 in every forward/reverse nesting, on small
// shapes with strides, padding, dilation, groups and ceil_mode; st::vmap against a loop over
// examples; and the per-example gradients of a tiny CNN, vmap(grad(loss), {none, none, 0, 0}),
// against a loop of grad over the examples.
#include <catch2/catch.hpp>
#include <strata.hpp>
#include <tuple>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;

TEST_CASE("conv derivatives to third order", "[ad][conv]") {
  SECTION("conv2d: stride, padding, dilation, two groups, bias") {
    const st::Tensor x = normal({1, 2, 4, 5}, 3941), w = normal({2, 1, 2, 2}, 3942);
    const st::Tensor b = normal({2}, 3943);
    check_grads<3>(
        [](const auto& x, const auto& w, const auto& b) {
          return st::sin(st::conv(x, w, b, {.stride = {2, 1}, .padding = {1}, .groups = 2}));
        },
        {x, w, b});
    check_grads<2>(
        [](const auto& x, const auto& w) {
          return st::tanh(st::conv(x, w, {.dilation = {2, 1}, .groups = 2}));
        },
        {x, w});
  }
  SECTION("conv1d and conv3d") {
    check_grads<3>(
        [](const auto& x, const auto& w) {
          return st::sin(st::conv(x, w, {.stride = {2}, .padding = {2}, .dilation = {2}}));
        },
        {normal({2, 2, 5}, 3944), normal({3, 2, 2}, 3945)});
    check_grads<2>([](const auto& x, const auto& w) { return st::sin(st::conv(x, w)); },
                   {normal({1, 1, 3, 3, 2}, 3946), normal({2, 1, 2, 2, 1}, 3947)});
  }
  SECTION("conv_transpose: stride, padding, output_padding") {
    check_grads<3>(
        [](const auto& x, const auto& w) {
          return st::sin(st::conv_transpose(
              x, w, {.stride = {2, 1}, .padding = {1, 0}, .output_padding = {1, 0}}));
        },
        {normal({1, 2, 2, 3}, 3948), normal({2, 2, 2, 2}, 3949)});
    check_grads<2>(
        [](const auto& x, const auto& w, const auto& b) {
          return st::tanh(
              st::conv_transpose(x, w, b, {.stride = {3}, .dilation = {2}, .groups = 2}));
        },
        {normal({2, 2, 3}, 3950), normal({2, 1, 2}, 3951), normal({2}, 3952)});
  }
}

TEST_CASE("pooling derivatives to third order", "[ad][conv]") {
  // The inputs of max_pool are distinct, so no window holds a tie.
  const st::Tensor x = normal({1, 2, 5, 4}, 3953);
  check_grads<3>(
      [](const auto& x) {
        return st::sin(
            st::max_pool(x * x, {2, 2}, {.stride = {2, 1}, .padding = {1}, .ceil_mode = true}));
      },
      {x});
  check_grads<3>(
      [](const auto& x) {
        return st::sin(st::avg_pool(
            x, {3, 2},
            {.stride = {2}, .padding = {1}, .ceil_mode = true, .count_include_pad = false}));
      },
      {x});
  check_grads<3>([](const auto& x) { return st::sin(st::adaptive_avg_pool(x, {3, 3})); }, {x});
}

TEST_CASE("vmap of conv and pooling equals a loop over examples", "[ad][conv][vmap]") {
  const st::Tensor xs = normal({3, 2, 2, 6, 5}, 3954), w = normal({4, 1, 3, 2}, 3955);
  auto f = [](const auto& w, const auto& x) {
    return st::max_pool(st::conv(x, w, {.padding = {1}, .groups = 2}), {2, 2}, {.ceil_mode = true});
  };
  std::vector<st::Tensor> loop;
  for (int64_t i = 0; i < 3; ++i) loop.push_back(f(w, st::testing::example(xs, 0, i)));
  st::testing::require_close(st::vmap(f, {st::none, 0})(w, xs), st::testing::stacked(loop), 1e-13,
                             "conv + max_pool");
  // Mapped weights too (one kernel per example), and conv_transpose with adaptive pooling.
  const st::Tensor ws = normal({3, 2, 2, 2, 2}, 3956);
  auto g = [](const auto& w, const auto& x) {
    return st::adaptive_avg_pool(st::conv_transpose(x, w, {.stride = {2}}), {3, 2});
  };
  std::vector<st::Tensor> loop2;
  for (int64_t i = 0; i < 3; ++i) {
    loop2.push_back(g(st::testing::example(ws, 0, i), st::testing::example(xs, 0, i)));
  }
  st::testing::require_close(st::vmap(g)(ws, xs), st::testing::stacked(loop2), 1e-13,
                             "conv_transpose + adaptive_avg_pool");
}

TEST_CASE("per-example gradients of a tiny CNN: vmap(grad(loss)) equals a loop",
          "[ad][conv][vmap]") {
  // One unbatched example x [1, 6, 6] and its target y [3]: conv 1 -> 2 (3 x 3, padding 1),
  // relu, 2 x 2 max pooling, a linear head on the 18 features, squared error.
  auto loss = [](const auto& wc, const auto& wf, const auto& x, const auto& y) {
    const auto h = st::max_pool(st::relu(st::conv(x, wc, {.padding = {1}})), {2, 2});
    const auto logits = st::matmul(wf, st::reshape(h, {-1}));
    return st::sum((logits - y) * (logits - y));
  };
  const st::Tensor wc = normal({2, 1, 3, 3}, 3957), wf = normal({3, 18}, 3958);
  const st::Tensor xs = normal({5, 1, 6, 6}, 3959), ys = normal({5, 3}, 3960);
  const auto [gc, gf, gx, gy] =
      st::vmap(st::grad(loss), {st::none, st::none, 0, 0})(wc, wf, xs, ys);
  std::vector<st::Tensor> lc, lf, lx;
  for (int64_t i = 0; i < 5; ++i) {
    const auto [c, f, x, y] =
        st::grad(loss)(wc, wf, st::testing::example(xs, 0, i), st::testing::example(ys, 0, i));
    lc.push_back(c);
    lf.push_back(f);
    lx.push_back(x);
    (void)y;
  }
  CHECK(gc.shape() == st::Shape{5, 2, 1, 3, 3});
  st::testing::require_close(gc, st::testing::stacked(lc), 1e-12, "conv weight");
  st::testing::require_close(gf, st::testing::stacked(lf), 1e-12, "head weight");
  st::testing::require_close(gx, st::testing::stacked(lx), 1e-12, "inputs");
  (void)gy;
}
