// SPDX-License-Identifier: MIT
// Newton's method with sparse Hessians on the 2-D Bratu problem
//   -laplace(u) = lambda exp(u) on the unit square, u = 0 on its boundary,
// discretised by finite differences on an N x N grid of interior points (h = 1 / (N + 1)).
// The discrete equations are the stationary points of the energy
//   E(u) = 1/2 sum over grid edges (u_p - u_q)^2 - h^2 lambda sum_p exp(u_p)
// (boundary values zero), whose gradient is the residual F(u) = A u - h^2 lambda exp(u) (A the
// 5-point Laplacian) and whose Hessian is sparse: 5 entries a row. st::sparse_hessian_plan
// traces E once to find that pattern and star-colours it (a handful of colours, whatever N);
// each Newton step then takes the Hessian in one batched Hessian-vector pass per colour set
// (st::sparse_hessian), copies it to Eigen (st::to_eigen) and solves H d = -F with Eigen's
// sparse Cholesky, SimplicialLDLT. From u = 0 it converges quadratically for lambda below
// the fold at about 6.81.
//   sparse_newton [--small] [--n N] [--lambda L]   (N = 300 by default: 90,000 unknowns;
//                                                   --small: N = 20)
#include <Eigen/SparseCholesky>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strata.hpp>
#include <vector>

#include "ad/sparse/eigen.hpp"

namespace st = strata;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  int64_t n = 300;
  double lambda = 6.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) n = 20;
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = std::atoll(argv[++i]);
    if (std::strcmp(argv[i], "--lambda") == 0 && i + 1 < argc) lambda = std::atof(argv[++i]);
  }
  const double h = 1.0 / double(n + 1), scale = h * h * lambda;
  auto energy = [n, scale](const auto& u) {
    // The grid with its zero boundary: [n + 2, n + 2].
    const auto g = st::pad(st::reshape(u, {n, n}), {{1, 1}, {1, 1}});
    const auto across = g.ix(st::slice(1, -1), st::slice(1, st::none)) -
                        g.ix(st::slice(1, -1), st::slice(0, -1));  // [n, n + 1]
    const auto down = g.ix(st::slice(1, st::none), st::slice(1, -1)) -
                      g.ix(st::slice(0, -1), st::slice(1, -1));  // [n + 1, n]
    return 0.5 * (st::sum(across * across) + st::sum(down * down)) - scale * st::sum(st::exp(u));
  };

  st::Tensor u = st::zeros({n * n}, st::f64);
  auto t0 = std::chrono::steady_clock::now();
  const st::SparsePlan plan = st::sparse_hessian_plan(energy, u);
  std::printf("Bratu, lambda = %g, %lld x %lld grid: %lld unknowns\n", lambda,
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n * n));
  std::printf("Hessian pattern: %lld nonzeros, %lld colours (traced and coloured in %.3f s)\n",
              static_cast<long long>(plan.pattern().nnz()), static_cast<long long>(plan.colours()),
              seconds_since(t0));
  std::printf("step   max |F(u)| / h^2   hessian (s)   solve (s)\n");
  double residual = 0;
  for (int step = 0; step < 30; ++step) {
    const st::Tensor g = st::grad(energy, u);
    residual = st::max(st::abs(g)).item<double>() / (h * h);
    if (residual < 1e-8) {
      std::printf("%4d   %16.6e\n", step, residual);
      break;
    }
    t0 = std::chrono::steady_clock::now();
    const st::SparseMatrix H = st::sparse_hessian(energy, u, plan);
    const double hessian_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(st::to_eigen(H));
    if (ldlt.info() != Eigen::Success) {
      std::printf("the Hessian is not positive-definite (lambda past the fold?)\n");
      return 1;
    }
    const std::vector<double> gv = g.to_vector<double>();
    const Eigen::VectorXd d = ldlt.solve(Eigen::Map<const Eigen::VectorXd>(gv.data(), n * n));
    const double solve_s = seconds_since(t0);
    std::printf("%4d   %16.6e   %11.3f   %9.3f\n", step, residual, hessian_s, solve_s);
    u = u - st::from_vector(std::vector<double>(d.data(), d.data() + d.size()));
  }
  const double centre = st::max(u).item<double>();
  std::printf("max u = %.6f: %s\n", centre, residual < 1e-8 ? "converged" : "NOT converged");
  return residual < 1e-8 ? 0 : 1;
}
