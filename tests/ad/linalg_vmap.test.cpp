// SPDX-License-Identifier: MIT
// st::linalg under st::vmap (each op's batching rule, and its derivative rules on batched
// values) against a loop over the examples; jacfwd = jacrev (the batched tangents and
// cotangents of a Jacobian); hvp against the Hessian; and the errors of bad input.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/ad_inputs.hpp"
#include "support/linalg_checks.hpp"

namespace st = strata;
using st::testing::normal;
using st::testing::require_near;
using st::testing::spd;

namespace {
// vmap(f)(xs) against f on each example of xs (stacked on axis 0).
template <class F>
void require_vmap_is_loop(F f, const st::Tensor& xs, double tol) {
  const st::Tensor mapped = st::vmap(f)(xs);
  for (int64_t i = 0; i < xs.shape()[0]; ++i) {
    require_near(st::Tensor(mapped.ix(i)), f(st::Tensor(xs.ix(i))), tol);
  }
}
}  // namespace

TEST_CASE("linalg under vmap: values and gradients equal a loop", "[ad][linalg][vmap]") {
  const st::Tensor spds = spd({3, 4, 4}, 41), gens = normal({3, 4, 4}, 42);
  const st::Tensor b = normal({4, 2}, 43);
  auto chol = [](const auto& a) { return st::linalg::cholesky(a); };
  auto solve = [&](const auto& a) { return st::linalg::solve(a, b); };
  auto logdet = [](const auto& a) { return st::linalg::slogdet(a).second; };
  auto eig = [](const auto& a) { return st::linalg::eigvalsh(a); };
  auto sv = [](const auto& a) { return st::linalg::svdvals(a); };
  auto qr_r = [](const auto& a) { return st::linalg::qr(a).second; };
  require_vmap_is_loop(chol, spds, 1e-13);
  require_vmap_is_loop(solve, gens, 1e-13);
  require_vmap_is_loop(logdet, gens, 1e-13);
  require_vmap_is_loop(eig, spds, 1e-13);
  require_vmap_is_loop(sv, gens, 1e-13);
  require_vmap_is_loop(qr_r, gens, 1e-13);
  auto inverse = [](const auto& a) { return st::linalg::inv(a); };
  require_vmap_is_loop(inverse, gens, 1e-12);
  require_vmap_is_loop(st::grad([&](const auto& a) { return st::sum(inverse(a) * a); }), gens,
                       1e-11);
  // Per-example gradients: the rules run on batched values (the LU permutation differs per
  // example, so its rows move by permutation matrices).
  require_vmap_is_loop(st::grad(logdet), gens, 1e-12);
  require_vmap_is_loop(st::grad([&](const auto& a) { return st::sum(solve(a)); }), gens, 1e-12);
  require_vmap_is_loop(st::grad([&](const auto& a) { return st::sum(chol(a)); }), spds, 1e-12);
  require_vmap_is_loop(st::grad([&](const auto& a) { return st::sum(eig(a) * eig(a)); }), spds,
                       1e-12);
}

TEST_CASE("linalg Jacobians: jacfwd equals jacrev, the Hessian is symmetric", "[ad][linalg]") {
  const st::Tensor a = normal({3, 3}, 44), s = spd({3, 3}, 45);
  require_near(st::jacfwd([](const auto& x) { return st::linalg::inv(x); }, a),
               st::jacrev([](const auto& x) { return st::linalg::inv(x); }, a), 1e-12);
  require_near(st::jacfwd([](const auto& x) { return st::linalg::cholesky(x); }, s),
               st::jacrev([](const auto& x) { return st::linalg::cholesky(x); }, s), 1e-12);
  auto logdet = [](const auto& x) { return st::linalg::logdet(x); };
  const st::Tensor h = st::hessian(logdet, s).reshape({9, 9});
  require_near(h, h.transpose(0, 1), 1e-12);
  // hvp = H v, forward over reverse.
  const st::Tensor v = normal({3, 3}, 46);
  require_near(st::hvp(logdet, s, v), st::matmul(h, v.reshape({9})).reshape({3, 3}), 1e-12);
}

namespace {
template <class E, class F>
void require_error(F f, const std::string& part) {
  try {
    f();
    FAIL("no error; expected one containing: " << part);
  } catch (const E& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("linalg: bad input gives a clear error", "[ad][linalg][errors]") {
  const st::Tensor singular = st::from_vector(std::vector<double>{1, 2, 2, 4}, {2, 2});
  const st::Tensor indefinite = st::from_vector(std::vector<double>{1, 2, 2, 1}, {2, 2});
  const st::Tensor nan = st::from_vector(std::vector<double>{1, NAN, 0, 1}, {2, 2});
  const st::Tensor rhs = st::ones({2, 1}, st::f64);
  using st::LinAlgError, st::ShapeError, st::DTypeError;
  require_error<LinAlgError>([&] { st::linalg::solve(singular, rhs); }, "solve: input is singular");
  require_error<LinAlgError>([&] { st::linalg::inv(singular); }, "inv: input is singular");
  // log|det| is -inf there, and its gradient a^-T does not exist.
  require_error<LinAlgError>(
      [&] { st::grad([](const auto& a) { return st::linalg::slogdet(a).second; }, singular); },
      "the derivative of det, slogdet or logdet: lu is singular: U's diagonal element 1 is zero");
  require_error<LinAlgError>(
      [&] { st::linalg::cholesky(indefinite); },
      "cholesky: input is not positive-definite: the leading minor of order 2");
  const st::Tensor batch = st::stack({st::eye(2, st::f64), indefinite}, 0);
  require_error<LinAlgError>([&] { st::linalg::cholesky(batch); }, "input[1]");
  require_error<LinAlgError>([&] { st::linalg::cholesky(nan); }, "NaN");
  require_error<LinAlgError>([&] { st::linalg::eigh(nan); }, "NaN");
  require_error<ShapeError>([&] { st::linalg::solve(st::ones({2, 3}, st::f64), rhs); }, "square");
  require_error<ShapeError>([&] { st::linalg::det(st::ones({3}, st::f64)); }, "rank >= 2");
  require_error<ShapeError>(
      [&] {
        st::linalg::solve(st::eye(2, st::f64), st::ones({3, 1}, st::f64));
      },
      "solve");
  require_error<ShapeError>(
      [&] {
        st::linalg::solve(st::ones({2, 2, 2}, st::f64), st::ones({3, 2, 1}, st::f64));
      },
      "do not broadcast");
  require_error<DTypeError>([&] { st::linalg::inv(st::ones({2, 2}, st::i64)); }, "f32 or f64");
  require_error<LinAlgError>(
      [&] {
        st::linalg::solve_triangular(st::zeros({2, 2}, st::f64), rhs);
      },
      "solve_triangular: input is singular");
  // Each error names the function called, not the primitive it is made of.
  const st::Tensor nan_rhs = st::from_vector(std::vector<double>{NAN, 1}, {2, 1});
  require_error<LinAlgError>([&] { st::linalg::solve(st::eye(2, st::f64), nan_rhs); },
                             "solve: the right-hand side b holds a NaN");
  require_error<LinAlgError>([&] { st::linalg::cho_solve(st::eye(2, st::f64), nan_rhs); },
                             "cho_solve: the right-hand side b holds a NaN");
  require_error<LinAlgError>(
      [&] {
        st::linalg::cho_solve(st::zeros({2, 2}, st::f64), rhs);
      },
      "cho_solve: input is singular");
  require_error<LinAlgError>([&] { st::linalg::pinv(nan); }, "pinv: input holds a NaN");
  require_error<LinAlgError>([&] { st::linalg::lstsq(nan, rhs); }, "lstsq: input holds a NaN");
  require_error<LinAlgError>([&] { st::linalg::matrix_norm(nan, st::linalg::MatrixNorm::nuclear); },
                             "matrix_norm: input holds a NaN");
  require_error<ShapeError>(
      [&] {
        st::linalg::lstsq(st::ones({2, 4, 2}, st::f64), st::ones({3, 4, 1}, st::f64));
      },
      "lstsq");
  require_error<ShapeError>(
      [&] {
        st::linalg::matrix_norm(st::zeros({0, 0}, st::f64), st::linalg::MatrixNorm::spectral);
      },
      "matrix_norm: the spectral norm needs non-empty matrices");
  // A NaN in either triangle is found: the symmetric factorisations read (a + a^T) / 2.
  const st::Tensor nan_upper = st::from_vector(std::vector<double>{4, NAN, 1, 3}, {2, 2});
  require_error<LinAlgError>([&] { st::linalg::cholesky(nan_upper); }, "either triangle");
  // Empty batches and 0 x 0 matrices are no error.
  CHECK(st::linalg::cholesky(st::zeros({0, 3, 3}, st::f64)).shape() == st::Shape{0, 3, 3});
  CHECK(st::linalg::det(st::zeros({0, 0}, st::f64)).item<double>() == 1.0);
  // Matrices with a zero dim, as numpy.linalg and torch.linalg give them.
  CHECK(st::linalg::solve(st::eye(3, st::f64), st::zeros({3, 0}, st::f64)).shape() ==
        st::Shape{3, 0});
  CHECK(st::linalg::solve(st::zeros({0, 0}, st::f64), st::zeros({0}, st::f64)).shape() ==
        st::Shape{0});
  CHECK(st::linalg::pinv(st::zeros({3, 0}, st::f64)).shape() == st::Shape{0, 3});
  CHECK(st::linalg::pinv(st::zeros({2, 0, 4}, st::f64)).shape() == st::Shape{2, 4, 0});
  CHECK(st::linalg::lstsq(st::zeros({3, 0}, st::f64), st::ones({3, 2}, st::f64)).shape() ==
        st::Shape{0, 2});
  const st::Tensor wide_empty = st::linalg::lstsq(st::zeros({0, 2}, st::f64), st::ones({0, 1}));
  CHECK(wide_empty.to_vector<double>() == std::vector<double>{0, 0});
  CHECK(st::linalg::matrix_norm(st::zeros({0, 3}, st::f64), st::linalg::MatrixNorm::nuclear)
            .item<double>() == 0.0);
}
