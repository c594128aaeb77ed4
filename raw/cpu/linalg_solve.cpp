// SPDX-License-Identifier: MIT
// CPU triangular solves (Backend::triangular_solve) and inverses from LU
// factors (Backend::lu_inverse) through OpenBLAS's trsm (raw/cpu/lapack.hpp).
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

/// Rows of op(A) per block of blocked_trsm.
constexpr int kSolveBlock = 128;

/// trsm on the left, op(A) X = B with op(A) m x m triangular (M as A, leading dimension ld) and
/// B m x w (leading dimension ldb), by row blocks of kSolveBlock: each block subtracts the
/// solved blocks' product (one gemm) and solves against its diagonal block (one trsm), so
/// the gemm kernels do most of the work (OpenBLAS 0.3.21's SkylakeX trsm runs at about half
/// the speed of its Haswell one, its gemm does not). The blocks follow from m alone.
template <class T>
void blocked_trsm(const Lapack& lib, char uplo, char trans, char diag, int m, int w,
                  const TrsmA<T>& a, T* b, int ldb) {
  const LapackFns<T>& f = lib.fns<T>();
  const bool lower = (uplo == 'L') != (trans == 'T');  // op(A)'s triangle
  // op(A)[r0.., c0..] as a gemm operand: A's block itself, or A's transposed block.
  auto block = [&](int r0, int c0) {
    return trans == 'N' ? a.m + r0 + int64_t(c0) * a.ld : a.m + c0 + int64_t(r0) * a.ld;
  };
  const T one = 1, minus_one = -1;
  const int blocks = (m + kSolveBlock - 1) / kSolveBlock;
  for (int step = 0; step < blocks; ++step) {
    const int k = lower ? step : blocks - 1 - step;
    const int k0 = k * kSolveBlock, kb = std::min(kSolveBlock, m - k0), k1 = k0 + kb;
    // The solved rows: above the block for a lower op(A), below it for an upper one.
    const int s0 = lower ? 0 : k1, sn = lower ? k0 : m - k1;
    if (sn > 0) {
      f.gemm(&trans, "N", &kb, &w, &sn, &minus_one, block(k0, s0), &a.ld, b + s0, &ldb, &one,
             b + k0, &ldb, 1, 1);
    }
    f_trsm(lib, 'L', uplo, trans, diag, kb, w, one, TrsmA<T>{block(k0, k0), a.ld, a.m_is_a}, b + k0,
           ldb);
  }
}

/// The columns of X^T (row-major x) are independent: each tile of kInverseTile of them is
/// U^-T's columns (a lower triangular solve on the rows from the tile's first column down,
/// since U^-T is lower triangular: 1/3 n^3 over all tiles), then L^-T times those (n^3),
/// then P^T's row order. getri's 4/3 n^3, in tiles fixed by n, so any thread count gives the
/// same bits.
constexpr int64_t kInverseTile = 64;

template <class T>
void lu_inverse_typed(const RawTensor& x, const RawTensor& lu, const RawTensor& perm,
                      const RawTensor& info) {
  constexpr std::string_view op = "lu_inverse";
  const Lapack& lib = lapack(op);
  const int64_t nd = x.ndim();
  const int n = lapack_dim(x.shape()[nd - 1], op);
  const std::vector<int64_t> f_off = batch_offsets(lu, nd - 2), p_off = batch_offsets(perm, nd - 2);
  const int64_t count = int64_t(f_off.size()), per = int64_t(n) * n, ps = perm.strides()[nd - 2];
  const int64_t* perms = static_cast<const int64_t*>(perm.storage()->data());
  T* out = data_of<T>(x);
  int32_t* codes = data_of<int32_t>(info);

  // Checks: the factors finite, perm a permutation, U's diagonal free of zeros.
  for_each_matrix(lib, count, double(per), [&](int64_t lo, int64_t hi) {
    std::vector<char> seen;
    for (int64_t e = lo; e < hi; ++e) {
      const StridedMat<T> f = matrix_at<T>(lu, f_off[static_cast<std::size_t>(e)]);
      const int64_t* p = perms + p_off[static_cast<std::size_t>(e)];
      codes[e] = 0;
      if (!finite_part(f, Part::all)) {
        codes[e] = kNonFinite;
        continue;
      }
      seen.assign(static_cast<std::size_t>(n), 0);
      for (int64_t i = 0; i < n && codes[e] == 0; ++i) {
        const int64_t v = p[i * ps];
        if (v < 0 || v >= n || seen[static_cast<std::size_t>(v)]) codes[e] = kBadPermutation;
        if (codes[e] == 0) seen[static_cast<std::size_t>(v)] = 1;
      }
      for (int64_t i = 0; i < n && codes[e] == 0; ++i) {
        if (f(i, i) == T(0)) codes[e] = int32_t(i + 1);
      }
    }
  });

  const int64_t tiles = n >= kTiledMin ? (n + kInverseTile - 1) / kInverseTile : 1;
  const int64_t tile = tiles == 1 ? n : kInverseTile;
  for_each_matrix(lib, count * tiles, double(n) * n * double(tile), [&](int64_t lo, int64_t hi) {
    std::vector<T> scratch, column(static_cast<std::size_t>(n));
    int64_t copied = -1;  // the element whose factors `m` reads
    TrsmA<T> m;
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t e = task / tiles, t = task % tiles;
      if (codes[e] != 0) continue;
      if (copied != e) {
        m = trsm_operand(matrix_at<T>(lu, f_off[static_cast<std::size_t>(e)]), Part::all, scratch);
        copied = e;
      }
      // M = packed (m_is_a) holds U above and L below; M = packed^T holds U^T below, L^T above.
      const char trans = m.m_is_a ? 'T' : 'N', u_uplo = m.m_is_a ? 'U' : 'L',
                 l_uplo = m.m_is_a ? 'L' : 'U';
      const int c0 = int(t * tile), w = int(std::min<int64_t>(tile, n - c0)), below = n - c0;
      T* cols = out + e * per + int64_t(c0) * n;  // X^T's columns c0.., column-major
      std::fill(cols, cols + int64_t(w) * n, T(0));
      for (int k = 0; k < w; ++k) cols[c0 + k + int64_t(k) * n] = T(1);
      blocked_trsm(lib, u_uplo, trans, 'N', below, w,
                   TrsmA<T>{m.m + c0 + int64_t(c0) * m.ld, m.ld, m.m_is_a}, cols + c0, n);
      blocked_trsm(lib, l_uplo, trans, 'U', n, w, m, cols, n);
      const int64_t* p = perms + p_off[static_cast<std::size_t>(e)];
      for (int k = 0; k < w; ++k) {
        T* col = cols + int64_t(k) * n;
        std::copy(col, col + n, column.begin());
        for (int64_t i = 0; i < n; ++i) col[p[i * ps]] = column[static_cast<std::size_t>(i)];
      }
    }
  });
}

}  // namespace

void CpuBackend::lu_inverse(const RawTensor& x, const RawTensor& lu, const RawTensor& perm,
                            const RawTensor& info) {
  if (x.dtype() == DType::f32) return lu_inverse_typed<float>(x, lu, perm, info);
  lu_inverse_typed<double>(x, lu, perm, info);
}

void CpuBackend::triangular_solve(const RawTensor& x, const RawTensor& a, const RawTensor& b,
                                  const TriangularSolve& opts, const RawTensor& info) {
  if (x.dtype() == DType::f32) return triangular_solve_typed<float>(x, a, b, opts, info);
  triangular_solve_typed<double>(x, a, b, opts, info);
}

}  // namespace strata::detail
