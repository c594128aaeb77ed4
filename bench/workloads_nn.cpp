// SPDX-License-Identifier: MIT
// nn workloads: one training step of an MLP classifier, as a user writes it
// (st::grad over the parameter map, st::nn::SGD), against a hand-written Eigen
// MLP with manual backpropagation doing the same arithmetic.
#include <Eigen/Dense>

#include "bench/bench.hpp"

namespace bench {
namespace {

constexpr int64_t kBatch = 128, kIn = 784, kHidden = 256, kClasses = 10;
constexpr double kLr = 0.01;

st::Tensor random_labels(uint64_t seed) {
  return (st::rand({kBatch}, seed, st::f64) * double(kClasses)).to(st::i64);
}

// 784 -> 256 -> 256 -> 10 ReLU MLP, softmax cross-entropy (mean), SGD.
Body strata_step() {
  const st::nn::MLP model({kIn, kHidden, kHidden, kClasses}, st::nn::Activation::relu);
  auto params = std::make_shared<st::nn::Params>(model.init(1));
  auto opt = std::make_shared<st::nn::SGD>(kLr);
  const st::Tensor x = st::randn({kBatch, kIn}, 2);
  const st::Tensor y = random_labels(3);
  return [=] {
    auto loss = [&](const auto& p) { return st::nn::cross_entropy(model(p, x), y); };
    const st::nn::Params grads = st::grad(loss, *params);
    opt->step(*params, grads);
    g_sink = params->at("0.bias").raw();
  };
}

// The same step in Eigen: forward, manual backward, in-place SGD, all buffers preallocated.
Body eigen_step() {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Row = Eigen::RowVectorXf;
  struct Net {
    Mat W1, W2, W3, X, A1, A2, Z, dZ, dH2, dH1, dW1, dW2, dW3;
    Row b1, b2, b3;
    std::vector<int64_t> y;
  };
  auto n = std::make_shared<Net>();
  auto init = [](int64_t out, int64_t in, uint64_t seed) {
    const st::Tensor w = st::nn::init::uniform({out, in}, -1 / std::sqrt(double(in)),
                                               1 / std::sqrt(double(in)), seed);
    return Mat(Eigen::Map<const Mat>(w.to_vector<float>().data(), out, in));
  };
  n->W1 = init(kHidden, kIn, 11);
  n->W2 = init(kHidden, kHidden, 12);
  n->W3 = init(kClasses, kHidden, 13);
  n->b1 = Row::Zero(kHidden);
  n->b2 = Row::Zero(kHidden);
  n->b3 = Row::Zero(kClasses);
  const std::vector<float> xv = st::randn({kBatch, kIn}, 2).to_vector<float>();
  n->X = Eigen::Map<const Mat>(xv.data(), kBatch, kIn);
  n->y = random_labels(3).to_vector<int64_t>();
  return [n] {
    Net& m = *n;
    const float lr = float(kLr), inv_b = 1.0f / float(kBatch);
    m.A1.noalias() = m.X * m.W1.transpose();
    m.A1.rowwise() += m.b1;
    m.A1 = m.A1.cwiseMax(0.0f);
    m.A2.noalias() = m.A1 * m.W2.transpose();
    m.A2.rowwise() += m.b2;
    m.A2 = m.A2.cwiseMax(0.0f);
    m.Z.noalias() = m.A2 * m.W3.transpose();
    m.Z.rowwise() += m.b3;
    // dZ = (softmax(Z) - onehot(y)) / batch; the loss itself is not needed for the update.
    m.dZ = (m.Z.colwise() - m.Z.rowwise().maxCoeff()).array().exp().matrix();
    m.dZ.array().colwise() /= m.dZ.rowwise().sum().array();
    for (int64_t i = 0; i < kBatch; ++i) m.dZ(i, m.y[std::size_t(i)]) -= 1.0f;
    m.dZ *= inv_b;
    m.dW3.noalias() = m.dZ.transpose() * m.A2;
    m.dH2.noalias() = m.dZ * m.W3;
    m.dH2 = m.dH2.cwiseProduct((m.A2.array() > 0.0f).cast<float>().matrix());
    m.dW2.noalias() = m.dH2.transpose() * m.A1;
    m.dH1.noalias() = m.dH2 * m.W2;
    m.dH1 = m.dH1.cwiseProduct((m.A1.array() > 0.0f).cast<float>().matrix());
    m.dW1.noalias() = m.dH1.transpose() * m.X;
    m.b3 -= lr * m.dZ.colwise().sum();
    m.b2 -= lr * m.dH2.colwise().sum();
    m.b1 -= lr * m.dH1.colwise().sum();
    m.W3 -= lr * m.dW3;
    m.W2 -= lr * m.dW2;
    m.W1 -= lr * m.dW1;
  };
}

const Register kNn(40, [](std::vector<Workload>& w) {
  Workload step{"mlp_train_step_b128", strata_step};
  // Multiply-adds of the three forward GEMMs and the five backward ones (dW1..3, dH1, dH2).
  const double fwd = double(kBatch) * (kIn * kHidden + kHidden * kHidden + kHidden * kClasses);
  step.flops = 2 * (fwd + 2 * fwd - double(kBatch) * kIn * kHidden);
  step.peers.push_back({"eigen_manual_backprop", eigen_step});
  w.push_back(step);
});

}  // namespace
}  // namespace bench
