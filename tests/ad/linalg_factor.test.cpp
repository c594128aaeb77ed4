// SPDX-License-Identifier: MIT
// st::linalg's factorisations (diff/linalg/factor.hpp) and their rules (ad/rules/factor.hpp,
// ad/rules/spectral.hpp): the defining identities (A = L L^T, A[perm] = L U, A V = V diag(w),
// U S Vh = A, Q R = A with Q^T Q = I), and derivatives against f64 finite differences to third
// order in every mode (check_grads), with the adjoint identity <u, J v> = <J^T u, v>.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/linalg_checks.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;
using st::testing::permuted_rows;
using st::testing::require_ascending;
using st::testing::require_near;
using st::testing::require_orthonormal_columns;
using st::testing::require_pivots_match;
using st::testing::spd;
using st::testing::symmetric;

TEST_CASE("cholesky: L L^T = A, L lower with a positive diagonal, third order", "[ad][linalg]") {
  const st::Tensor a = spd({2, 4, 4}, 1);
  const st::Tensor l = st::linalg::cholesky(a);
  require_near(st::matmul(l, st::transpose(l, -1, -2)), a, 1e-12);
  require_near(st::triu(l, 1), st::zeros({2, 4, 4}, st::f64), 0);
  const st::Tensor w = normal({4, 4}, 2);
  check_grads<3>([&](const auto& x) { return st::sum(st::linalg::cholesky(x) * w); },
                 {spd({4, 4}, 3)});
}

TEST_CASE("lu: a[perm] = L U, pivots consistent with perm, derivatives", "[ad][linalg]") {
  const st::Tensor a = normal({3, 5, 5}, 4);
  const auto [f, pivots, perm] = st::linalg::lu(a);
  const st::Tensor l = st::tril(f, -1) + st::eye(5, st::f64), u = st::triu(f);
  require_near(st::matmul(l, u), permuted_rows(a, perm), 1e-12);
  require_pivots_match(pivots, perm);
  const st::Tensor w = normal({5, 5}, 5);
  check_grads<2>([&](const auto& x) { return st::sum(std::get<0>(st::linalg::lu(x)) * w); },
                 {normal({5, 5}, 6)});
}

TEST_CASE("eigh: A V = V diag(w), V^T V = I, w ascending, third order", "[ad][linalg]") {
  const st::Tensor a = symmetric({2, 5, 5}, 7);
  const auto [w, v] = st::linalg::eigh(a);
  require_near(st::matmul(a, v), v * st::unsqueeze(w, -2), 1e-12);
  require_near(st::matmul(st::transpose(v, -1, -2), v), st::expand(st::eye(5, st::f64), {2, 5, 5}),
               1e-12);
  require_ascending(w);
  const st::Tensor c = normal({5}, 8), weights = normal({5, 5}, 9);
  // A function of the eigenvectors that their signs do not change.
  check_grads<3>(
      [&](const auto& x) {
        const auto [vals, vecs] = st::linalg::eigh(x);
        return st::sum(vals * c) + st::sum(vecs * vecs * weights);
      },
      {symmetric({5, 5}, 10)});
}

TEST_CASE("svd: U S Vh = A, orthonormal factors, S descending, derivatives", "[ad][linalg]") {
  for (const st::Shape& shape : {st::Shape{4, 3}, st::Shape{3, 5}, st::Shape{2, 4, 4}}) {
    const st::Tensor a = normal(shape, 11);
    const auto [u, s, vh] = st::linalg::svd(a);
    require_near(st::matmul(u * st::unsqueeze(s, -2), vh), a, 1e-12);
    require_orthonormal_columns(u);
    require_orthonormal_columns(st::transpose(vh, -1, -2));
    require_ascending(-s);
  }
  for (const st::Shape& shape : {st::Shape{4, 3}, st::Shape{3, 4}}) {
    const int64_t m = shape[0], n = shape[1], k = std::min(m, n);
    const st::Tensor cu = normal({m, k}, 12), cs = normal({k}, 13), cv = normal({k, n}, 14);
    check_grads<2>(
        [&](const auto& x) {
          const auto [u, s, vh] = st::linalg::svd(x);
          return st::sum(s * cs) + st::sum(u * u * cu) + st::sum(vh * vh * cv);
        },
        {normal(shape, 15)});
  }
}

TEST_CASE("qr: Q R = A, Q^T Q = I, R upper, derivatives for tall, square and wide",
          "[ad][linalg]") {
  for (const st::Shape& shape : {st::Shape{5, 3}, st::Shape{4, 4}, st::Shape{3, 5}}) {
    const st::Tensor a = normal(shape, 16);
    const auto [q, r] = st::linalg::qr(a);
    require_near(st::matmul(q, r), a, 1e-12);
    require_orthonormal_columns(q);
    require_near(st::tril(r, -1), st::zeros(r.shape(), st::f64), 0);
    const int64_t k = std::min(shape[0], shape[1]);
    const st::Tensor wq = normal({shape[0], k}, 17), wr = normal({k, shape[1]}, 18);
    check_grads<2>(
        [&](const auto& x) {
          const auto [qq, rr] = st::linalg::qr(x);
          return st::sum(qq * wq) + st::sum(rr * wr);
        },
        {a});
  }
}

TEST_CASE("eigvalsh: the gradient at a repeated eigenvalue is finite", "[ad][linalg]") {
  // sum(eigvalsh(A)) = trace(A): its gradient is I everywhere, also at A = I where every
  // eigenvalue repeats (JAX and PyTorch give NaN there: their eigenvector terms divide by 0).
  const st::Tensor eye = st::eye(4, st::f64);
  require_near(st::grad([](const auto& x) { return st::sum(st::linalg::eigvalsh(x)); }, eye), eye,
               1e-15);
  // The largest eigenvalue of diag(3, 1, 1, 1) (simple) while the others repeat.
  const st::Tensor d = st::diag_embed(st::from_vector(std::vector<double>{1, 1, 3, 1}));
  const st::Tensor g = st::grad([](const auto& x) { return st::max(st::linalg::eigvalsh(x)); }, d);
  require_near(g, st::diag_embed(st::from_vector(std::vector<double>{0, 0, 1, 0})), 1e-15);
}

TEST_CASE("eigh, svd: derivatives through eigenvectors of a repeated eigenvalue are NaN",
          "[ad][linalg]") {
  // The eigenvectors are not differentiable where eigenvalues repeat, so the chain rule
  // through them fails even for smooth functions: the Hessian of |A|_F^2 = sum(eigvalsh(A)^2)
  // along E01 + E10 is 4, but at A = I no choice of the tied terms gives it (0 did, silently).
  const st::Tensor eye = st::eye(2, st::f64);
  const st::Tensor e01 = st::from_vector(std::vector<double>{0, 1, 1, 0}, {2, 2});
  const st::Tensor e11 = st::from_vector(std::vector<double>{0, 0, 0, 1}, {2, 2});
  auto squares = [](const auto& a) {
    const auto w = st::linalg::eigvalsh(a);
    return st::sum(w * w);
  };
  for (double v : st::hvp(squares, eye, e01).to_vector<double>()) CHECK(std::isnan(v));
  // A direction with no component between the tied eigenvectors is exact: 2 E11.
  require_near(st::hvp(squares, eye, e11), e11 * 2.0, 1e-14);
  // The same for the singular values: sum(svdvals(A)^2) = |A|_F^2.
  auto sv_squares = [](const auto& a) {
    const auto s = st::linalg::svdvals(a);
    return st::sum(s * s);
  };
  for (double v : st::hvp(sv_squares, eye, e01).to_vector<double>()) CHECK(std::isnan(v));
  require_near(st::hvp(sv_squares, eye, e11), e11 * 2.0, 1e-14);
  // A matrix function v diag(exp(w)) v^T (= expm(A)): its derivative at I along E01 + E10 is
  // e (E01 + E10), which the eigenvectors cannot give; away from ties it is exact.
  auto expm = [](const auto& a) {
    const auto [w, v] = st::linalg::eigh(a);
    return st::matmul(v * st::unsqueeze(st::exp(w), -2), st::transpose(v, -1, -2));
  };
  const auto [y, dy] = st::jvp(expm, eye, e01);
  for (double v : dy.to_vector<double>()) CHECK(std::isnan(v));
  check_grads<2>([&](const auto& a) { return st::sum(expm(a) * a); }, {symmetric({3, 3}, 31)});
  // First derivatives of functions of the eigenvalues alone never meet the tied terms.
  require_near(st::grad(squares, eye), eye * 2.0, 1e-14);
}
