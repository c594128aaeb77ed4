// SPDX-License-Identifier: MIT
// Per-example gradients with st::vmap(st::grad(loss)), and DP-SGD-style
// clipping. The loss is written for ONE example; vmap runs it on the whole
// batch at once, and vmap(grad(loss), {st::none, 0, 0}) gives the gradient of
// every example's loss with respect to the shared parameters (st::none: not
// mapped) in one pass. The program checks them against a loop of
// single-example grads (exit 1 on a mismatch), then trains a few steps where
// each example's gradient is clipped to norm <= C before averaging, as
// differentially private SGD does (Abadi et al. 2016; the noise is left out).
//   per_example_gradients [--small]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include <strata.hpp>

namespace st = strata;
using Params = std::map<std::string, st::Tensor>;

// One example: x [in], y [classes] one-hot. A 2-layer ReLU MLP, cross-entropy.
auto loss = [](const auto& p, const auto& x, const auto& y) {
  auto h = st::relu(st::matmul(p.at("w1"), x) + p.at("b1"));
  auto logits = st::matmul(p.at("w2"), h) + p.at("b2");
  return -st::sum(y * st::log_softmax(logits, 0));
};

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const int64_t batch = small ? 16 : 128, in = 20, hidden = 32, classes = 4;
  const int steps = small ? 3 : 20;
  Params p{{"w1", st::randn({hidden, in}, 1) * (1 / std::sqrt(double(in)))},
           {"b1", st::zeros({hidden})},
           {"w2", st::randn({classes, hidden}, 2) * (1 / std::sqrt(double(hidden)))},
           {"b2", st::zeros({classes})}};
  // Labels from a fixed random linear rule, so that there is something to learn.
  const st::Tensor X = st::randn({batch, in}, 3);
  const st::Tensor labels = st::argmax(st::matmul(X, st::randn({in, classes}, 4)), 1);
  const st::Tensor Y = st::one_hot(labels, classes);

  // 1. Per-example gradients: every gradient gets a leading batch axis.
  auto per_example = st::vmap(st::grad(loss), {st::none, 0, 0});
  auto [g, gx, gy] = per_example(p, X, Y);
  std::printf("per-example gradient of w1: shape [%lld, %lld, %lld]\n",
              (long long)g.at("w1").shape()[0], (long long)g.at("w1").shape()[1],
              (long long)g.at("w1").shape()[2]);

  // 2. Check against a loop of single-example grads.
  double worst = 0;
  for (int64_t i = 0; i < batch; ++i) {
    auto [gi, gxi, gyi] = st::grad(loss, p, X.ix(i), Y.ix(i));
    for (const auto& [name, t] : gi) {
      const double diff = st::max(st::abs(g.at(name).ix(i) - t)).item<double>();
      worst = std::max(worst, diff / (1 + st::max(st::abs(t)).item<double>()));
    }
  }
  std::printf("largest relative difference to the loop: %.2e\n", worst);
  if (!(worst < 1e-5)) {
    std::printf("MISMATCH between vmap(grad) and the loop of grads\n");
    return 1;
  }

  // 3. DP-SGD-style steps: clip each example's gradient to norm <= clip, then average.
  const double clip = 1.0, lr = 0.5;
  for (int step = 0; step < steps; ++step) {
    auto [gs, unused_x, unused_y] = per_example(p, X, Y);
    st::Tensor sq = st::zeros({batch});
    for (const auto& [name, t] : gs) sq = sq + st::sum(st::reshape(t * t, {batch, -1}), {1});
    const st::Tensor norms = st::sqrt(sq);                                  // [batch]
    const st::Tensor scale = st::minimum(st::ones({batch}), clip / norms);  // <= 1
    for (auto& [name, w] : p) {
      st::Shape s{batch};
      for (int64_t i = 1; i < gs.at(name).ndim(); ++i) s.push_back(1);
      const st::Tensor clipped = gs.at(name) * st::reshape(scale, s);
      w = w - lr * st::mean(clipped, {0});
    }
    const double mean_loss = st::mean(st::vmap(loss, {st::none, 0, 0})(p, X, Y)).item<double>();
    std::printf("step %d: loss %.4f, per-example gradient norms %.3f .. %.3f, %lld clipped\n", step,
                mean_loss, st::min(norms).item<double>(), st::max(norms).item<double>(),
                (long long)st::sum(norms > clip).item<int64_t>());
  }
  return 0;
}
