// SPDX-License-Identifier: MIT
// The Jacobian of a small network, x -> MLP(x) from R^4 to R^3, two ways:
// st::jacfwd pushes one tangent per input (4 of them, batched into one
// forward pass), st::jacrev pulls one cotangent per output (3, batched into
// one backward pass). They agree to rounding, and both agree with central
// finite differences. The layer is the same
// st::nn::MLP used for training: applied to dual values, it just works.
// Then the Jacobian with respect to the weights, a map of tensors, chosen
// with st::argnums<0> among f(params, x)'s two arguments.
//   jacobian [--small]
#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include <strata.hpp>

namespace st = strata;
namespace nn = st::nn;

int main(int, char**) {
  const nn::MLP net({4, 8, 3}, nn::Activation::tanh, st::f64);
  const nn::Params params = net.init(/*seed=*/7);
  auto f = [&](const auto& x) { return net(params, x); };  // params are constants here

  const st::Tensor x = st::randn({4}, /*seed=*/3, st::f64);
  const st::Tensor Jf = st::jacfwd(f, x), Jr = st::jacrev(f, x);
  std::cout << "x = " << x << "\nf(x) = " << f(x) << "\n\njacfwd (forward mode, shape "
            << Jf.shape() << "):\n"
            << Jf << "\n\njacrev (reverse mode):\n"
            << Jr << "\n\n";

  // Central differences, one input coordinate at a time.
  const std::vector<double> xv = x.to_vector<double>();
  std::vector<double> fd(12);
  const double eps = 1e-6;
  for (int j = 0; j < 4; ++j) {
    std::vector<double> plus = xv, minus = xv;
    plus[std::size_t(j)] += eps;
    minus[std::size_t(j)] -= eps;
    const std::vector<double> a = f(st::from_vector(plus)).to_vector<double>();
    const std::vector<double> b = f(st::from_vector(minus)).to_vector<double>();
    for (int i = 0; i < 3; ++i)
      fd[std::size_t(i * 4 + j)] = (a[std::size_t(i)] - b[std::size_t(i)]) / (2 * eps);
  }
  const double modes = st::max(st::abs(Jf - Jr)).item<double>();
  const double numeric = st::max(st::abs(Jf - st::from_vector(fd, {3, 4}))).item<double>();
  std::cout << "max |jacfwd - jacrev|            = " << modes << "\n"
            << "max |jacfwd - finite difference| = " << numeric << "\n";

  // With respect to the weights: f(params, x) as a function of two arguments, and
  // st::argnums<0> picks the first, a tree (a map of tensors). The result is the same map,
  // each entry the Jacobian of the output with respect to that weight: [3] ++ its shape.
  auto g = [&](const auto& p, const auto& v) { return net(p, v); };
  const nn::Params Jp = st::jacrev(g, st::argnums<0>, params, x);
  const nn::Params Jpf = st::jacfwd(g, st::argnums<0>, params, x);
  double weights = 0;
  for (const auto& [name, J] : Jp) {
    std::cout << "d f / d " << name << ": shape " << J.shape() << "\n";
    weights = std::max(weights, st::max(st::abs(J - Jpf.at(name))).item<double>());
  }
  std::cout << "max |jacfwd - jacrev| over the weights = " << weights << "\n";
  const bool ok = Jf.shape() == st::Shape{3, 4} && modes < 1e-12 && numeric < 1e-8 &&
                  Jp.size() == params.size() && weights < 1e-12;
  std::cout << (ok ? "the two modes agree" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
