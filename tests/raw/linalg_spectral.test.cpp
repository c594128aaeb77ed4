// SPDX-License-Identifier: MIT
// raw::eigh, raw::svd and raw::qr on every layout kind
// (tests/support/linalg_ref.hpp), f32 and f64, batches of several shapes (an
// empty one too), tall, wide and square: their identities (A V = V diag(w),
// V^T V = I; U S Vh = A with orthonormal U and Vh; Q R = A, Q^T Q = I, R upper)
// and the values of Eigen's SelfAdjointEigenSolver and JacobiSVD.
#include <Eigen/Dense>
#include <Eigen/SVD>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/linalg_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
using st::DType;
using st::RawTensor;
using st::Shape;
using tt::kBatches;
using tt::MatD;

namespace {

/// Random values for shape, the first matrix repeated for broadcast_batch.
std::vector<double> random_for(const Shape& shape, DType dtype, uint64_t seed, tt::MatLayout kind) {
  std::vector<double> v = tt::normal_values(tt::numel_of(shape), seed, dtype);
  const int64_t per = shape[shape.ndim() - 2] * shape[shape.ndim() - 1];
  return kind == tt::MatLayout::broadcast_batch && per > 0 ? tt::repeat_first(v, per) : v;
}

}  // namespace

TEST_CASE("eigh: A V = V diag(w), orthonormal V, w ascending, as Eigen's solver", "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (const Shape& batch : kBatches) {
      for (int64_t n : {1, 4, 23}) {
        for (tt::MatLayout kind : tt::kMatLayouts) {
          const Shape shape = tt::shape_of(batch, {n, n});
          INFO(tt::dname(dtype) << " shape " << shape << " layout " << tt::mat_layout_name(kind));
          // Only the lower triangle is read: the upper one holds other values.
          const std::vector<double> vals = random_for(shape, dtype, 40 + n, kind);
          const auto [w, v] = st::raw::eigh(tt::laid_out(shape, dtype, vals, kind));
          REQUIRE(w.shape() == tt::shape_of(batch, {n}));
          REQUIRE(v.shape() == shape);
          const std::vector<double> wv = tt::values(w), vv = tt::values(v);
          const double tol = tt::tolerance(dtype, n);
          for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
            MatD a = tt::matrix(vals, b, n, n);
            a = a.triangularView<Eigen::Lower>().toDenseMatrix() +
                a.triangularView<Eigen::StrictlyLower>().toDenseMatrix().transpose();
            const MatD vb = tt::matrix(vv, b, n, n);
            Eigen::VectorXd wb(n);
            for (int64_t i = 0; i < n; ++i) wb(i) = wv[std::size_t(b * n + i)];
            for (int64_t i = 1; i < n; ++i) CHECK(wb(i - 1) <= wb(i));
            const double scale = std::max(1.0, a.norm());
            CHECK((a * vb - vb * wb.asDiagonal()).norm() <= tol * scale);
            CHECK((vb.transpose() * vb - MatD::Identity(n, n)).norm() <= tol);
            const Eigen::SelfAdjointEigenSolver<MatD> ref(a, Eigen::EigenvaluesOnly);
            CHECK((ref.eigenvalues() - wb).norm() <= tol * scale);
          }
        }
      }
    }
  }
}

TEST_CASE("svd: U diag(S) Vh = A, orthonormal U and Vh, S descending, as Eigen's JacobiSVD",
          "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (const Shape& batch : kBatches) {
      for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1}, {5, 3}, {3, 7}, {6, 6}, {40, 17}}) {
        for (tt::MatLayout kind : tt::kMatLayouts) {
          const Shape shape = tt::shape_of(batch, {m, n});
          const int64_t k = std::min(m, n);
          INFO(tt::dname(dtype) << " shape " << shape << " layout " << tt::mat_layout_name(kind));
          const std::vector<double> vals = random_for(shape, dtype, 60 + m * n, kind);
          const auto [u, s, vh] = st::raw::svd(tt::laid_out(shape, dtype, vals, kind));
          REQUIRE(u.shape() == tt::shape_of(batch, {m, k}));
          REQUIRE(s.shape() == tt::shape_of(batch, {k}));
          REQUIRE(vh.shape() == tt::shape_of(batch, {k, n}));
          const std::vector<double> uv = tt::values(u), sv = tt::values(s), vv = tt::values(vh);
          const double tol = tt::tolerance(dtype, std::max(m, n));
          for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
            const MatD a = tt::matrix(vals, b, m, n), ub = tt::matrix(uv, b, m, k),
                       vb = tt::matrix(vv, b, k, n);
            Eigen::VectorXd sb(k);
            for (int64_t i = 0; i < k; ++i) sb(i) = sv[std::size_t(b * k + i)];
            for (int64_t i = 0; i < k; ++i) CHECK(sb(i) >= 0);
            for (int64_t i = 1; i < k; ++i) CHECK(sb(i - 1) >= sb(i));
            const double scale = std::max(1.0, a.norm());
            CHECK((ub * sb.asDiagonal() * vb - a).norm() <= tol * scale);
            CHECK((ub.transpose() * ub - MatD::Identity(k, k)).norm() <= tol);
            CHECK((vb * vb.transpose() - MatD::Identity(k, k)).norm() <= tol);
            // Two-sided Jacobi: the most accurate of Eigen's SVDs, and a quarter of BDCSVD's
            // compile time (7 s against 28).
            const Eigen::JacobiSVD<MatD> ref(a);
            CHECK((ref.singularValues() - sb).norm() <= tol * scale);
          }
        }
      }
    }
  }
}

TEST_CASE("qr: Q R = A, Q^T Q = I, R upper triangular", "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (const Shape& batch : kBatches) {
      for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1}, {6, 3}, {3, 5}, {7, 7}, {50, 20}}) {
        for (tt::MatLayout kind : tt::kMatLayouts) {
          const Shape shape = tt::shape_of(batch, {m, n});
          const int64_t k = std::min(m, n);
          INFO(tt::dname(dtype) << " shape " << shape << " layout " << tt::mat_layout_name(kind));
          const std::vector<double> vals = random_for(shape, dtype, 80 + m * n, kind);
          const auto [q, r] = st::raw::qr(tt::laid_out(shape, dtype, vals, kind));
          REQUIRE(q.shape() == tt::shape_of(batch, {m, k}));
          REQUIRE(r.shape() == tt::shape_of(batch, {k, n}));
          const std::vector<double> qv = tt::values(q), rv = tt::values(r);
          const double tol = tt::tolerance(dtype, std::max(m, n));
          for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
            const MatD a = tt::matrix(vals, b, m, n), qb = tt::matrix(qv, b, m, k),
                       rb = tt::matrix(rv, b, k, n);
            for (int64_t i = 0; i < k; ++i) {
              for (int64_t j = 0; j < std::min(i, n); ++j) CHECK(rb(i, j) == 0);
            }
            const double scale = std::max(1.0, a.norm());
            CHECK((qb * rb - a).norm() <= tol * scale);
            CHECK((qb.transpose() * qb - MatD::Identity(k, k)).norm() <= tol);
            // R is unique up to the signs of its rows: |diag R| as Eigen's Householder QR.
            const Eigen::HouseholderQR<MatD> ref(a);
            const MatD rr = ref.matrixQR().topRows(k).triangularView<Eigen::Upper>();
            for (int64_t i = 0; i < k; ++i) {
              CHECK(std::abs(std::abs(rb(i, i)) - std::abs(rr(i, i))) <= tol * scale);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("eigh and svd of special matrices: repeated eigenvalues, rank deficiency",
          "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    INFO(tt::dname(dtype));
    const double tol = tt::tolerance(dtype, 4);
    // The identity: eigenvalue 1 four times; any orthonormal basis is right.
    const std::vector<double> eye{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const auto [w, v] = st::raw::eigh(tt::make({4, 4}, dtype, eye));
    for (double x : tt::values(w)) CHECK(std::abs(x - 1) <= tol);
    const MatD vb = tt::matrix(tt::values(v), 0, 4, 4);
    CHECK((vb.transpose() * vb - MatD::Identity(4, 4)).norm() <= tol);
    // Rank 1: u v^T has one nonzero singular value, |u| |v| = sqrt(30) sqrt(2).
    const std::vector<double> outer{1, 1, 2, 2, 3, 3, 4, 4};
    const auto [u, s, vh] = st::raw::svd(tt::make({4, 2}, dtype, outer));
    const std::vector<double> sv = tt::values(s);
    CHECK(std::abs(sv[0] - std::sqrt(60.0)) <= tol * 10);
    CHECK(std::abs(sv[1]) <= tol * 10);
    const MatD ub = tt::matrix(tt::values(u), 0, 4, 2);
    CHECK((ub.transpose() * ub - MatD::Identity(2, 2)).norm() <= tol);
  }
}
