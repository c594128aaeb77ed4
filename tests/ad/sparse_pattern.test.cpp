// SPDX-License-Identifier: MIT
// st::jacobian_sparsity and st::hessian_sparsity (ad/sparse/sparse.hpp): the pattern the
// sparsity tracer finds, against the nonzeros of the dense st::jacfwd / st::hessian at random
// points (the union over two points, so that no entry is zero by accident). Where the tracer
// is exact the patterns are equal; where it is a documented superset (a factorisation's
// structurally zero outputs) it is checked to contain the dense one and to equal the
// documented pattern.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/sparse_checks.hpp"

namespace st = strata;
using sparse_checks::contains_all;
using sparse_checks::pattern_of;
using sparse_checks::pattern_where;
using sparse_checks::point;

namespace {

/// The nonzeros of the dense Jacobian at two random points, united.
template <class F>
st::SparsityPattern dense_jacobian_pattern(F f, int64_t n) {
  const st::Tensor j1 = st::jacfwd(f, point(n, 11)), j2 = st::jacfwd(f, point(n, 12));
  const int64_t m = j1.numel() / n;
  return pattern_of(st::reshape(st::abs(j1) + st::abs(j2), {m, n}));
}

/// The nonzeros of the dense Hessian at two random points, united.
template <class F>
st::SparsityPattern dense_hessian_pattern(F f, int64_t n) {
  const st::Tensor h1 = st::hessian(f, point(n, 21)), h2 = st::hessian(f, point(n, 22));
  return pattern_of(st::abs(h1) + st::abs(h2));
}

template <class F>
void require_exact_jacobian(F f, int64_t n) {
  const st::SparsityPattern traced = st::jacobian_sparsity(f, point(n, 1));
  const st::SparsityPattern dense = dense_jacobian_pattern(f, n);
  INFO("traced nnz " << traced.nnz() << ", dense nnz " << dense.nnz());
  CHECK(traced == dense);
}

template <class F>
void require_exact_hessian(F f, int64_t n) {
  const st::SparsityPattern traced = st::hessian_sparsity(f, point(n, 1));
  const st::SparsityPattern dense = dense_hessian_pattern(f, n);
  INFO("traced nnz " << traced.nnz() << ", dense nnz " << dense.nnz());
  CHECK(traced.symmetric());
  CHECK(traced == dense);
}

/// A 0/1 lower-bidiagonal f64 matrix n x n with a full last row (a known operand with zeros).
st::Tensor banded(int64_t n) {
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    a[std::size_t(i * n + i)] = 2.0 + double(i);
    if (i > 0) a[std::size_t(i * n + i - 1)] = -1.0;
    a[std::size_t((n - 1) * n + i)] = 0.5;
  }
  return st::from_vector(a, {n, n});
}

}  // namespace

TEST_CASE("jacobian_sparsity of elementwise ops is the diagonal", "[ad][sparse]") {
  const int64_t n = 7;
  require_exact_jacobian(
      [](const auto& x) { return st::sin(x) * x + st::exp(x) - st::tanh(x) / (1.0 + x * x); }, n);
  // sign and the comparisons have no derivative; a known zero factor removes the dependence.
  require_exact_jacobian([](const auto& x) { return st::sign(x) + x * 0.0; }, n);
  const st::SparsityPattern p =
      st::jacobian_sparsity([](const auto& x) { return st::sqrt(x * x + 1.0); }, point(n, 3));
  CHECK(p == pattern_where(n, n, [](int64_t i, int64_t j) { return i == j; }));
}

TEST_CASE("jacobian_sparsity of stencils, slices, padding and concatenation", "[ad][sparse]") {
  const int64_t n = 9;
  auto laplacian = [](const auto& x) {
    const auto left = x.ix(st::slice(0, -2)), mid = x.ix(st::slice(1, -1)),
               right = x.ix(st::slice(2, st::none));
    return left - 2.0 * mid + right + mid * mid * mid;
  };
  require_exact_jacobian(laplacian, n);
  CHECK(st::jacobian_sparsity(laplacian, point(n, 2)) ==
        pattern_where(n - 2, n, [](int64_t i, int64_t j) { return j >= i && j <= i + 2; }));
  // Padding (zeros depend on nothing), flip, and concat of pieces.
  require_exact_jacobian([](const auto& x) { return st::pad(x * x, {{2, 1}}); }, n);
  require_exact_jacobian(
      [](const auto& x) {
        return st::concat(
            {st::flip(x.ix(st::slice(0, 4)), 0), st::exp(x.ix(st::slice(5, st::none)))}, 0);
      },
      n);
}

TEST_CASE("jacobian_sparsity of matmul with a known operand and of two traced ones",
          "[ad][sparse]") {
  const int64_t n = 6;
  const st::Tensor a = banded(n);
  // A known matrix's zeros contribute nothing: the pattern is a's nonzeros.
  auto linear = [a](const auto& x) { return st::matmul(a, x); };
  require_exact_jacobian(linear, n);
  CHECK(st::jacobian_sparsity(linear, point(n, 4)) == pattern_of(a));
  // Two traced factors: out[i, j] depends on row i of the first and column j of the second.
  require_exact_jacobian(
      [](const auto& x) {
        const auto p = st::reshape(x, {2, 3}), q = st::reshape(st::exp(x), {3, 2});
        return st::reshape(st::matmul(p, q), {-1});
      },
      n);
  // Batched: each matrix of the batch sees its own elements only.
  require_exact_jacobian(
      [](const auto& x) {
        const auto m = st::reshape(x, {3, 1, 2});
        return st::reshape(st::matmul(st::transpose(m, 1, 2), m), {-1});
      },
      n);
}

TEST_CASE("jacobian_sparsity of reductions", "[ad][sparse]") {
  const int64_t n = 8;
  require_exact_jacobian([](const auto& x) { return st::sum(st::reshape(x * x, {2, 4}), {1}); }, n);
  // max: each output may take either element of its row (at one x, the largest only).
  auto rowmax = [](const auto& x) { return st::max(st::reshape(x, {4, 2}), {1}); };
  const st::SparsityPattern traced = st::jacobian_sparsity(rowmax, point(n, 4));
  CHECK(traced == pattern_where(4, n, [](int64_t i, int64_t j) { return j / 2 == i; }));
  CHECK(contains_all(traced, dense_jacobian_pattern(rowmax, n)));
  require_exact_jacobian([](const auto& x) { return st::reshape(st::mean(x * x), {1}); }, n);
  require_exact_jacobian(
      [](const auto& x) {
        return st::sum(st::reshape(st::exp(x), {2, 2, 2}), {0, 2});
      },
      n);
  // A softmax: every output depends on every input.
  require_exact_jacobian(
      [](const auto& x) {
        const auto e = st::exp(x);
        return e / st::sum(e);
      },
      n);
}

TEST_CASE("jacobian_sparsity of indexing: gathers, repeated positions and index_add",
          "[ad][sparse]") {
  const int64_t n = 6;
  const st::Tensor idx = st::from_vector(std::vector<int64_t>{4, 0, 4, 2});
  require_exact_jacobian(
      [idx](const auto& x) { return st::take(x, idx, 0) * x.ix(st::slice(0, 4)); }, n);
  require_exact_jacobian([](const auto& x) { return x.ix(st::slice(st::none, st::none, 2)); }, n);
  // index_add: rows 1 and 3 of the result gather several of src's elements.
  const st::Tensor dest = st::from_vector(std::vector<int64_t>{1, 3, 1, 3, 3, 0});
  require_exact_jacobian(
      [dest](const auto& x) {
        using L = std::remove_cvref_t<decltype(x)>;
        const auto base = x.ix(st::slice(0, 4));
        return st::Prims<L>::index_add(base, 0, dest, st::sin(x));
      },
      n);
}

TEST_CASE("jacobian_sparsity through linear algebra: blocks per batch matrix",
          "[ad][sparse][linalg]") {
  const int64_t n = 8;  // two 2 x 2 matrices ... and their squares
  auto spd = [](const auto& x) {
    const auto m = st::reshape(x, {2, 2, 2});
    return st::matmul(m, st::transpose(m, -1, -2)) + st::eye(2, st::f64);
  };
  auto block = [](int64_t rows_per) {
    return [rows_per](int64_t i, int64_t j) { return i / rows_per == j / 4; };
  };
  // logdet and the eigenvalues: each output depends on its own matrix, exactly.
  require_exact_jacobian([spd](const auto& x) { return st::linalg::logdet(spd(x)); }, n);
  require_exact_jacobian(
      [spd](const auto& x) { return st::reshape(st::linalg::eigvalsh(spd(x)), {-1}); }, n);
  CHECK(st::jacobian_sparsity([spd](const auto& x) { return st::linalg::logdet(spd(x)); },
                              point(n, 5)) == pattern_where(2, n, block(1)));
  // cholesky: the tracer gives every output its matrix's inputs, a superset of the nonzeros
  // (the factor's zero upper triangle depends on nothing).
  auto chol = [spd](const auto& x) { return st::reshape(st::linalg::cholesky(spd(x)), {-1}); };
  const st::SparsityPattern traced = st::jacobian_sparsity(chol, point(n, 6));
  CHECK(traced == pattern_where(n, n, block(4)));
  CHECK(contains_all(traced, dense_jacobian_pattern(chol, n)));
  // cho_solve with a known factor: the solution of each system depends on its right-hand side.
  const st::Tensor l = st::linalg::cholesky(spd(point(n, 7)));
  require_exact_jacobian(
      [l](const auto& x) {
        return st::reshape(
            st::linalg::cho_solve(l, st::reshape(x, {2, 4, 1}).ix(st::all, st::slice(0, 2))), {-1});
      },
      n);
}

TEST_CASE("hessian_sparsity of separable, chained and arrowhead functions", "[ad][sparse]") {
  const int64_t n = 8;
  // Elementwise: diagonal; a linear function: empty.
  require_exact_hessian([](const auto& x) { return st::sum(st::exp(x) + x * x * x); }, n);
  const st::Tensor a = banded(n);
  auto linear = [a](const auto& x) { return st::sum(st::matmul(a, x)); };
  require_exact_hessian(linear, n);
  CHECK(st::hessian_sparsity(linear, point(n, 1)).nnz() == 0);
  // Extended Rosenbrock chained over neighbours: tridiagonal.
  auto rosen = [](const auto& x) {
    const auto u = x.ix(st::slice(0, -1)), v = x.ix(st::slice(1, st::none));
    return st::sum(100.0 * (v - u * u) * (v - u * u) + (1.0 - u) * (1.0 - u));
  };
  require_exact_hessian(rosen, n);
  CHECK(st::hessian_sparsity(rosen, point(n, 2)) ==
        pattern_where(n, n, [](int64_t i, int64_t j) { return i - j <= 1 && j - i <= 1; }));
  // Arrowhead: every element coupled to the last one.
  auto arrow = [](const auto& x) {
    const auto head = x.ix(st::slice(0, -1)), last = x.ix(st::slice(-1, st::none));
    return st::sum(head * head * last) + st::sum(st::sin(x));
  };
  require_exact_hessian(arrow, n);
  CHECK(st::hessian_sparsity(arrow, point(n, 3)) == pattern_where(n, n, [n](int64_t i, int64_t j) {
          return i == j || i == n - 1 || j == n - 1;
        }));
}

TEST_CASE("hessian_sparsity of products, quotients, quadratic forms and reductions",
          "[ad][sparse]") {
  const int64_t n = 6;
  // x0 x3 couples 0 and 3 only; x1 / x2 gives (1, 2) and (2, 2), not (1, 1).
  auto f = [](const auto& x) {
    return st::sum(x.ix(st::slice(0, 1)) * x.ix(st::slice(3, 4)) +
                   x.ix(st::slice(1, 2)) / x.ix(st::slice(2, 3)));
  };
  require_exact_hessian(f, n);
  CHECK(st::hessian_sparsity(f, point(n, 1)) == pattern_where(n, n, [](int64_t i, int64_t j) {
          return (i == 0 && j == 3) || (i == 3 && j == 0) || (i == 1 && j == 2) ||
                 (i == 2 && j == 1) || (i == 2 && j == 2);
        }));
  // A quadratic form with a known banded matrix: a + a^T's nonzeros.
  const st::Tensor a = banded(n);
  auto quadratic = [a](const auto& x) { return st::sum(x * st::matmul(a, x)); };
  require_exact_hessian(quadratic, n);
  CHECK(st::hessian_sparsity(quadratic, point(n, 2)) == pattern_of(a + st::transpose(a, 0, 1)));
  // log-sum-exp and a product of sums: dense.
  require_exact_hessian([](const auto& x) { return st::log(st::sum(st::exp(x))); }, n);
  require_exact_hessian(
      [](const auto& x) {
        return st::sum(x.ix(st::slice(0, 3))) * st::sum(x.ix(st::slice(3, st::none)));
      },
      n);
  // A max over elements is piecewise linear: only the squares inside add pairs, on the
  // diagonal; at a given x only the largest square's is nonzero (a superset there).
  auto peak = [](const auto& x) { return st::max(x * x) + st::sum(st::abs(x)); };
  const st::SparsityPattern traced = st::hessian_sparsity(peak, point(n, 3));
  CHECK(traced == pattern_where(n, n, [](int64_t i, int64_t j) { return i == j; }));
  CHECK(contains_all(traced, dense_hessian_pattern(peak, n)));
}

TEST_CASE("hessian_sparsity through linear algebra: blocks per batch matrix",
          "[ad][sparse][linalg]") {
  const int64_t n = 8;
  auto f = [](const auto& x) {
    const auto m = st::reshape(x, {2, 2, 2});
    const auto spd = st::matmul(m, st::transpose(m, -1, -2)) + st::eye(2, st::f64);
    return st::sum(st::linalg::logdet(spd));
  };
  require_exact_hessian(f, n);
  CHECK(st::hessian_sparsity(f, point(n, 1)) ==
        pattern_where(n, n, [](int64_t i, int64_t j) { return i / 4 == j / 4; }));
}

TEST_CASE("jacobian_sparsity keeps the values of what does not depend on x", "[ad][sparse]") {
  // Known values flow through (a mask computed from a captured tensor can steer st::where).
  const st::Tensor w = st::from_vector(std::vector<double>{1, -1, 2, -2});
  auto f = [w](const auto& x) {
    const auto mask = st::plain(w * w) > 1.5;  // known: no dependence on x
    return st::where(mask, x * x, st::zeros_like(x));
  };
  CHECK(st::jacobian_sparsity(f, point(4, 1)) ==
        pattern_where(4, 4, [](int64_t i, int64_t j) { return i == j && i >= 2; }));
  // st::where with a condition computed from x keeps both branches.
  auto g = [](const auto& x) {
    const auto y = x.ix(st::slice(0, 2)), z = x.ix(st::slice(2, 4));
    return st::where(y > z, y * y, z);
  };
  CHECK(st::jacobian_sparsity(g, point(4, 2)) ==
        pattern_where(2, 4, [](int64_t i, int64_t j) { return j == i || j == i + 2; }));
}
