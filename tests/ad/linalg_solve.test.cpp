// SPDX-License-Identifier: MIT
// st::linalg's solvers and determinants (diff/linalg/solve.hpp, det.hpp) against Eigen's
// decompositions in f64 and the defining identities, with derivatives against finite
// differences (third order for solve and slogdet, as the issue asks).
#include <cmath>
#include <type_traits>
#include <vector>

#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/linalg_checks.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;
using st::testing::require_near;
using st::testing::spd;

namespace {
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
Mat eigen_of(const st::Tensor& t) {
  const std::vector<double> v = t.to_vector<double>();
  Mat m(t.shape()[0], t.shape()[1]);
  for (int64_t i = 0; i < m.rows(); ++i) {
    for (int64_t j = 0; j < m.cols(); ++j) m(i, j) = v[std::size_t(i * m.cols() + j)];
  }
  return m;
}
st::Tensor tensor_of(const Mat& m) {
  return st::from_vector(std::vector<double>(m.data(), m.data() + m.size()), {m.rows(), m.cols()});
}
}  // namespace

TEST_CASE("solve: against Eigen's LU, vector and batched right-hand sides", "[ad][linalg]") {
  const st::Tensor a = normal({5, 5}, 21), b = normal({5, 3}, 22);
  require_near(st::linalg::solve(a, b), tensor_of(eigen_of(a).partialPivLu().solve(eigen_of(b))),
               1e-12);
  const st::Tensor v = normal({5}, 23);
  require_near(st::linalg::solve(a, v), st::linalg::solve(a, v.unsqueeze(1)).squeeze(1), 0);
  // A batch of matrices with one right-hand side broadcast over it, and a transposed input.
  const st::Tensor batch = normal({3, 5, 5}, 24);
  const st::Tensor x = st::linalg::solve(batch.transpose(1, 2), b);
  for (int64_t i = 0; i < 3; ++i) {
    const Mat ai = eigen_of(st::Tensor(batch.ix(i)).transpose(0, 1));
    require_near(st::Tensor(x.ix(i)), tensor_of(ai.partialPivLu().solve(eigen_of(b))), 1e-12);
  }
  check_grads<3>([](const auto& m, const auto& r) { return st::linalg::solve(m, r); },
                 {normal({4, 4}, 25), normal({4, 2}, 26)});
}

TEST_CASE("cho_solve, inv, solve_triangular: identities and derivatives", "[ad][linalg]") {
  const st::Tensor a = spd({4, 4}, 27), b = normal({4, 2}, 28);
  const st::Tensor l = st::linalg::cholesky(a);
  require_near(st::linalg::cho_solve(l, b), st::linalg::solve(a, b), 1e-12);
  require_near(st::matmul(a, st::linalg::inv(a)), st::eye(4, st::f64), 1e-12);
  for (bool lower : {true, false}) {
    for (bool left : {true, false}) {
      for (bool transpose : {true, false}) {
        for (bool unit : {true, false}) {
          const st::linalg::Triangular o{lower, left, transpose, unit};
          st::Tensor t = lower ? st::tril(normal({4, 4}, 29)) : st::triu(normal({4, 4}, 29));
          t = t + st::eye(4, st::f64) * 3.0;
          st::Tensor dense =
              unit ? (lower ? st::tril(t, -1) : st::triu(t, 1)) + st::eye(4, st::f64) : t;
          if (transpose) dense = dense.transpose(0, 1);
          const st::Tensor rhs = left ? b : b.transpose(0, 1);
          const st::Tensor x = st::linalg::solve_triangular(t, rhs, o);
          INFO("lower " << lower << " left " << left << " transpose " << transpose << " unit "
                        << unit);
          require_near(left ? st::matmul(dense, x) : st::matmul(x, dense), rhs, 1e-12);
          check_grads<1>(
              [&](const auto& m, const auto& r) { return st::linalg::solve_triangular(m, r, o); },
              {t, rhs});
        }
      }
    }
  }
  check_grads<3>([](const auto& m) { return st::linalg::inv(m); }, {normal({3, 3}, 30)});
  // A batch, and a transposed (column-major) input, as Eigen's inverse.
  const st::Tensor batch = normal({2, 3, 3}, 34);
  const st::Tensor inverses = st::linalg::inv(batch.transpose(1, 2));
  for (int64_t i = 0; i < 2; ++i) {
    const Mat m = eigen_of(st::Tensor(batch.ix(i)));
    require_near(st::Tensor(inverses.ix(i)), tensor_of(m.transpose().inverse()), 1e-12);
  }
}

TEST_CASE("slogdet, det, logdet: against Eigen, third order", "[ad][linalg]") {
  const st::Tensor a = normal({5, 5}, 31);
  const double want = eigen_of(a).determinant();
  const auto [sign, logabsdet] = st::linalg::slogdet(a);
  CHECK(sign.item<double>() == (want > 0 ? 1.0 : -1.0));
  CHECK(logabsdet.item<double>() == Approx(std::log(std::abs(want))).epsilon(1e-12));
  CHECK(st::linalg::det(a).item<double>() == Approx(want).epsilon(1e-12));
  // The gradient of log|det| is a^-T.
  require_near(st::grad([](const auto& x) { return st::linalg::slogdet(x).second; }, a),
               tensor_of(eigen_of(a).inverse().transpose()), 1e-11);
  const st::Tensor s = spd({4, 4}, 32);
  CHECK(st::linalg::logdet(s).item<double>() ==
        Approx(std::log(eigen_of(s).determinant())).epsilon(1e-12));
  check_grads<3>([](const auto& x) { return st::linalg::slogdet(x).second; }, {normal({4, 4}, 33)});
  // Through a transposed view: log|det a^T| = log|det a|, so the gradient is a^-T again.
  require_near(
      st::grad([](const auto& x) { return st::linalg::slogdet(st::transpose(x, 0, 1)).second; }, a),
      tensor_of(eigen_of(a).inverse().transpose()), 1e-11);
  // A singular matrix: sign 0, log|det| -inf, det 0 (NumPy's values).
  const st::Tensor singular = st::from_vector(std::vector<double>{1, 2, 2, 4}, {2, 2});
  const auto [s0, l0] = st::linalg::slogdet(singular);
  CHECK(s0.item<double>() == 0);
  CHECK(l0.item<double>() == -INFINITY);
  CHECK(st::linalg::det(singular).item<double>() == 0);
}

TEST_CASE("lstsq, pinv, matrix_norm: against Eigen", "[ad][linalg]") {
  const st::Tensor a = normal({6, 3}, 34), b = normal({6, 2}, 35);
  const Mat ae = eigen_of(a);
  require_near(st::linalg::lstsq(a, b), tensor_of(ae.colPivHouseholderQr().solve(eigen_of(b))),
               1e-12);
  const st::Tensor p = st::linalg::pinv(a);
  require_near(st::matmul(st::matmul(a, p), a), a, 1e-12);
  require_near(st::matmul(st::matmul(p, a), p), p, 1e-12);
  const Eigen::JacobiSVD<Mat> svd(ae);
  CHECK(st::linalg::matrix_norm(a).item<double>() == Approx(ae.norm()).epsilon(1e-13));
  CHECK(st::linalg::matrix_norm(a, st::linalg::MatrixNorm::nuclear).item<double>() ==
        Approx(svd.singularValues().sum()).epsilon(1e-12));
  CHECK(st::linalg::matrix_norm(a, st::linalg::MatrixNorm::spectral).item<double>() ==
        Approx(svd.singularValues()(0)).epsilon(1e-12));
  // pinv is a primitive with Golub and Pereyra's derivative: third order, tall and wide.
  check_grads<3>([](const auto& x) { return st::linalg::pinv(x); }, {normal({4, 3}, 36)});
  check_grads<3>([](const auto& x) { return st::linalg::pinv(x); }, {normal({2, 3}, 38)});
  check_grads<2>(
      [](const auto& x) { return st::linalg::matrix_norm(x, st::linalg::MatrixNorm::nuclear); },
      {normal({4, 3}, 37)});
}

TEST_CASE("pinv: derivatives at repeated singular values equal inv's", "[ad][linalg]") {
  // The identity and an orthogonal matrix have every singular value equal: through the SVD's
  // u and v the gradient was -diag(W) at I (silently) and then NaN; a^+ = a^-1 there, so inv's
  // gradient (through LU) is the reference. PyTorch gives -W at I as well.
  const st::Tensor w = st::from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  const st::Tensor q = st::from_vector(std::vector<double>{0.6, -0.8, 0.8, 0.6}, {2, 2});
  auto through = [&](auto inverse) {
    return [&w, inverse](const auto& a) { return st::sum(inverse(a) * w); };
  };
  auto pinv = through([](const auto& a) { return st::linalg::pinv(a); });
  auto inv = through([](const auto& a) { return st::linalg::inv(a); });
  for (const st::Tensor& a : {st::eye(2, st::f64), q}) {
    require_near(st::grad(pinv, a), st::grad(inv, a), 1e-14);
    require_near(st::hessian(pinv, a), st::hessian(inv, a), 1e-13);
  }
  require_near(st::grad(pinv, st::eye(2, st::f64)), -w, 1e-15);
  // A badly scaled invertible matrix: the terms that vanish at full rank are dropped, not
  // computed from I - a p, whose rounding a second derivative multiplies by |a| (7.6e-6 apart).
  const st::Tensor big =
      st::from_vector(std::vector<double>{1e6 + 1, 1e6 + 0.3, 1e6 - 0.3, 1e6 + 2}, {2, 2});
  const st::Tensor v = st::from_vector(std::vector<double>{0.3, -0.7, 0.2, 0.9}, {2, 2});
  auto reverse_over_forward = [&](const auto& a) {
    using T = std::decay_t<decltype(a)>;
    return st::jvp(pinv, a, st::lift<T>(v)).second;
  };
  require_near(st::hvp(pinv, big, v), st::grad(reverse_over_forward, big), 1e-12);
  // Batched: vmap of the gradient against a loop.
  const st::Tensor batch = st::stack({st::eye(2, st::f64), q, normal({2, 2}, 39)}, 0);
  const st::Tensor g = st::vmap(st::grad(pinv))(batch);
  for (int64_t i = 0; i < 3; ++i) {
    require_near(g.ix(i), st::grad(pinv, batch.ix(i)), 1e-14);
  }
}
