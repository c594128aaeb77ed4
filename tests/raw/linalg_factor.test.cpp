// SPDX-License-Identifier: MIT
// raw::cholesky and raw::lu on every layout kind (tests/support/linalg_ref.hpp),
// f32 and f64, batches of several shapes (an empty one too), against Eigen's
// LLT and PartialPivLU and against their identities (L L^T = A, A[perm] = L U).
// Sizes from 256 on take the CPU's blocked path (raw/cpu/linalg_factor.cpp).
#include <Eigen/Dense>
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

/// Symmetric positive-definite matrices G G^T / n + I, with the strict upper triangle holding
/// values that make them unsymmetric (cholesky reads only the lower one); broadcast_batch
/// repeats the first.
std::vector<double> spd_values(const Shape& shape, DType dtype, uint64_t seed, tt::MatLayout kind,
                               std::vector<double>& symmetric) {
  const int64_t n = shape[shape.ndim() - 1], count = tt::batch_count(shape);
  std::vector<double> g = tt::normal_values(count * n * n, seed, dtype);
  std::vector<double> vals(g.size()), sym(g.size());
  for (int64_t b = 0; b < count; ++b) {
    const MatD gb = tt::matrix(g, b, n, n);
    MatD a = gb * gb.transpose() / double(n) + MatD::Identity(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double lower = dtype == DType::f32 ? double(float(a(std::max(i, j), std::min(i, j))))
                                                 : a(std::max(i, j), std::min(i, j));
        sym[std::size_t(b * n * n + i * n + j)] = lower;
        vals[std::size_t(b * n * n + i * n + j)] = j > i ? 7.0 + double(j) : lower;
      }
    }
  }
  if (kind == tt::MatLayout::broadcast_batch) {
    vals = tt::repeat_first(vals, n * n);
    sym = tt::repeat_first(sym, n * n);
  }
  symmetric = sym;
  return vals;
}

}  // namespace

TEST_CASE("cholesky: L L^T = A, L lower with a positive diagonal, as Eigen's LLT",
          "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (const Shape& batch : kBatches) {
      for (int64_t n : {1, 5, 17}) {
        for (tt::MatLayout kind : tt::kMatLayouts) {
          const Shape shape = tt::shape_of(batch, {n, n});
          INFO(tt::dname(dtype) << " shape " << shape << " layout " << tt::mat_layout_name(kind));
          std::vector<double> sym;
          const std::vector<double> vals = spd_values(shape, dtype, 11 + n, kind, sym);
          const RawTensor l = st::raw::cholesky(tt::laid_out(shape, dtype, vals, kind));
          REQUIRE(l.shape() == shape);
          REQUIRE(l.dtype() == dtype);
          const std::vector<double> got = tt::values(l);
          const double tol = tt::tolerance(dtype, n);
          for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
            const MatD lb = tt::matrix(got, b, n, n), ab = tt::matrix(sym, b, n, n);
            for (int64_t i = 0; i < n; ++i) {
              CHECK(lb(i, i) > 0);
              for (int64_t j = i + 1; j < n; ++j) CHECK(lb(i, j) == 0);
            }
            CHECK((lb * lb.transpose() - ab).norm() <= tol * ab.norm());
            const Eigen::LLT<MatD> ref(ab);
            CHECK((lb - MatD(ref.matrixL())).norm() <= tol * ab.norm());
          }
        }
      }
    }
  }
}

TEST_CASE("cholesky: the blocked path (n >= 256) agrees with Eigen's LLT", "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (int64_t n : {256, 300}) {
      for (tt::MatLayout kind : {tt::MatLayout::contiguous, tt::MatLayout::transposed}) {
        const Shape shape = n == 300 ? Shape{2, n, n} : Shape{n, n};
        INFO(tt::dname(dtype) << " shape " << shape << " layout " << tt::mat_layout_name(kind));
        std::vector<double> sym;
        const std::vector<double> vals = spd_values(shape, dtype, 5, kind, sym);
        const std::vector<double> got =
            tt::values(st::raw::cholesky(tt::laid_out(shape, dtype, vals, kind)));
        for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
          const MatD lb = tt::matrix(got, b, n, n), ab = tt::matrix(sym, b, n, n);
          CHECK(lb.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().norm() == 0);
          const double tol = tt::tolerance(dtype, n);
          CHECK((lb * lb.transpose() - ab).norm() <= tol * ab.norm());
          CHECK((lb - MatD(Eigen::LLT<MatD>(ab).matrixL())).norm() <= tol * ab.norm());
        }
      }
    }
  }
}

namespace {

/// Checks lu's three results for the matrices `vals` of shape [batch..., n, n] against
/// A[perm] = L U, the pivots against the permutation, |L| <= 1, and Eigen's PartialPivLU in
/// the same precision (same pivots, same factors).
void check_lu(const Shape& shape, DType dtype, const std::vector<double>& vals,
              const std::array<RawTensor, 3>& res) {
  const int64_t n = shape[shape.ndim() - 1];
  REQUIRE(res[0].shape() == shape);
  REQUIRE(res[1].dtype() == DType::i64);
  REQUIRE(res[2].dtype() == DType::i64);
  REQUIRE(res[1].shape() == tt::shape_of(Shape(shape.begin(), shape.end() - 2), {n}));
  const std::vector<double> lu = tt::values(res[0]), piv = tt::values(res[1]),
                            perm = tt::values(res[2]);
  const double tol = tt::tolerance(dtype, n);
  for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
    const MatD a = tt::matrix(vals, b, n, n), f = tt::matrix(lu, b, n, n);
    MatD l = MatD::Identity(n, n), u = MatD::Zero(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) (j < i ? l : u)(i, j) = f(i, j);
    }
    CHECK(l.cwiseAbs().maxCoeff() <= 1.0);
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[std::size_t(i)] = i;
    MatD pa(n, n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = int64_t(piv[std::size_t(b * n + i)]);
      REQUIRE(p >= i);
      REQUIRE(p < n);
      std::swap(order[std::size_t(i)], order[std::size_t(p)]);
    }
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(int64_t(perm[std::size_t(b * n + i)]) == order[std::size_t(i)]);
      pa.row(i) = a.row(order[std::size_t(i)]);
    }
    CHECK((l * u - pa).norm() <= tol * std::max(1.0, a.norm()));
    // Eigen in the same precision: P A = L U with the same partial pivoting.
    if (dtype == DType::f64) {
      const Eigen::PartialPivLU<MatD> ref(a);
      CHECK((ref.matrixLU() - f).norm() <= tol * std::max(1.0, a.norm()));
      const Eigen::PermutationMatrix<Eigen::Dynamic> inverse = ref.permutationP().inverse();
      const Eigen::VectorXi idx = inverse.indices();
      for (int64_t i = 0; i < n; ++i) CHECK(idx(i) == int(order[std::size_t(i)]));
    } else {
      using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const Eigen::PartialPivLU<MatF> ref(a.cast<float>());
      CHECK((ref.matrixLU().cast<double>() - f).norm() <= tol * std::max(1.0, a.norm()));
    }
  }
}

}  // namespace

TEST_CASE("lu: A[perm] = L U with partial pivoting, as Eigen's PartialPivLU", "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (const Shape& batch : kBatches) {
      for (int64_t n : {1, 4, 19}) {
        for (tt::MatLayout kind : tt::kMatLayouts) {
          const Shape shape = tt::shape_of(batch, {n, n});
          INFO(tt::dname(dtype) << " shape " << shape << " layout " << tt::mat_layout_name(kind));
          std::vector<double> vals = tt::normal_values(tt::numel_of(shape), 3 + n, dtype);
          if (kind == tt::MatLayout::broadcast_batch) vals = tt::repeat_first(vals, n * n);
          check_lu(shape, dtype, vals, st::raw::lu(tt::laid_out(shape, dtype, vals, kind)));
        }
      }
    }
  }
}

TEST_CASE("lu: the blocked path (n >= 256) and singular matrices", "[raw][linalg]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    for (int64_t n : {256, 333}) {
      const Shape shape{n, n};
      INFO(tt::dname(dtype) << " n " << n);
      const std::vector<double> vals = tt::normal_values(n * n, 21, dtype);
      check_lu(shape, dtype, vals,
               st::raw::lu(tt::laid_out(shape, dtype, vals, tt::MatLayout::stepped)));
    }
  }
  SECTION("a singular matrix is factorised, with a zero on U's diagonal, and is no error") {
    // Column 1 is twice column 0 (rank 2 of 3), and every multiplier a power of 2, so the
    // elimination leaves an exact zero.
    const std::vector<double> vals{1, 2, 3, 2, 4, 1, 4, 8, 5};
    const auto res = st::raw::lu(tt::make({3, 3}, DType::f64, vals));
    check_lu({3, 3}, DType::f64, vals, res);
    const std::vector<double> f = tt::values(res[0]);
    CHECK(std::min({std::abs(f[0]), std::abs(f[4]), std::abs(f[8])}) == 0.0);
    const auto zero = st::raw::lu(tt::make({2, 2}, DType::f32, {0, 0, 0, 0}));
    CHECK(tt::values(zero[0]) == std::vector<double>{0, 0, 0, 0});
    CHECK(tt::values(zero[1]) == std::vector<double>{0, 1});
  }
}
