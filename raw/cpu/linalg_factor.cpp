// SPDX-License-Identifier: MIT
// CPU Cholesky and LU factorisations (Backend::cholesky, Backend::lu) through
// OpenBLAS's LAPACK (raw/cpu/lapack.hpp).
//
// Small matrices: one single-threaded potrf / getrf call each, batch elements
// spread over strata's pool. From kBlockedMin on, a matrix is factorised by the
// right-looking blocked algorithm LAPACK itself uses, written out here so that
// its level-3 updates run on strata's pool: a kBlock-wide panel (potrf or
// getrf, one thread), then the update of the rest cut into kTile-wide tiles,
// each one single-threaded BLAS call. The blocks and tiles follow from n
// alone, so every thread count gives the same bits (DESIGN §8).
//
// Layouts: cholesky copies A's lower triangle into L's row-major buffer, which
// LAPACK reads as the upper triangle of a column-major matrix: potrf("U")
// there, A = U^T U, leaves U^T = L in place. lu copies A transposed (the
// column-major A) into the result, factorises it there and transposes it back.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/linalg_support.hpp"

namespace strata::detail {
namespace {

/// From this order on a matrix is factorised by the blocked algorithms below.
constexpr int kBlockedMin = 256;
/// The panel width of the blocked algorithms.
constexpr int kBlock = 128;
/// The edge of the update's tiles (Cholesky: square tiles; LU: column tiles).
constexpr int kCholeskyTile = 128;
constexpr int kLuTile = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A = U^T U of the column-major n x n matrix a (upper triangle read and written), blocked,
/// with the updates on strata's pool. Returns 0, or the order of the first leading minor
/// that is not positive (as potrf's info).
template <class T>
int blocked_potrf_upper(const Lapack& lib, T* a, int n) {
  const LapackFns<T>& f = lib.fns<T>();
  const T one = 1, minus_one = -1;
  for (int k0 = 0; k0 < n; k0 += kBlock) {
    const int w = std::min(kBlock, n - k0), k1 = k0 + w, rest = n - k1;
    T* diag = a + k0 + int64_t(k0) * n;
    int info = 0;
    f.potrf("U", &w, diag, &n, &info, 1);
    if (info > 0) return k0 + info;
    if (rest == 0) break;
    const int64_t tiles = ceil_div(rest, kCholeskyTile);
    // U12 = U11^-T A12, column tile by column tile.
    for_each_tile(lib, tiles, [&](int64_t t) {
      const int c0 = k1 + int(t) * kCholeskyTile, cw = std::min(kCholeskyTile, n - c0);
      f.trsm("L", "U", "T", "N", &w, &cw, &one, diag, &n, a + k0 + int64_t(c0) * n, &n, 1, 1, 1, 1);
    });
    // A22 -= U12^T U12 on the tiles (ti <= tj) of its upper triangle.
    std::vector<std::pair<int, int>> pairs;
    for (int tj = 0; tj < tiles; ++tj) {
      for (int ti = 0; ti <= tj; ++ti) pairs.emplace_back(ti, tj);
    }
    for_each_tile(lib, int64_t(pairs.size()), [&](int64_t p) {
      const auto [ti, tj] = pairs[static_cast<std::size_t>(p)];
      const int r0 = k1 + ti * kCholeskyTile, rw = std::min(kCholeskyTile, n - r0);
      const int c0 = k1 + tj * kCholeskyTile, cw = std::min(kCholeskyTile, n - c0);
      const T* ur = a + k0 + int64_t(r0) * n;
      T* c = a + r0 + int64_t(c0) * n;
      if (ti == tj) {
        f.syrk("U", "T", &rw, &w, &minus_one, ur, &n, &one, c, &n, 1, 1);
      } else {
        f.gemm("T", "N", &rw, &cw, &w, &minus_one, ur, &n, a + k0 + int64_t(c0) * n, &n, &one, c,
               &n, 1, 1);
      }
    });
  }
  return 0;
}

template <class T>
void cholesky_typed(const RawTensor& l, const RawTensor& a, const RawTensor& info) {
  const Lapack& lib = lapack("cholesky");
  const int n = lapack_dim(l.shape()[l.ndim() - 1], "cholesky");
  const std::vector<int64_t> offsets = batch_offsets(a, a.ndim() - 2);
  T* out = data_of<T>(l);
  int32_t* codes = data_of<int32_t>(info);
  const double flops = double(n) * n * n / 3;
  auto one = [&](int64_t b) {
    T* lb = out + b * int64_t(n) * n;
    codes[b] = 0;
    if (!copy_part(matrix_at<T>(a, offsets[static_cast<std::size_t>(b)]), Part::lower, lb, n, 1)) {
      codes[b] = kNonFinite;
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::fill(lb + i * n + i + 1, lb + (i + 1) * n, T(0));
    int code = 0;
    if (n >= kBlockedMin) {
      code = blocked_potrf_upper(lib, lb, n);
    } else {
      lib.fns<T>().potrf("U", &n, lb, &n, &code, 1);
    }
    codes[b] = code;
  };
  const int64_t count = int64_t(offsets.size());
  if (n >= kBlockedMin) {
    for (int64_t b = 0; b < count; ++b) one(b);
  } else {
    for_each_matrix(lib, count, flops, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) one(b);
    });
  }
}

/// P A = L U of the column-major n x n matrix a, blocked, with the updates on strata's pool;
/// ipiv gets getrf's 1-based row swaps.
template <class T>
void blocked_getrf(const Lapack& lib, T* a, int n, int* ipiv) {
  const LapackFns<T>& f = lib.fns<T>();
  const T one = 1, minus_one = -1;
  const int inc = 1;
  for (int k0 = 0; k0 < n; k0 += kBlock) {
    const int w = std::min(kBlock, n - k0), k1 = k0 + w, rows = n - k0, below = n - k1;
    int info = 0;  // > 0: an exact zero pivot, which lu reports through U, not as an error
    f.getrf(&rows, &w, a + k0 + int64_t(k0) * n, &n, ipiv + k0, &info);
    for (int i = k0; i < k1; ++i) ipiv[i] += k0;
    const int first = k0 + 1;  // laswp's 1-based range of ipiv
    const int64_t left = ceil_div(k0, kLuTile), right = ceil_div(n - k1, kLuTile);
    // Each column tile left of the panel takes its swaps; each one right of it its swaps,
    // its rows of U (L11^-1 A12) and its update A22 -= L21 U12.
    for_each_tile(lib, left + right, [&](int64_t t) {
      if (t < left) {
        const int c0 = int(t) * kLuTile, cw = std::min(kLuTile, k0 - c0);
        f.laswp(&cw, a + int64_t(c0) * n, &n, &first, &k1, ipiv, &inc);
        return;
      }
      const int c0 = k1 + int(t - left) * kLuTile, cw = std::min(kLuTile, n - c0);
      T* col = a + int64_t(c0) * n;
      f.laswp(&cw, col, &n, &first, &k1, ipiv, &inc);
      f.trsm("L", "L", "N", "U", &w, &cw, &one, a + k0 + int64_t(k0) * n, &n, col + k0, &n, 1, 1, 1,
             1);
      if (below > 0) {
        f.gemm("N", "N", &below, &cw, &w, &minus_one, a + k1 + int64_t(k0) * n, &n, col + k0, &n,
               &one, col + k1, &n, 1, 1);
      }
    });
  }
}

template <class T>
void lu_typed(const RawTensor& lu, const RawTensor& pivots, const RawTensor& perm,
              const RawTensor& a, const RawTensor& info) {
  const Lapack& lib = lapack("lu");
  const int n = lapack_dim(lu.shape()[lu.ndim() - 1], "lu");
  const std::vector<int64_t> offsets = batch_offsets(a, a.ndim() - 2);
  T* out = data_of<T>(lu);
  int64_t* piv_out = data_of<int64_t>(pivots);
  int64_t* perm_out = data_of<int64_t>(perm);
  int32_t* codes = data_of<int32_t>(info);
  auto one = [&](int64_t b, std::vector<int>& ipiv) {
    T* m = out + b * int64_t(n) * n;
    int64_t* pv = piv_out + b * n;
    int64_t* pm = perm_out + b * n;
    codes[b] = 0;
    // Column-major A: element (i, j) at m[i + j n].
    if (!copy_column_major(matrix_at<T>(a, offsets[static_cast<std::size_t>(b)]), m)) {
      codes[b] = kNonFinite;
      return;
    }
    ipiv.resize(static_cast<std::size_t>(n));
    if (n >= kBlockedMin) {
      blocked_getrf(lib, m, n, ipiv.data());
    } else {
      int code = 0;  // > 0 for a singular matrix: not an error (see raw::lu)
      lib.fns<T>().getrf(&n, &n, m, &n, ipiv.data(), &code);
    }
    transpose_square(m, n);
    for (int64_t i = 0; i < n; ++i) pm[i] = i;
    for (int64_t i = 0; i < n; ++i) {
      pv[i] = ipiv[static_cast<std::size_t>(i)] - 1;
      std::swap(pm[i], pm[pv[i]]);
    }
  };
  const int64_t count = int64_t(offsets.size());
  if (n >= kBlockedMin) {
    std::vector<int> ipiv;
    for (int64_t b = 0; b < count; ++b) one(b, ipiv);
  } else {
    for_each_matrix(lib, count, 2.0 * n * n * n / 3, [&](int64_t lo, int64_t hi) {
      std::vector<int> ipiv;
      for (int64_t b = lo; b < hi; ++b) one(b, ipiv);
    });
  }
}

}  // namespace

void CpuBackend::cholesky(const RawTensor& l, const RawTensor& a, const RawTensor& info) {
  if (l.dtype() == DType::f32) return cholesky_typed<float>(l, a, info);
  cholesky_typed<double>(l, a, info);
}

void CpuBackend::lu(const RawTensor& lu, const RawTensor& pivots, const RawTensor& perm,
                    const RawTensor& a, const RawTensor& info) {
  if (lu.dtype() == DType::f32) return lu_typed<float>(lu, pivots, perm, a, info);
  lu_typed<double>(lu, pivots, perm, a, info);
}

}  // namespace strata::detail
