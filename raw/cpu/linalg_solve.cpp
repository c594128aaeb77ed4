// SPDX-License-Identifier: MIT
// CPU triangular solves (Backend::triangular_solve) through OpenBLAS's trsm
// (raw/cpu/lapack.hpp).
//
// Layouts: x is row-major, which trsm reads as the column-major transpose
// Xc = x^T. op(A) X = B becomes Xc op(A)^T = Bc (a right-side solve on Xc)
// and X op(A) = B becomes op(A)^T Xc = Bc (a left-side one). A is read in
// place when its strides make it column-major (M = A) or row-major (M = A^T,
// the other triangle's letter); any other A is copied row-major first. b is
// copied into x, which trsm overwrites with the solution.
//
// Parallel work: batch elements, and within an element the independent
// right-hand sides (columns of X for a left solve, rows for a right one) in
// tiles of kRhsTile once n reaches kTiledMin; tiles follow from the shapes
// alone, so every thread count gives the same bits.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/linalg_support.hpp"

namespace strata::detail {
namespace {

constexpr int64_t kTiledMin = 128;
constexpr int64_t kRhsTile = 32;

/// How trsm reads A: as M (column-major, leading dimension ld), with M = A or M = A^T.
template <class T>
struct TrsmA {
  const T* m = nullptr;
  int ld = 0;
  bool m_is_a = false;
};

/// A in place when its strides allow, else copied (its triangle) row-major into scratch.
template <class T>
TrsmA<T> trsm_operand(const StridedMat<T>& a, Part part, std::vector<T>& scratch) {
  const int64_t n = a.rows;
  if (n == 1) return {a.p, 1, true};
  if (a.rs == 1 && a.cs >= n && a.cs <= kLapackMaxDim) return {a.p, int(a.cs), true};
  if (a.cs == 1 && a.rs >= n && a.rs <= kLapackMaxDim) return {a.p, int(a.rs), false};
  scratch.assign(static_cast<std::size_t>(n * n), T(0));
  copy_part(a, part, scratch.data(), n, 1);
  return {scratch.data(), int(n), false};
}

/// trsm on B (m x n, column-major, leading dimension ldb) with M as A.
template <class T>
void f_trsm(const Lapack& lib, char side, char uplo, char trans, char diag, int m, int n, T alpha,
            const TrsmA<T>& a, T* b, int ldb) {
  lib.fns<T>().trsm(&side, &uplo, &trans, &diag, &m, &n, &alpha, a.m, &a.ld, b, &ldb, 1, 1, 1, 1);
}

template <class T>
void triangular_solve_typed(const RawTensor& x, const RawTensor& a, const RawTensor& b,
                            const TriangularSolve& opts, const RawTensor& info) {
  constexpr std::string_view op = "triangular_solve";
  const Lapack& lib = lapack(op);
  const int64_t nd = x.ndim();
  const int rows = lapack_dim(x.shape()[nd - 2], op), cols = lapack_dim(x.shape()[nd - 1], op);
  const int64_t n = a.shape()[nd - 1];
  const int64_t rhs = opts.left ? cols : rows;  // the independent solves
  const std::vector<int64_t> a_off = batch_offsets(a, nd - 2), b_off = batch_offsets(b, nd - 2);
  const int64_t count = int64_t(a_off.size());
  T* out = data_of<T>(x);
  int32_t* codes = data_of<int32_t>(info);
  const Part part = opts.lower ? (opts.unit_diagonal ? Part::strict_lower : Part::lower)
                               : (opts.unit_diagonal ? Part::strict_upper : Part::upper);
  const int64_t per = int64_t(rows) * cols;

  // Checks (what A's triangle and b hold, A's diagonal) and b copied into x.
  for_each_matrix(lib, count, double(per), [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      const StridedMat<T> am = matrix_at<T>(a, a_off[static_cast<std::size_t>(e)]);
      codes[e] = 0;
      if (!finite_part(am, part)) {
        codes[e] = kNonFinite;
        continue;
      }
      if (!opts.unit_diagonal) {
        for (int64_t i = 0; i < n; ++i) {
          if (am(i, i) == T(0)) {
            codes[e] = int32_t(i + 1);
            break;
          }
        }
        if (codes[e] != 0) continue;
      }
      if (!copy_part(matrix_at<T>(b, b_off[static_cast<std::size_t>(e)]), Part::all, out + e * per,
                     cols, 1)) {
        codes[e] = kNonFiniteB;
      }
    }
  });

  const int64_t tiles = n >= kTiledMin ? (rhs + kRhsTile - 1) / kRhsTile : 1;
  const int64_t tile = tiles == 1 ? rhs : kRhsTile;
  const char diag = opts.unit_diagonal ? 'U' : 'N';
  const char side = opts.left ? 'R' : 'L';
  const T one = 1;
  const double flops = double(n) * double(n) * double(tile);
  for_each_matrix(lib, count * tiles, flops, [&](int64_t lo, int64_t hi) {
    std::vector<T> scratch;
    int64_t copied = -1;  // the element whose A scratch holds
    TrsmA<T> m;
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t e = task / tiles, t = task % tiles;
      if (codes[e] != 0) continue;
      if (copied != e) {
        m = trsm_operand(matrix_at<T>(a, a_off[static_cast<std::size_t>(e)]), part, scratch);
        copied = e;
      }
      const char uplo = (opts.lower == m.m_is_a) ? 'L' : 'U';
      const char trans = (m.m_is_a != opts.transpose) ? 'T' : 'N';
      const int width = int(std::min(tile, rhs - t * tile));
      T* xc = out + e * per;  // Xc: cols x rows, column-major, leading dimension cols
      const int nn = int(n);
      if (opts.left) {  // Xc's rows are the solves: Xc[t0:t1, :] op(A)^T = ...
        f_trsm(lib, side, uplo, trans, diag, width, nn, one, m, xc + t * tile, cols);
      } else {  // Xc's columns are the solves
        f_trsm(lib, side, uplo, trans, diag, nn, width, one, m, xc + t * tile * cols, cols);
      }
    }
  });
}

}  // namespace

void CpuBackend::triangular_solve(const RawTensor& x, const RawTensor& a, const RawTensor& b,
                                  const TriangularSolve& opts, const RawTensor& info) {
  if (x.dtype() == DType::f32) return triangular_solve_typed<float>(x, a, b, opts, info);
  triangular_solve_typed<double>(x, a, b, opts, info);
}

}  // namespace strata::detail
