// SPDX-License-Identifier: MIT
// st::jit workloads: each function timed as a replayed plan (the row) against the same
// function run eagerly (the peer "eager", in the same run), after one call that traces it.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "bench/bench.hpp"

namespace bench {
namespace {

// A row timing make(true)'s body (the function under st::jit, traced once in the setup)
// against make(false)'s (the same function run eagerly) as the peer "eager".
template <class Make>
Workload jit_row(std::string name, Make make) {
  Workload w{std::move(name), [make] { return make(true); }};
  w.peers.push_back({"eager", [make] { return make(false); }});
  return w;
}

// 1000 x (sin, mul, add) on one element, value and gradient: ad_overhead_chain_3000ops.
Body jit_chain(bool jitted) {
  const st::Tensor x = st::full({1}, 0.5, st::f32);
  auto f = [](const auto& x0) {
    auto x = x0;
    for (int i = 0; i < 1000; ++i) x = st::sin(x) * x + 1.0;
    return x;
  };
  auto vg = st::value_and_grad(f);
  if (!jitted) return [=] { g_sink = vg(x).second.raw(); };
  auto j = st::jit(vg);
  (void)j(x);
  return [=] { g_sink = j(x).second.raw(); };
}

// Ten unary and binary ops on one [4096, 4096] f32 input, one output.
Body jit_elementwise_chain(bool jitted) {
  const st::Tensor x = st::randn({4096, 4096}, 70, st::f32);
  auto f = [](const st::Tensor& v) {
    st::Tensor y = v * 1.5 + 0.25;
    y = st::tanh(y) * v;
    y = st::exp(y * -0.5) + y;
    y = st::sqrt(st::abs(y)) - v;
    return y * y;
  };
  if (!jitted) return [=] { g_sink = f(x).raw(); };
  auto j = st::jit(f);
  (void)j(x);
  return [=] { g_sink = j(x).raw(); };
}

// Ten arithmetic ops (no transcendental function) on the same input: memory-bound eagerly,
// so the row shows what one pass instead of ten saves.
Body jit_arith_chain(bool jitted) {
  const st::Tensor x = st::randn({4096, 4096}, 72, st::f32);
  auto f = [](const st::Tensor& v) {
    st::Tensor y = v * 1.5 + 0.25;
    y = st::abs(y) - v;
    y = st::maximum(y, v * 0.5);
    y = y * y - 1.0;
    return -st::minimum(y, 4.0);
  };
  if (!jitted) return [=] { g_sink = f(x).raw(); };
  auto j = st::jit(f);
  (void)j(x);
  return [=] { g_sink = j(x).raw(); };
}

// 784 -> 256 -> 256 -> 10 ReLU MLP, batch 128: value_and_grad and an AdamW step in one call.
Body jit_mlp_step(bool jitted) {
  constexpr int64_t batch = 128, in = 784, hidden = 256, classes = 10;
  auto model = std::make_shared<st::nn::MLP>(std::vector<int64_t>{in, hidden, hidden, classes},
                                             st::nn::Activation::relu);
  auto params = std::make_shared<st::nn::Params>(model->init(1));
  auto opt = std::make_shared<st::nn::AdamW>(1e-3);
  const st::Tensor x = st::randn({batch, in}, 2);
  const st::Tensor y = (st::rand({batch}, 3, st::f64) * double(classes)).to(st::i64);
  auto step = [model, params, opt](const st::Tensor& xb, const st::Tensor& yb) {
    auto loss = [&](const auto& p) { return st::nn::cross_entropy((*model)(p, xb), yb); };
    auto [l, g] = st::value_and_grad(loss)(*params);
    opt->step(*params, g);
    return l;
  };
  if (!jitted) return [=] { g_sink = step(x, y).raw(); };
  auto j = st::jit(step);
  (void)j(x, y);
  return [=] { g_sink = j(x, y).raw(); };
}

// A transformer block's elementwise tail on [4096, 768] f32: gelu, then layer norm.
Body jit_gelu_layernorm(bool jitted) {
  const st::Tensor x = st::randn({4096, 768}, 71, st::f32);
  auto f = [](const st::Tensor& v) { return st::layer_norm(st::gelu(v), {768}); };
  if (!jitted) return [=] { g_sink = f(x).raw(); };
  auto j = st::jit(f);
  (void)j(x);
  return [=] { g_sink = j(x).raw(); };
}

const Register kJit(25, [](std::vector<Workload>& w) {
  Workload chain = jit_row("jit_overhead_chain_3000ops", jit_chain);
  chain.ops = 3000;
  w.push_back(chain);
  Workload ew = jit_row("jit_elementwise_chain10_f32_4096x4096", jit_elementwise_chain);
  ew.bytes = 2.0 * 4096 * 4096 * 4;  // one read and one write: what a fused chain moves
  w.push_back(ew);
  Workload arith = jit_row("jit_elementwise_chain10_arith_f32_4096x4096", jit_arith_chain);
  arith.bytes = ew.bytes;
  w.push_back(arith);
  w.push_back(jit_row("jit_mlp_train_step_b128", jit_mlp_step));
  w.push_back(jit_row("jit_gelu_layernorm_f32", jit_gelu_layernorm));
});

}  // namespace
}  // namespace bench
