// SPDX-License-Identifier: MIT
// Newton's method on the extended Rosenbrock function in n dimensions (Moré, Garbow and
// Hillstrom's test problem 21), over the pairs (x_{2i}, x_{2i+1}),
//   f(x) = sum_i 100 (x_{2i+1} - x_{2i}^2)^2 + (1 - x_{2i})^2,
// whose narrow curved valleys defeat plain gradient descent. Each step takes the exact
// gradient (st::grad) and Hessian (st::hessian, forward over reverse mode), solves H d = -g
// with st::linalg::cholesky and cho_solve where H is positive-definite (st::linalg::solve where
// it is not), and backtracks until f decreases. From x = (-1.2, 1, -1.2, 1, ...) it reaches the
// minimum (1, ..., 1).
//   newton_rosenbrock [--small] [--n N]   (n = 1000 by default, even; --small: n = 10)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <strata.hpp>

namespace st = strata;

int main(int argc, char** argv) {
  int64_t n = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) n = 10;
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = std::atoll(argv[++i]);
  }
  auto f = [](const auto& x) {
    const auto a = x.ix(st::slice(0, st::none, 2)), b = x.ix(st::slice(1, st::none, 2));
    return st::sum(100.0 * (b - a * a) * (b - a * a) + (1.0 - a) * (1.0 - a));
  };
  std::vector<double> start(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = i % 2 == 0 ? -1.2 : 1.0;
  st::Tensor x = st::from_vector(start);
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("n = %lld\nstep      f(x)          |grad|     solve\n", static_cast<long long>(n));
  for (int step = 0; step < 200; ++step) {
    const auto [fx, g] = st::value_and_grad(f, x);
    const double fv = fx.item<double>(), gn = st::norm(g).item<double>();
    if (gn < 1e-9) {
      std::printf("%4d  %13.6e  %11.4e\n", step, fv, gn);
      break;
    }
    const st::Tensor H = st::hessian(f, x);
    st::Tensor d;
    const char* how = "cholesky";
    try {
      d = -st::linalg::cho_solve(st::linalg::cholesky(H), g);
    } catch (const st::LinAlgError&) {  // H not positive-definite far from the minimum
      d = -st::linalg::solve(H, g);
      how = "lu";
      if (st::sum(d * g).item<double>() >= 0) d = -g;  // not a descent direction
    }
    std::printf("%4d  %13.6e  %11.4e  %s\n", step, fv, gn, how);
    double t = 1;
    st::Tensor next = x;
    for (int k = 0; k < 40; ++k, t /= 2) {
      next = x + t * d;
      if (f(next).item<double>() < fv) break;
    }
    x = next;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double err = st::max(st::abs(x - 1.0)).item<double>();
  std::printf("max |x_i - 1| = %.3e after %.2f s: %s\n", err, seconds,
              err < 1e-8 ? "converged to (1, ..., 1)" : "NOT converged");
  return err < 1e-8 ? 0 : 1;
}
