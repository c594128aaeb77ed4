// SPDX-License-Identifier: MIT
// Fitting a Gaussian process's hyper-parameters by Newton's method on the exact Hessian of
// the negative log marginal likelihood:
//   K = s^2 exp(-|x_i - x_j|^2 / (2 l^2)) + sigma^2 I,   L = cholesky(K),
//   nll(theta) = y^T K^-1 y / 2 + sum(log diag L) + n log(2 pi) / 2,
// with theta = (log l, log s, log sigma). The data are n points of a noisy smooth function,
// generated from fixed seeds. st::hessian differentiates through the Cholesky factor and the
// triangular solves twice; a step whose Hessian is not positive-definite (checked with
// st::linalg::eigvalsh) is damped until it is.
//   gaussian_process [--small] [--n N]   (n = 500 by default; --small: n = 60)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <strata.hpp>

namespace st = strata;

int main(int argc, char** argv) {
  int64_t n = 500;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) n = 60;
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = std::atoll(argv[++i]);
  }
  // Data: y = sin(x) + 0.3 cos(3 x) + 0.1 noise, x uniform in [-5, 5].
  const st::Tensor x = st::rand({n}, /*seed=*/1, st::f64) * 10.0 - 5.0;
  const st::Tensor y = st::sin(x) + 0.3 * st::cos(3.0 * x) + 0.1 * st::randn({n}, 2, st::f64);
  const st::Tensor sq = st::pow(x.unsqueeze(1) - x.unsqueeze(0), 2.0);  // |x_i - x_j|^2
  const st::Tensor eye = st::eye(n, st::f64);
  auto nll = [&](const auto& theta) {
    const auto l = st::exp(theta.ix(0)), s = st::exp(theta.ix(1)), sigma = st::exp(theta.ix(2));
    const auto k = s * s * st::exp(-sq / (2.0 * l * l)) + sigma * sigma * eye;
    const auto chol = st::linalg::cholesky(k);
    const auto alpha = st::linalg::cho_solve(chol, y);
    return 0.5 * st::sum(y * alpha) + st::sum(st::log(st::diagonal(chol))) +
           0.5 * double(n) * std::log(2 * M_PI);
  };
  st::Tensor theta =
      st::from_vector(std::vector<double>{0.0, 0.0, -1.0});  // l = s = 1, sigma = 0.37
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("n = %lld\nstep  lengthscale  signal   noise       nll          |grad|\n",
              static_cast<long long>(n));
  double gn = 0;
  for (int step = 0; step < 50; ++step) {
    const auto [value, g] = st::value_and_grad(nll, theta);
    const std::vector<double> p = st::exp(theta).to_vector<double>();
    gn = st::norm(g).item<double>();
    std::printf("%4d  %11.6f  %7.4f  %8.5f  %12.6f  %10.3e\n", step, p[0], p[1], p[2],
                value.item<double>(), gn);
    if (gn < 1e-8) break;
    st::Tensor H = st::hessian(nll, theta);
    // Damp H until it is positive-definite, then take the Newton step, halving it until the
    // likelihood improves.
    for (double damping = 1e-6; st::min(st::linalg::eigvalsh(H)).item<double>() <= 0;
         damping *= 10) {
      H = H + damping * st::eye(3, st::f64);
    }
    const st::Tensor d = -st::linalg::solve(H, g);
    double t = 1;
    st::Tensor next = theta;
    for (int k = 0; k < 30; ++k, t /= 2) {
      next = theta + t * d;
      if (nll(next).item<double>() < value.item<double>()) break;
    }
    theta = next;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fitted in %.2f s: %s\n", seconds, gn < 1e-8 ? "converged" : "NOT converged");
  return gn < 1e-8 ? 0 : 1;
}
