// SPDX-License-Identifier: MIT
// Autodiff workloads: transforms timed whole, forward and backward together.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "bench/peers.hpp"

namespace bench {
namespace {

// Layers [from, to) of tanh(h W_l), checkpointed recursively in quarters down to at most
// four plain layers (64 layers: three levels of checkpoints).
struct NestedLayers {
  const std::vector<st::Tensor>* ws;
  int64_t from, to;
  template <class H>
  H operator()(const H& h0) const {
    H h = h0;
    if (to - from <= 4) {
      for (int64_t l = from; l < to; ++l) h = st::tanh(st::matmul(h, (*ws)[std::size_t(l)]));
      return h;
    }
    const int64_t step = (to - from) / 4;
    for (int64_t b = from; b < to; b += step) h = st::checkpoint(NestedLayers{ws, b, b + step})(h);
    return h;
  }
};

// The gradient of sum(tanh(... tanh(x W0) ... W63)), x [256, 512], with respect to x (the
// weights are constants: a checkpointed function takes the values it differentiates as
// arguments), with blocks of `block` layers checkpointed (0: none; -1: nested quarters).
Body checkpointed_mlp_grad(int64_t block) {
  constexpr int64_t kLayers = 64, kWidth = 512, kBatch = 256;
  std::vector<st::Tensor> ws;
  for (int64_t l = 0; l < kLayers; ++l) {
    ws.push_back(scaled_matrix(kWidth, 600 + uint64_t(l), st::f32));
  }
  const st::Tensor x = st::randn({kBatch, kWidth}, 601, st::f32);
  auto layers = [ws](int64_t from, int64_t to) {
    return [ws, from, to](const auto& h_in) {
      auto h = h_in;
      for (int64_t l = from; l < to; ++l) h = st::tanh(st::matmul(h, ws[std::size_t(l)]));
      return h;
    };
  };
  auto shared = std::make_shared<std::vector<st::Tensor>>(ws);
  auto loss = [block, layers, shared](const auto& h0) {
    if (block == 0) return st::sum(layers(0, kLayers)(h0));
    if (block < 0) return st::sum(NestedLayers{shared.get(), 0, kLayers}(h0));
    auto h = h0;
    for (int64_t b = 0; b < kLayers; b += block) h = st::checkpoint(layers(b, b + block))(h);
    return st::sum(h);
  };
  return [=] { g_sink = st::grad(loss, x).raw(); };
}

// f(x) = sum(tanh(W x)^2) + sum(x^2) / 2, the hessian_f64_n* function.
auto tanh_loss(const st::Tensor& W) {
  return [W](const auto& x) {
    const auto t = st::tanh(st::matmul(W, x));
    return st::sum(t * t) + 0.5 * st::sum(x * x);
  };
}

// Its closed-form Hessian in Eigen (bench/peers_eigen.cpp), for the same W and x as
// the workload; checked once against st::hessian before it is timed.
Body closed_form_hessian(int64_t n) {
  const st::Tensor W = scaled_matrix(n, 11, st::f64);
  const st::Tensor x = st::randn({n}, 12, st::f64);
  auto w = std::make_shared<std::vector<double>>(W.to_vector<double>());
  auto xv = std::make_shared<std::vector<double>>(x.to_vector<double>());
  auto f = eigen_lib().hessian_tanh;
  std::vector<double> closed(std::size_t(n * n));
  f(w->data(), xv->data(), n, closed.data());
  const std::vector<double> ad = st::hessian(tanh_loss(W), x).to_vector<double>();
  double worst = 0;
  for (std::size_t i = 0; i < ad.size(); ++i) {
    worst = std::max(worst, std::abs(ad[i] - closed[i]) / (1.0 + std::abs(closed[i])));
  }
  if (!(worst <= 1e-10)) {
    throw std::runtime_error("closed-form Hessian differs from st::hessian by " +
                             std::to_string(worst) + " (relative)");
  }
  return [=] { f(w->data(), xv->data(), n, nullptr); };
}

// The transforms: their cost over the raw kernels is the per-op bookkeeping
// (tape nodes, dual values), which the chain of tiny ops exposes, and the
// batched pass (Batched<T>) of jacfwd, jacrev and hessian.
const Register kAd(20, [](std::vector<Workload>& w) {
  // 1000 x (sin, mul, add) on one element: 3000 ops, forward and backward.
  Workload chain{"ad_overhead_chain_3000ops", [] {
                   const st::Tensor x = st::full({1}, 0.5, st::f32);
                   auto f = [](const auto& x0) {
                     auto x = x0;
                     for (int i = 0; i < 1000; ++i) x = st::sin(x) * x + 1.0;
                     return x;
                   };
                   return [=] { g_sink = st::value_and_grad(f, x).second.raw(); };
                 }};
  chain.ops = 3000;
  w.push_back(chain);
  // 1000 adds of 1 MiB tensors, recorded and pulled back: add keeps no
  // residuals, so the tape holds O(1) tensors ("tape_mib": MiB in use after
  // recording, beyond the leaf and the output; it was 999 MiB when every
  // binary op kept its operands and output).
  auto add_chain = [](const auto& a) {
    auto y = a;
    for (int i = 0; i < 1000; ++i) y = y + a;
    return y;
  };
  Workload tape{"ad_tape_add_chain_1000x1MiB", [add_chain] {
                  const st::Tensor x = st::randn({int64_t{1} << 18}, 31, st::f32);
                  const st::Tensor seed = st::ones({int64_t{1} << 18}, st::f32);
                  return [=] { g_sink = st::vjp(add_chain, x).second(seed).raw(); };
                }};
  tape.ops = 1000;
  tape.measures.push_back({"tape_mib", [add_chain] {
                             const st::Tensor x = st::randn({int64_t{1} << 18}, 31, st::f32);
                             const std::size_t before = st::cpu_allocator().stats().bytes_in_use;
                             auto recorded = st::vjp(add_chain, x);
                             const std::size_t after = st::cpu_allocator().stats().bytes_in_use;
                             return (double(after) - double(before)) / double(1 << 20) - 1.0;
                           }});
  w.push_back(tape);
  // f(x) = sum(tanh(W x)^2) + sum(x^2) / 2: forward over reverse, one batched pass.
  // Peer: the closed form W^T diag((2 - 6 t^2)(1 - t^2)) W + I in Eigen, checked
  // against st::hessian in its setup; the row reports strata / closed form.
  for (const int64_t n : {16, 64, 256}) {
    Workload h{"hessian_f64_n" + std::to_string(n), [n] {
                 const st::Tensor W = scaled_matrix(n, 11, st::f64);
                 const st::Tensor x = st::randn({n}, 12, st::f64);
                 return [=] { g_sink = st::hessian(tanh_loss(W), x).raw(); };
               }};
    h.peers.push_back({"closed_form", [n] { return closed_form_hessian(n); }});
    h.relative_to = {"closed_form"};
    w.push_back(h);
  }
  // g(x) = tanh(W2 tanh(W1 x)): a square [n, n] Jacobian, one batched jvp or vjp.
  for (const bool forward : {true, false}) {
    for (const int64_t n : {64, 256}) {
      w.push_back(
          {std::string(forward ? "jacfwd" : "jacrev") + "_f32_n" + std::to_string(n), [n, forward] {
             const st::Tensor W1 = scaled_matrix(n, 21, st::f32);
             const st::Tensor W2 = scaled_matrix(n, 22, st::f32);
             const st::Tensor x = st::randn({n}, 23, st::f32);
             auto g = [W1, W2](const auto& x) {
               return st::tanh(st::matmul(W2, st::tanh(st::matmul(W1, x))));
             };
             return [=] { g_sink = (forward ? st::jacfwd(g, x) : st::jacrev(g, x)).raw(); };
           }});
    }
  }
  // st::checkpoint: the gradient of a 64-layer tanh MLP of width 512, batch 256, with
  // respect to its input, with blocks of 8 layers checkpointed; the
  // peer is the plain gradient. Measures: the peak MiB in use beyond the inputs and
  // weights, for the checkpointed gradient, the plain one, and one with every layer
  // checkpointed (the tape keeps the same activations then: each layer's input is the
  // previous tanh's output, which the plain tape keeps anyway), and one with the layers
  // checkpointed in nested quarters (4 x 4 x 4: three levels, each recomputed once more).
  Workload ckpt{"checkpoint_tanh_mlp_64x512_b256", [] { return checkpointed_mlp_grad(8); }};
  ckpt.flops = 64 * 2.0 * 256 * 512 * 512 * 3;  // forward, recompute, the backward GEMM
  ckpt.peers.push_back({"plain_grad", [] { return checkpointed_mlp_grad(0); }});
  for (const int64_t block : {8, 0, 1, -1}) {
    const std::string name = block == 8   ? "peak_mib"
                             : block == 0 ? "plain_peak_mib"
                             : block == 1 ? "per_layer_peak_mib"
                                          : "nested_peak_mib";
    ckpt.measures.push_back({name, [block] {
                               const Body run = checkpointed_mlp_grad(block);
                               st::CachingAllocator& a = st::cpu_allocator();
                               const std::size_t before = a.stats().bytes_in_use;
                               a.reset_peak();
                               run();
                               return double(a.stats().peak_bytes_in_use - before) /
                                      double(1 << 20);
                             }});
  }
  w.push_back(ckpt);
});

}  // namespace
}  // namespace bench
