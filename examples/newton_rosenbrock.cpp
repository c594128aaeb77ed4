// SPDX-License-Identifier: MIT
// Newton's method on the Rosenbrock function f(x, y) = (1 - x)^2 + 100 (y - x^2)^2,
// whose narrow curved valley defeats plain gradient descent. Each step solves
// H d = -g with the exact gradient (st::grad) and Hessian (st::hessian, forward
// over reverse mode), halving the step until f decreases. From the classic
// start (-1.2, 1) it reaches the minimum (1, 1) in about twenty steps.
//   newton_rosenbrock [--small]
#include <cmath>
#include <cstdio>
#include <vector>

#include <strata.hpp>

namespace st = strata;

int main(int, char**) {
  auto f = [](const auto& v) {
    const auto x = st::sum(st::slice(v, 0, 0, 1)), y = st::sum(st::slice(v, 0, 1, 2));
    return (1.0 - x) * (1.0 - x) + 100.0 * (y - x * x) * (y - x * x);
  };
  st::Tensor v = st::from_vector(std::vector<double>{-1.2, 1.0});
  std::printf("step        x             y            f(x, y)        |grad|\n");
  for (int step = 0; step < 100; ++step) {
    const std::vector<double> g = st::grad(f, v).to_vector<double>();
    const std::vector<double> H = st::hessian(f, v).to_vector<double>();  // [2, 2], row-major
    const double fv = f(v).item<double>(), gn = std::hypot(g[0], g[1]);
    const std::vector<double> p = v.to_vector<double>();
    std::printf("%4d  %12.9f  %12.9f  %13.6e  %11.4e\n", step, p[0], p[1], fv, gn);
    if (gn < 1e-10) break;
    // Solve H d = -g (Cramer's rule for 2 x 2), then backtrack on f.
    const double det = H[0] * H[3] - H[1] * H[2];
    const double d0 = (-g[0] * H[3] + g[1] * H[1]) / det, d1 = (-g[1] * H[0] + g[0] * H[2]) / det;
    double t = 1;
    st::Tensor next = v;
    for (int k = 0; k < 30; ++k, t /= 2) {
      next = v + t * st::from_vector(std::vector<double>{d0, d1});
      if (f(next).item<double>() < fv) break;
    }
    v = next;
  }
  const std::vector<double> p = v.to_vector<double>();
  const bool converged = std::abs(p[0] - 1) < 1e-8 && std::abs(p[1] - 1) < 1e-8;
  std::printf("minimum at (%.12f, %.12f): %s\n", p[0], p[1],
              converged ? "converged to (1, 1)" : "NOT converged");
  return converged ? 0 : 1;
}
