// SPDX-License-Identifier: MIT
// The logistic-regression part of JAX's Autodiff Cookbook, in strata: one
// neuron predicts a probability from three measurements; grad, value_and_grad,
// jacfwd, jacrev and their composition give its gradients, Jacobians and
// Hessians. Every function is a generic lambda, so the same code runs on
// plain tensors and on the dual types the transforms pass in.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <tuple>
#include <vector>

#include <strata.hpp>

namespace st = strata;

static void show(const char* what, const st::Tensor& t) {
  std::cout << what << "  shape " << t.shape() << "\n" << t << "\n\n";
}

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  std::cout.precision(6);

  // Four measurements of three quantities (one per row), and whether each turned out true.
  const st::Tensor inputs = st::from_vector(std::vector<double>{0.52, 1.12, 0.77,    //
                                                                0.88, -1.08, 0.15,   //
                                                                0.52, 0.06, -1.30,   //
                                                                0.74, -2.49, 1.39},  //
                                            {4, 3});
  const st::Tensor targets = st::from_vector(std::vector<double>{1, 1, 0, 1});

  // The model: the probability that a label is true. W is [3], b a scalar.
  auto predict = [](const auto& W, const auto& b, const auto& x) {
    return st::sigmoid(st::matmul(x, W) + b);
  };
  // Training loss: the negative log-likelihood of the targets.
  auto loss = [&](const auto& W, const auto& b) {
    const auto p = predict(W, b, inputs);
    return -st::sum(st::log(p * targets + (1.0 - p) * (1.0 - targets)));
  };

  st::Tensor W = st::randn({3}, /*seed=*/0, st::f64);
  st::Tensor b = st::randn({}, /*seed=*/1, st::f64);
  show("W (random start):", W);
  show("b (random start):", b);
  show("predict(W, b, inputs): the model's probabilities before training", predict(W, b, inputs));
  show("loss(W, b):", loss(W, b));

  // One argument at a time: the others are captured, so they are constants.
  show("grad of the loss w.r.t. W (b held fixed):",
       st::grad([&](const auto& w) { return loss(w, b); }, W));
  show("grad of the loss w.r.t. b (W held fixed):",
       st::grad([&](const auto& c) { return loss(W, c); }, b));

  // Both at once, from one backward pass.
  auto [gW, gb] = st::grad(loss, W, b);
  show("grad(loss, W, b): d/dW, the same as above", gW);
  show("grad(loss, W, b): d/db, the same as above", gb);

  // The value comes for free with the gradients.
  auto [value, grads] = st::value_and_grad(loss, W, b);
  std::cout << "value_and_grad(loss, W, b): loss " << value.item<double>() << ", d/db "
            << std::get<1>(grads).item<double>() << "\n\n";

  // A few steps of gradient descent: the loss goes down.
  std::cout << "gradient descent, step size 1:\n";
  st::Tensor Wt = W, bt = b;
  for (int step = 0; step < (small ? 3 : 8); ++step) {
    auto [l, g] = st::value_and_grad(loss, Wt, bt);
    std::cout << "  step " << step << "  loss " << l.item<double>() << "\n";
    Wt = Wt - std::get<0>(g);
    bt = bt - std::get<1>(g);
  }
  std::cout << "\n";
  show("predictions after training (targets are 1 1 0 1):", predict(Wt, bt, inputs));

  // Check the W gradient against central differences, one coordinate at a time.
  const double eps = 1e-6;
  const std::vector<double> ad = gW.to_vector<double>();
  std::cout << "finite-difference check of d loss / dW (eps " << eps << "):\n";
  double worst = 0;
  for (int i = 0; i < 3; ++i) {
    std::vector<double> h(3, 0.0);
    h[std::size_t(i)] = eps;
    const st::Tensor dW = st::from_vector(h);
    const double fd = (loss(W + dW, b).item<double>() - loss(W - dW, b).item<double>()) / (2 * eps);
    std::cout << "  W[" << i << "]  AD " << ad[std::size_t(i)] << "  FD " << fd << "\n";
    worst = std::max(worst, std::abs(fd - ad[std::size_t(i)]));
  }
  std::cout << "  largest |AD - FD| = " << worst << "\n\n";

  // predict maps [3] -> [4], so its derivative is a [4, 3] Jacobian.
  auto f = [&](const auto& w) { return predict(w, b, inputs); };
  const st::Tensor Jf = st::jacfwd(f, W);
  const st::Tensor Jr = st::jacrev(f, W);
  show(
      "jacfwd(predict) w.r.t. W: a tangent per input, in one batched forward pass (tall Jacobians)",
      Jf);
  show("jacrev(predict) w.r.t. W: a cotangent per output, in one batched backward pass (wide ones)",
       Jr);
  std::cout << "max |jacfwd - jacrev| = " << st::max(st::abs(Jf - Jr)).item<double>() << "\n\n";
  show("grad of a vector-valued function sums the outputs: grad(sum(predict))",
       st::grad([&](const auto& w) { return st::sum(f(w)); }, W));
  show("... the same as jacrev's rows summed:", st::sum(Jr, {0}));

  // Forward over reverse: the derivative of the Jacobian, one [3, 3] Hessian per output.
  const st::Tensor H = st::jacfwd(st::jacrev(f), W);
  show("jacfwd(jacrev(predict)) w.r.t. W: the [4, 3, 3] second derivatives", H);
  // For p = sigmoid(x.W + b), d2p/dW2 = p (1 - p) (1 - 2p) x x^T, row by row.
  const st::Tensor p = predict(W, b, inputs);
  const st::Tensor exact = (p * (1.0 - p) * (1.0 - 2.0 * p)).reshape({4, 1, 1}) *
                           inputs.reshape({4, 3, 1}) * inputs.reshape({4, 1, 3});
  std::cout << "max |H - p(1-p)(1-2p) x x^T| = " << st::max(st::abs(H - exact)).item<double>()
            << "\n\n";
  show("st::hessian of the loss w.r.t. W: [3, 3], symmetric",
       st::hessian([&](const auto& w) { return loss(w, b); }, W));
  return 0;
}
