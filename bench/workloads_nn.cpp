// SPDX-License-Identifier: MIT
// nn workloads: one training step of an MLP classifier, as a user writes it
// (st::grad over the parameter map, st::nn::SGD), against a hand-written Eigen
// MLP with manual backpropagation doing the same arithmetic (one thread,
// -march=native, or -march=haswell when the run is restricted to AVX2).
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "bench/peers.hpp"

namespace bench {
namespace {

constexpr int64_t kMlpBatch = 128, kIn = 784, kHidden = 256, kClasses = 10;
constexpr double kLr = 0.01;

st::Tensor random_labels(uint64_t seed) {
  return (st::rand({kMlpBatch}, seed, st::f64) * double(kClasses)).to(st::i64);
}

// 784 -> 256 -> 256 -> 10 ReLU MLP, softmax cross-entropy (mean), SGD.
Body mlp_strata_step() {
  const st::nn::MLP model({kIn, kHidden, kHidden, kClasses}, st::nn::Activation::relu);
  auto params = std::make_shared<st::nn::Params>(model.init(1));
  auto opt = std::make_shared<st::nn::SGD>(kLr);
  const st::Tensor x = st::randn({kMlpBatch, kIn}, 2);
  const st::Tensor y = random_labels(3);
  return [=] {
    auto loss = [&](const auto& p) { return st::nn::cross_entropy(model(p, x), y); };
    const st::nn::Params grads = st::grad(loss, *params);
    opt->step(*params, grads);
    g_sink = params->at("0.bias").raw();
  };
}

// The same step in Eigen (bench/peers_eigen.cpp, built for the instruction set in use).
Body eigen_step() {
  const EigenLib& eigen = eigen_lib();
  auto weights = [](int64_t out, int64_t in, uint64_t seed) {
    return st::nn::init::uniform({out, in}, -1 / std::sqrt(double(in)), 1 / std::sqrt(double(in)),
                                 seed)
        .to_vector<float>();
  };
  const std::vector<float> w1 = weights(kHidden, kIn, 11), w2 = weights(kHidden, kHidden, 12),
                           w3 = weights(kClasses, kHidden, 13);
  const std::vector<float> xv = st::randn({kMlpBatch, kIn}, 2).to_vector<float>();
  const std::vector<int64_t> yv = random_labels(3).to_vector<int64_t>();
  auto net =
      std::shared_ptr<void>(eigen.mlp_new(w1.data(), w2.data(), w3.data(), xv.data(), yv.data(),
                                          kMlpBatch, kIn, kHidden, kClasses, float(kLr)),
                            eigen.mlp_free);
  return [net, step = eigen.mlp_step] { step(net.get()); };
}

// Per-example gradients of the same model's loss over the batch: the loss of one
// example (x [784], y one-hot [10]), vmap(grad(loss), {none, 0, 0}) for all 128.
auto example_loss = [](const st::nn::MLP& model) {
  return [&model](const auto& p, const auto& x, const auto& y) {
    return -st::sum(y * st::log_softmax(model(p, x), 0));
  };
};
Body strata_per_example() {
  auto model = std::make_shared<st::nn::MLP>(std::vector<int64_t>{kIn, kHidden, kHidden, kClasses},
                                             st::nn::Activation::relu);
  const st::nn::Params params = model->init(1);
  const st::Tensor x = st::randn({kMlpBatch, kIn}, 2);
  const st::Tensor y = st::one_hot(random_labels(3), kClasses);
  return [=] {
    auto grads = st::vmap(st::grad(example_loss(*model)), {st::none, 0, 0})(params, x, y);
    g_sink = std::get<0>(grads).at("0.weight").raw();
  };
}
// The peer: a loop of 128 single-example grads, stacked.
Body loop_per_example() {
  auto model = std::make_shared<st::nn::MLP>(std::vector<int64_t>{kIn, kHidden, kHidden, kClasses},
                                             st::nn::Activation::relu);
  const st::nn::Params params = model->init(1);
  const st::Tensor x = st::randn({kMlpBatch, kIn}, 2);
  const st::Tensor y = st::one_hot(random_labels(3), kClasses);
  return [=] {
    std::map<std::string, std::vector<st::Tensor>> per;
    for (int64_t i = 0; i < kMlpBatch; ++i) {
      const st::nn::Params g =
          std::get<0>(st::grad(example_loss(*model), params, x.ix(i), y.ix(i)));
      for (const auto& [k, t] : g) per[k].push_back(t);
    }
    g_sink = st::stack(per.at("0.weight"), 0).raw();
  };
}

const Register kNn(40, [](std::vector<Workload>& w) {
  Workload step{"mlp_train_step_b128", mlp_strata_step};
  // Multiply-adds of the three forward GEMMs and the five backward ones (dW1..3, dH1, dH2).
  const double fwd = double(kMlpBatch) * (kIn * kHidden + kHidden * kHidden + kHidden * kClasses);
  step.flops = 2 * (fwd + 2 * fwd - double(kMlpBatch) * kIn * kHidden);
  step.peers.push_back({"eigen_manual_backprop", eigen_step});
  w.push_back(step);
  Workload per{"per_example_grads_mlp_b128", strata_per_example};
  per.flops = step.flops;  // the same products, as batched outer products for the weights
  per.peers.push_back({"loop_of_grads", loop_per_example});
  w.push_back(per);
});

}  // namespace
}  // namespace bench
