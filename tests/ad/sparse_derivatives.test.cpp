// SPDX-License-Identifier: MIT
// st::sparse_jacfwd, st::sparse_jacrev and st::sparse_hessian (ad/sparse/sparse.hpp): their
// values against the dense st::jacfwd and st::hessian in f64 (and those against central
// finite differences for one function), plans reused across points, SparseMatrix's CSR
// arrays and its Eigen copy (ad/sparse/eigen.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "ad/sparse/eigen.hpp"
#include "support/sparse_checks.hpp"
#include "support/transforms_ref.hpp"

namespace st = strata;
using sparse_checks::pattern_of;
using sparse_checks::point;

namespace {

/// Every entry of the sparse matrix and the dense one agree, and the dense one is zero
/// off the pattern.
void require_matches(const st::SparseMatrix& s, const st::Tensor& dense, double tol = 1e-12) {
  REQUIRE(s.shape() == dense.shape());
  const st::Tensor got = s.to_dense();
  const std::vector<double> g = got.to_vector<double>(), d = dense.to_vector<double>();
  for (std::size_t k = 0; k < g.size(); ++k) {
    INFO("entry (" << int64_t(k) / s.cols() << ", " << int64_t(k) % s.cols() << "): sparse " << g[k]
                   << ", dense " << d[k]);
    REQUIRE(std::abs(g[k] - d[k]) <= tol * (1.0 + std::abs(d[k])));
  }
}

auto laplacian = [](const auto& x) {
  const auto left = x.ix(st::slice(0, -2)), mid = x.ix(st::slice(1, -1)),
             right = x.ix(st::slice(2, st::none));
  return left - 2.0 * mid + right + st::exp(mid) * right;
};

auto rosen = [](const auto& x) {
  const auto u = x.ix(st::slice(0, -1)), v = x.ix(st::slice(1, st::none));
  return st::sum(100.0 * (v - u * u) * (v - u * u) + (1.0 - u) * (1.0 - u));
};

/// An arrowhead with a tridiagonal band: the Hessian of the bench row.
auto arrowhead = [](const auto& x) {
  const auto u = x.ix(st::slice(0, -1)), v = x.ix(st::slice(1, st::none));
  const auto head = x.ix(st::slice(0, -1)), last = x.ix(st::slice(-1, st::none));
  return st::sum(u * u * v * v) + st::sum(head * head * last) + st::sum(st::cos(x));
};

}  // namespace

TEST_CASE("sparse_jacfwd and sparse_jacrev equal the dense Jacobian", "[ad][sparse]") {
  const int64_t n = 12;
  const st::Tensor x = point(n, 1);
  const st::Tensor dense = st::jacfwd(laplacian)(x);
  const st::SparseMatrix jf = st::sparse_jacfwd(laplacian, x), jr = st::sparse_jacrev(laplacian, x);
  CHECK(jf.dtype() == st::f64);
  CHECK(jf.nnz() == 3 * (n - 2));
  require_matches(jf, dense);
  require_matches(jr, dense);
  require_matches(jf, st::jacrev(laplacian)(x));
  // The dense Jacobian against central differences, so the reference is independent.
  const auto fd = transforms_ref::fd_jacobian(
      [&](const std::vector<double>& v) {
        return laplacian(st::from_vector(v)).to_vector<double>();
      },
      x.to_vector<double>());
  transforms_ref::require_close(st::reshape(dense, {-1}), fd, 1e-6);
}

TEST_CASE("sparse Jacobians of matmul, reductions, indexing and linear algebra", "[ad][sparse]") {
  const int64_t n = 8;
  const st::Tensor x = point(n, 2);
  const st::Tensor idx = st::from_vector(std::vector<int64_t>{7, 0, 3, 3});
  auto f = [idx](const auto& v) {
    const auto m = st::reshape(v, {2, 2, 2});
    const auto spd = st::matmul(m, st::transpose(m, -1, -2)) + st::eye(2, st::f64);
    return st::concat(
        {st::linalg::logdet(spd), st::take(v, idx, 0) * st::sum(v.ix(st::slice(0, 2))),
         st::reshape(st::matmul(st::reshape(v, {2, 4}), st::reshape(st::tanh(v), {4, 2})), {-1})},
        0);
  };
  const st::Tensor dense = st::jacfwd(f)(x);
  require_matches(st::sparse_jacfwd(f, x), dense, 1e-11);
  require_matches(st::sparse_jacrev(f, x), dense, 1e-11);
}

TEST_CASE("sparse_hessian equals the dense Hessian", "[ad][sparse]") {
  const int64_t n = 10;
  const st::Tensor x = point(n, 3);
  require_matches(st::sparse_hessian(rosen, x), st::hessian(rosen, x), 1e-11);
  require_matches(st::sparse_hessian(arrowhead, x), st::hessian(arrowhead, x), 1e-11);
  auto blocks = [](const auto& v) {
    const auto m = st::reshape(v, {2, 5});
    return st::sum(st::log(st::sum(st::exp(m), {1}))) + st::sum(v * v * v);
  };
  require_matches(st::sparse_hessian(blocks, x), st::hessian(blocks, x), 1e-11);
  // Through linear algebra: the log-determinants of two SPD matrices.
  auto logdets = [](const auto& v) {
    const auto m = st::reshape(v.ix(st::slice(0, 8)), {2, 2, 2});
    return st::sum(
        st::linalg::logdet(st::matmul(m, st::transpose(m, -1, -2)) + st::eye(2, st::f64)));
  };
  require_matches(st::sparse_hessian(logdets, x), st::hessian(logdets, x), 1e-10);
  // The Rosenbrock Hessian against central second differences.
  const auto fd = transforms_ref::fd_hessian(
      [&](const std::vector<double>& v) { return rosen(st::from_vector(v)).item<double>(); },
      x.to_vector<double>());
  transforms_ref::require_close(st::reshape(st::sparse_hessian(rosen, x).to_dense(), {-1}), fd,
                                1e-4);
}

TEST_CASE("sparse derivatives of a function constant in x have no entries", "[ad][sparse]") {
  const st::Tensor x = point(4, 9);
  auto flat = [](const auto& v) { return st::sign(v); };  // zero derivative everywhere
  const st::SparsePlan plan = st::sparse_jacfwd_plan(flat, x);
  CHECK(plan.colours() == 0);
  for (const st::SparseMatrix& j : {st::sparse_jacfwd(flat, x, plan), st::sparse_jacrev(flat, x)}) {
    CHECK(j.nnz() == 0);
    CHECK(j.values().shape() == st::Shape{0});
    CHECK(j.dtype() == st::f64);
    require_matches(j, st::jacfwd(flat)(x));
  }
  auto level = [](const auto& v) { return st::sum(st::sign(v)); };
  const st::SparseMatrix h = st::sparse_hessian(level, x);
  CHECK(h.nnz() == 0);
  require_matches(h, st::hessian(level, x));
}

TEST_CASE("a SparsePlan is computed once and reused at other points", "[ad][sparse]") {
  const int64_t n = 16;
  const st::SparsePlan hp = st::sparse_hessian_plan(arrowhead, point(n, 4));
  const st::SparsePlan jp = st::sparse_jacfwd_plan(laplacian, point(n, 4));
  const st::SparsePlan rp = st::sparse_jacrev_plan(laplacian, point(n, 4));
  for (uint64_t seed : {5, 6, 7}) {
    const st::Tensor x = point(n, seed);
    require_matches(st::sparse_hessian(arrowhead, x, hp), st::hessian(arrowhead, x), 1e-11);
    require_matches(st::sparse_jacfwd(laplacian, x, jp), st::jacfwd(laplacian)(x));
    require_matches(st::sparse_jacrev(laplacian, x, rp), st::jacfwd(laplacian)(x));
  }
  // A plan from a known pattern, without tracing: the tridiagonal of the Rosenbrock Hessian.
  const st::Tensor x = point(n, 8);
  const st::SparsePlan known = st::SparsePlan::hessian(pattern_of(st::hessian(rosen, x)));
  CHECK(known.colours() == 3);
  require_matches(st::sparse_hessian(rosen, x, known), st::hessian(rosen, x), 1e-11);
}

TEST_CASE("SparseMatrix: CSR arrays, to_dense and the Eigen copy", "[ad][sparse]") {
  const int64_t n = 9;
  const st::Tensor x = point(n, 9);
  const st::SparseMatrix h = st::sparse_hessian(rosen, x);
  CHECK(h.shape() == st::Shape{n, n});
  CHECK(h.nnz() == 3 * n - 2);
  const std::vector<int64_t> crow = h.crow_indices().to_vector<int64_t>(),
                             col = h.col_indices().to_vector<int64_t>();
  REQUIRE(crow.size() == std::size_t(n + 1));
  REQUIRE(col.size() == std::size_t(h.nnz()));
  const std::vector<double> values = h.values().to_vector<double>();
  const std::vector<double> dense = st::hessian(rosen, x).to_vector<double>();
  // Every CSR entry is the dense matrix's entry at its row and column.
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = crow[std::size_t(i)]; k < crow[std::size_t(i) + 1]; ++k) {
      const int64_t j = col[std::size_t(k)];
      CHECK(values[std::size_t(k)] == Approx(dense[std::size_t(i * n + j)]).epsilon(1e-12));
    }
  }
  const Eigen::SparseMatrix<double> e = st::to_eigen(h);
  CHECK(e.rows() == n);
  CHECK(e.cols() == n);
  CHECK(e.nonZeros() == h.nnz());
  const Eigen::MatrixXd ed = Eigen::MatrixXd(e);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j)
      CHECK(ed(i, j) == Approx(dense[std::size_t(i * n + j)]).epsilon(1e-12));
  }
  // An f32 matrix converts too (values widened to double).
  const st::SparseMatrix h32 = st::sparse_hessian(rosen, x.to(st::f32));
  CHECK(h32.dtype() == st::f32);
  CHECK(Eigen::MatrixXd(st::to_eigen(h32)).isApprox(ed, 1e-4));
}
