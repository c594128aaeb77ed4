// SPDX-License-Identifier: MIT
// Autodiff workloads: transforms timed whole, forward and backward together.
#include <cmath>

#include "bench/bench.hpp"

namespace bench {
namespace {

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
  for (const int64_t n : {16, 64, 256}) {
    w.push_back({"hessian_f64_n" + std::to_string(n), [n] {
                   const st::Tensor W = scaled_matrix(n, 11, st::f64);
                   const st::Tensor x = st::randn({n}, 12, st::f64);
                   auto f = [W](const auto& x) {
                     const auto t = st::tanh(st::matmul(W, x));
                     return st::sum(t * t) + 0.5 * st::sum(x * x);
                   };
                   return [=] { g_sink = st::hessian(f, x).raw(); };
                 }});
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
});

}  // namespace
}  // namespace bench
