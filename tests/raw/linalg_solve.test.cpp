// SPDX-License-Identifier: MIT
// raw::triangular_solve: every combination of lower / left / transpose /
// unit_diagonal, A and B on every layout kind (tests/support/linalg_ref.hpp),
// broadcast batch dims, f32 and f64, against Eigen's triangularView solve and
// the residual op(A) X - B. The triangle A's options leave unread holds NaNs
// (and so does the diagonal under unit_diagonal): reading them would show.
// raw::lu_inverse: (P^T L U)^-1 for packed factors on every layout and random
// permutations broadcast against them, against Eigen's inverse of the product.
#include <Eigen/Dense>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "support/linalg_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
using st::DType;
using st::RawTensor;
using st::Shape;
using tt::kNaN;
using tt::MatD;

namespace {

/// Triangular matrices for opts (well-conditioned): the read triangle 0.3 normal / sqrt(n), the
/// diagonal 1 + |normal|
/// with random signs, everything unread NaN.
std::vector<double> triangular_values(const Shape& shape, DType dtype, uint64_t seed,
                                      const st::raw::TriangularSolve& opts, tt::MatLayout kind) {
  const int64_t n = shape[shape.ndim() - 1];
  std::vector<double> v = tt::normal_values(tt::numel_of(shape), seed, dtype);
  const double scale = 0.3 / std::sqrt(double(std::max<int64_t>(n, 1)));
  for (int64_t b = 0; b < tt::batch_count(shape); ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double& x = v[std::size_t(b * n * n + i * n + j)];
        if (i == j) {
          x = opts.unit_diagonal ? kNaN : (x < 0 ? -1.0 : 1.0) * (1.0 + std::abs(x));
        } else if ((i > j) != opts.lower) {
          x = kNaN;
        } else {
          x *= scale;
        }
        if (dtype == DType::f32) x = double(float(x));
      }
    }
  }
  return kind == tt::MatLayout::broadcast_batch ? tt::repeat_first(v, n * n) : v;
}

/// The matrix op(A) means: its triangle, its diagonal (or ones), zeros elsewhere, transposed
/// for opts.transpose.
MatD effective(const MatD& a, const st::raw::TriangularSolve& opts) {
  const int64_t n = a.rows();
  MatD t = MatD::Zero(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (i == j) {
        t(i, j) = opts.unit_diagonal ? 1.0 : a(i, j);
      } else if ((i > j) == opts.lower) {
        t(i, j) = a(i, j);
      }
    }
  }
  return opts.transpose ? MatD(t.transpose()) : t;
}

/// X from Eigen's triangular solve: op(A) X = B or X op(A) = B.
MatD reference(const MatD& op_a, const MatD& b, bool left, bool lower_op) {
  // Eigen's triangular solve reads element (0, 0) even when a matrix is empty (undefined
  // behaviour that UBSan reports); an empty X is the answer there.
  if (op_a.size() == 0 || b.size() == 0) return MatD(b.rows(), b.cols());
  if (left) {
    return lower_op ? MatD(op_a.triangularView<Eigen::Lower>().solve(b))
                    : MatD(op_a.triangularView<Eigen::Upper>().solve(b));
  }
  // X op(A) = B  <=>  op(A)^T X^T = B^T.
  const MatD at = op_a.transpose();
  const MatD bt = b.transpose();
  return lower_op ? MatD(at.triangularView<Eigen::Upper>().solve(bt).transpose())
                  : MatD(at.triangularView<Eigen::Lower>().solve(bt).transpose());
}

/// The flat (row-major) batch element of an operand with batch dims `own` that the output's
/// batch index idx reads: a dim of size 1 broadcasts, leading dims `own` lacks are dropped.
int64_t broadcast_flat(const std::vector<int64_t>& idx, const Shape& own) {
  int64_t f = 0;
  const std::size_t lead = idx.size() - own.size();
  for (std::size_t d = 0; d < own.size(); ++d) f = f * own[d] + (own[d] == 1 ? 0 : idx[lead + d]);
  return f;
}

struct Case {
  Shape batch_a, batch_b;
  int64_t n, k;
};

void check_solve(const Case& c, DType dtype, const st::raw::TriangularSolve& opts,
                 tt::MatLayout kind_a, tt::MatLayout kind_b, uint64_t seed) {
  const Shape sa = tt::shape_of(c.batch_a, {c.n, c.n});
  const Shape sb =
      opts.left ? tt::shape_of(c.batch_b, {c.n, c.k}) : tt::shape_of(c.batch_b, {c.k, c.n});
  INFO(tt::dname(dtype) << " a " << sa << " (" << tt::mat_layout_name(kind_a) << ") b " << sb
                        << " (" << tt::mat_layout_name(kind_b) << ") lower " << opts.lower
                        << " left " << opts.left << " transpose " << opts.transpose
                        << " unit_diagonal " << opts.unit_diagonal);
  const std::vector<double> av = triangular_values(sa, dtype, seed, opts, kind_a);
  std::vector<double> bv = tt::normal_values(tt::numel_of(sb), seed + 1, dtype);
  const int64_t brows = sb[sb.ndim() - 2], bcols = sb[sb.ndim() - 1];
  if (kind_b == tt::MatLayout::broadcast_batch) bv = tt::repeat_first(bv, brows * bcols);
  const RawTensor x = st::raw::triangular_solve(tt::laid_out(sa, dtype, av, kind_a),
                                                tt::laid_out(sb, dtype, bv, kind_b), opts);
  const Shape batch = st::broadcast_shapes(c.batch_a, c.batch_b, "test");
  REQUIRE(x.shape() == tt::shape_of(batch, {brows, bcols}));
  const std::vector<double> xv = tt::values(x);
  const double tol = tt::tolerance(dtype, c.n);
  const bool lower_op = opts.lower != opts.transpose;
  // Each output batch element reads the A and B elements its index broadcasts from.
  tt::for_each_index(batch, [&](const std::vector<int64_t>& idx) {
    auto flat = [&](const Shape& own) { return broadcast_flat(idx, own); };
    const int64_t out = broadcast_flat(idx, batch);
    const MatD op_a = effective(tt::matrix(av, flat(c.batch_a), c.n, c.n), opts);
    const MatD b = tt::matrix(bv, flat(c.batch_b), brows, bcols);
    const MatD xb = tt::matrix(xv, out, brows, bcols);
    const MatD residual = opts.left ? MatD(op_a * xb - b) : MatD(xb * op_a - b);
    CHECK(residual.norm() <= tol * std::max(1.0, b.norm()));
    CHECK((xb - reference(op_a, b, opts.left, lower_op)).norm() <= tol * std::max(1.0, xb.norm()));
  });
}

}  // namespace

TEST_CASE("triangular_solve: every option, layout and broadcast batch, as Eigen's solve",
          "[raw][linalg]") {
  const std::vector<Case> cases = {
      {{}, {}, 1, 1},  {{}, {}, 6, 3},   {{3}, {3}, 5, 2}, {{2, 1}, {3}, 4, 3},
      {{}, {2}, 3, 4}, {{1}, {0}, 3, 2}, {{2}, {}, 4, 0},
  };
  uint64_t seed = 1;
  for (DType dtype : {DType::f64, DType::f32}) {
    for (int bits = 0; bits < 16; ++bits) {
      const st::raw::TriangularSolve opts{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0,
                                          (bits & 8) != 0};
      for (const Case& c : cases) {
        for (std::size_t i = 0; i < std::size(tt::kMatLayouts); ++i) {
          const tt::MatLayout ka = tt::kMatLayouts[i];
          const tt::MatLayout kb =
              tt::kMatLayouts[(i + std::size_t(bits)) % std::size(tt::kMatLayouts)];
          check_solve(c, dtype, opts, ka, kb, seed++);
        }
      }
    }
  }
}

TEST_CASE("triangular_solve: many right-hand sides (the CPU's tiled path) on every option",
          "[raw][linalg]") {
  // n >= 128 cuts the right-hand sides into tiles of 32: 70 of them make a ragged last tile.
  for (int bits = 0; bits < 16; ++bits) {
    const st::raw::TriangularSolve opts{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0,
                                        (bits & 8) != 0};
    const tt::MatLayout ka = bits % 3 == 0   ? tt::MatLayout::transposed
                             : bits % 3 == 1 ? tt::MatLayout::stepped
                                             : tt::MatLayout::contiguous;
    for (DType dtype : {DType::f64, DType::f32}) {
      check_solve({{2}, {}, 150, 70}, dtype, opts, ka, tt::MatLayout::contiguous, 100 + bits);
    }
  }
}

namespace {

/// Packed LU factors [batch..., n, n] (row-major values): L unit lower with entries 0.3 normal /
/// sqrt(n), U upper with that scale and a diagonal 1 + |normal| of random sign.
std::vector<double> packed_factors(const Shape& shape, DType dtype, uint64_t seed) {
  const int64_t n = shape[shape.ndim() - 1];
  std::vector<double> v = tt::normal_values(tt::numel_of(shape), seed, dtype);
  const double scale = 0.3 / std::sqrt(double(std::max<int64_t>(n, 1)));
  for (std::size_t e = 0; e < v.size(); ++e) {
    const int64_t i = int64_t(e) / n % n, j = int64_t(e) % n;
    v[e] = i == j ? (v[e] < 0 ? -1.0 : 1.0) * (1.0 + std::abs(v[e])) : v[e] * scale;
    if (dtype == DType::f32) v[e] = double(float(v[e]));
  }
  return v;
}

/// count random permutations of 0..n-1, row after row.
std::vector<double> permutations(int64_t count, int64_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<double> out;
  for (int64_t b = 0; b < count; ++b) {
    std::vector<int64_t> p(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[std::size_t(i)] = i;
    std::shuffle(p.begin(), p.end(), gen);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

/// The matrix whose factors these are: P^T L U, with row perm[i] of it row i of L U.
MatD unfactored(const MatD& packed, const std::vector<double>& perm, int64_t b) {
  const int64_t n = packed.rows();
  MatD l = MatD::Identity(n, n), u = MatD::Zero(n, n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) (i > j ? l : u)(i, j) = packed(i, j);
  }
  const MatD lu = l * u;
  MatD a(n, n);
  for (int64_t i = 0; i < n; ++i) a.row(int64_t(perm[std::size_t(b * n + i)])) = lu.row(i);
  return a;
}

void check_lu_inverse(const Shape& batch_lu, const Shape& batch_perm, int64_t n, DType dtype,
                      tt::MatLayout kind, uint64_t seed) {
  const Shape sl = tt::shape_of(batch_lu, {n, n});
  Shape sp = batch_perm;
  sp.push_back(n);
  INFO(tt::dname(dtype) << " lu " << sl << " (" << tt::mat_layout_name(kind) << ") perm " << sp);
  std::vector<double> fv = packed_factors(sl, dtype, seed);
  if (kind == tt::MatLayout::broadcast_batch) fv = tt::repeat_first(fv, n * n);
  int64_t perms = 1;
  for (int64_t d : batch_perm) perms *= d;
  const std::vector<double> pv = permutations(perms, n, seed + 1);
  const RawTensor x =
      st::raw::lu_inverse(tt::laid_out(sl, dtype, fv, kind), tt::make(sp, DType::i64, pv));
  const Shape batch = st::broadcast_shapes(batch_lu, batch_perm, "test");
  REQUIRE(x.shape() == tt::shape_of(batch, {n, n}));
  const std::vector<double> xv = tt::values(x);
  const double tol = tt::tolerance(dtype, n);
  tt::for_each_index(batch, [&](const std::vector<int64_t>& idx) {
    auto flat = [&](const Shape& own) { return broadcast_flat(idx, own); };
    const int64_t out = broadcast_flat(idx, batch);
    const MatD a = unfactored(tt::matrix(fv, flat(batch_lu), n, n), pv, flat(batch_perm));
    const MatD xb = tt::matrix(xv, out, n, n);
    CHECK((a * xb - MatD::Identity(n, n)).norm() <= tol * std::max(1.0, xb.norm()));
    CHECK((xb - MatD(a.inverse())).norm() <= tol * std::max(1.0, xb.norm()));
  });
}

}  // namespace

TEST_CASE("lu_inverse: (P^T L U)^-1 on every layout and broadcast batch, as Eigen's inverse",
          "[raw][linalg]") {
  struct Shapes {
    Shape lu, perm;
    int64_t n;
  };
  // n = 150 takes the CPU's tiled path (tiles of 64 columns, the last one ragged).
  const std::vector<Shapes> cases = {{{}, {}, 1},  {{}, {}, 6},  {{3}, {3}, 5}, {{2, 1}, {3}, 4},
                                     {{}, {2}, 3}, {{2}, {}, 4}, {{0}, {}, 3},  {{2}, {2}, 150}};
  uint64_t seed = 7;
  for (DType dtype : {DType::f64, DType::f32}) {
    for (const Shapes& c : cases) {
      for (tt::MatLayout kind : tt::kMatLayouts)
        check_lu_inverse(c.lu, c.perm, c.n, dtype, kind, seed++);
    }
  }
}
