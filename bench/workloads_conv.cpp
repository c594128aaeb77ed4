// SPDX-License-Identifier: MIT
// Convolution workloads: the forward and backward pass of st::conv (windows, the im2col
// copy and a batched matmul; its gradient a matmul and a fold) on LeNet's shapes and on a
// ResNet stem, against PyTorch's conv2d (oneDNN on the CPU), in f32.
#include <memory>

#include "bench/bench.hpp"

namespace bench {
namespace {

// LeNet-style: x [64, 1, 28, 28] -> conv 3 x 3 to 32 channels, relu -> conv 3 x 3 to 64;
// the loss is the sum of the output, the gradients those of both weights (x is data).
Body lenet_step() {
  const st::Tensor x = st::randn({64, 1, 28, 28}, 21);
  const st::Tensor w1 = st::randn({32, 1, 3, 3}, 22) * (1 / 3.0);
  const st::Tensor w2 = st::randn({64, 32, 3, 3}, 23) * (1 / 17.0);
  return [=] {
    auto loss = [&](const auto& a, const auto& b) {
      return st::sum(st::conv(st::relu(st::conv(x, a)), b));
    };
    const auto [g1, g2] = st::grad(loss, w1, w2);
    g_sink = g2.raw();
    (void)g1;
  };
}

// A ResNet stem: x [32, 3, 112, 112] -> conv 7 x 7, stride 2, padding 3, to 64 channels
// [32, 64, 56, 56]; the gradient of the weight.
Body stem_step() {
  const st::Tensor x = st::randn({32, 3, 112, 112}, 24);
  const st::Tensor w = st::randn({64, 3, 7, 7}, 25) * (1 / 12.0);
  return [=] {
    auto loss = [&](const auto& a) {
      return st::sum(st::conv(x, a, {.stride = {2}, .padding = {3}}));
    };
    g_sink = st::grad(loss, w).raw();
  };
}

const Register kConv(42, [](std::vector<Workload>& w) {
  Workload lenet{"conv2d_fwd_bwd_lenet_b64", lenet_step};
  // Multiply-adds: conv1 64 x 32 x 26^2 x 9, conv2 64 x 64 x 24^2 x 288; the backward pass
  // computes conv1's weight gradient and conv2's input and weight gradients.
  const double c1 = 64.0 * 32 * 26 * 26 * 9, c2 = 64.0 * 64 * 24 * 24 * 288;
  lenet.flops = 2 * (2 * c1 + 3 * c2);
  w.push_back(lenet);
  Workload stem{"conv2d_fwd_bwd_stem_b32", stem_step};
  stem.flops = 2 * 2 * (32.0 * 64 * 56 * 56 * 147);
  w.push_back(stem);
});

}  // namespace
}  // namespace bench
