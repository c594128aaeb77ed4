// SPDX-License-Identifier: MIT
// Custom derivative rules and rematerialisation: st::custom_jvp, st::custom_vjp
// and st::checkpoint (as jax.custom_jvp, jax.custom_vjp and jax.checkpoint).
//
// 1. log(1 + e^x) differentiated through its ops at x = 1000 multiplies
//    1 / (1 + inf) = 0 by e^x = inf: NaN in JAX and PyTorch, 0 with strata's
//    NaN-safe products, wrong either way (the derivative is 1). A custom_jvp rule
//    says it is sigmoid(x), right everywhere, and second derivatives
//    differentiate the rule.
// 2. A gradient-clipping identity: custom_vjp's backward pass clips the cotangent.
// 3. A deep tanh network's gradient with its blocks checkpointed: the tape keeps
//    each block's input only, and the backward pass recomputes the rest; the
//    gradient is identical bit for bit and the peak memory is printed.
// The program checks each claim and exits 1 when one fails.
//   custom_rules [--small]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include <strata.hpp>

namespace st = strata;

namespace {

int failures = 0;
void check(bool ok, const char* what) {
  std::printf("  %-62s %s\n", what, ok ? "ok" : "FAILED");
  if (!ok) ++failures;
}

// The most bytes in use while `run` runs, beyond those in use before it.
template <class Run>
double peak_mib(Run run) {
  st::CachingAllocator& a = st::cpu_allocator();
  const std::size_t before = a.stats().bytes_in_use;
  a.reset_peak();
  run();
  return double(a.stats().peak_bytes_in_use - before) / double(1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;

  std::printf("1. log1pexp with a custom_jvp rule\n");
  const auto log1pexp =
      st::custom_jvp([](const auto& x) { return st::log1p(st::exp(x)); },
                     [](const auto& x, const auto& t) {
                       return std::pair{st::log1p(st::exp(x)), st::sigmoid(x) * t};
                     },
                     "log1pexp");
  const st::Tensor x = st::from_vector(std::vector<double>{-2.0, 0.0, 3.0, 1000.0});
  auto total = [&](const auto& v) { return st::sum(log1pexp(v)); };
  auto naive = [](const auto& v) { return st::sum(st::log1p(st::exp(v))); };
  const std::vector<double> g = st::grad(total, x).to_vector<double>();
  const std::vector<double> gn = st::grad(naive, x).to_vector<double>();
  std::printf("  grad at x = 1000: rule %g, through the ops %g\n", g[3], gn[3]);
  check(g[3] == 1.0 && gn[3] != 1.0, "the rule's derivative is right where the ops' is not");
  const std::vector<double> h = st::hessian(total, x).to_vector<double>();
  const double s = 1.0 / (1.0 + std::exp(2.0));  // sigmoid(-2)
  check(std::abs(h[0] - s * (1 - s)) < 1e-12 && h[15] == 0.0,
        "its second derivative is sigmoid'(x), differentiated from the rule");

  std::printf("2. a gradient-clipping identity with a custom_vjp rule\n");
  const auto clip_gradient = st::custom_vjp(
      [](const auto& v) { return v; },
      [](const auto& v) {
        return std::pair{v, v};
      },
      [](const auto&, const auto& ct) { return st::clamp(ct, -1.0, 1.0); }, "clip_gradient");
  const st::Tensor w = st::randn({4}, 1, st::f64);
  const st::Tensor gw =
      st::grad([&](const auto& v) { return st::sum(clip_gradient(v) * 10.0); }, w);
  std::printf("  grad of sum(10 * clip_gradient(w)) =");
  for (double v : gw.to_vector<double>()) std::printf(" %g", v);
  std::printf("\n");
  check(gw.to_vector<double>() == std::vector<double>(4, 1.0), "cotangents of 10 are clipped to 1");

  std::printf("3. a deep tanh network, its blocks checkpointed\n");
  const int64_t layers = 64, width = small ? 64 : 512, batch = small ? 32 : 256;
  const int64_t block = 8;
  std::vector<st::Tensor> ws;
  for (int64_t l = 0; l < layers; ++l) {
    ws.push_back(st::randn({width, width}, 100 + uint64_t(l)) * (1.0 / std::sqrt(double(width))));
  }
  const st::Tensor input = st::randn({batch, width}, 7);
  auto layer_range = [&](int64_t from, int64_t to) {
    return [&, from, to](const auto& h0) {
      auto h = h0;
      for (int64_t l = from; l < to; ++l) h = st::tanh(st::matmul(h, ws[std::size_t(l)]));
      return h;
    };
  };
  auto plain = [&](const auto& h0) { return st::sum(layer_range(0, layers)(h0)); };
  auto checkpointed = [&](const auto& h0) {
    auto h = h0;
    for (int64_t b = 0; b < layers; b += block) h = st::checkpoint(layer_range(b, b + block))(h);
    return st::sum(h);
  };
  st::Tensor g_plain, g_ckpt;
  const double plain_mib = peak_mib([&] { g_plain = st::grad(plain, input); });
  const double ckpt_mib = peak_mib([&] { g_ckpt = st::grad(checkpointed, input); });
  std::printf(
      "  %lld layers of width %lld, batch %lld: peak %.1f MiB plain, %.1f MiB with "
      "blocks of %lld checkpointed (%.2fx)\n",
      (long long)layers, (long long)width, (long long)batch, plain_mib, ckpt_mib, (long long)block,
      ckpt_mib / plain_mib);
  check(g_plain.to_vector<float>() == g_ckpt.to_vector<float>(),
        "the checkpointed gradient is identical bit for bit");
  check(ckpt_mib < 0.5 * plain_mib, "and needs less than half the memory");
  return failures == 0 ? 0 : 1;
}
