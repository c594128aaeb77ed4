// SPDX-License-Identifier: MIT
#pragma once
/// What the CPU's factorisations share (raw/cpu/linalg_*.cpp): the batch
/// walk, copies of strided matrices into the buffers LAPACK reads (checking,
/// on the way, that what the op reads is finite), and the parallel loop over
/// batch elements.
///
/// Buffers: LAPACK is column-major. A row-major n x n buffer is the
/// column-major transpose, so an op that reads one triangle of a symmetric
/// matrix (cholesky, eigh) hands LAPACK the row-major copy and the other
/// triangle's letter; the others say in their file how they lay out theirs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "raw/backend.hpp"
#include "raw/cpu/lapack.hpp"

namespace strata::detail {

/// The elements of one matrix an op reads.
enum class Part : uint8_t {
  all,
  lower,         ///< i >= j
  upper,         ///< i <= j
  strict_lower,  ///< i > j
  strict_upper,  ///< i < j
};

inline bool in_part(Part p, int64_t i, int64_t j) {
  switch (p) {
    case Part::all:
      return true;
    case Part::lower:
      return i >= j;
    case Part::upper:
      return i <= j;
    case Part::strict_lower:
      return i > j;
    case Part::strict_upper:
      return i < j;
  }
  return true;
}

/// One strided rows x cols matrix: element (i, j) at p[i * rs + j * cs].
template <class T>
struct StridedMat {
  const T* p;
  int64_t rows, cols, rs, cs;
  T operator()(int64_t i, int64_t j) const { return p[i * rs + j * cs]; }
};

/// Copies the `part` of src to dst (element (i, j) to dst[i * dr + j * dc]); returns false
/// when one of those elements is a NaN or an infinity. Elements outside the part are not
/// written.
template <class T>
bool copy_part(const StridedMat<T>& src, Part part, T* dst, int64_t dr, int64_t dc) {
  bool finite = true;
  for (int64_t i = 0; i < src.rows; ++i) {
    int64_t j0 = 0, j1 = src.cols;
    if (part == Part::lower) j1 = std::min(i + 1, j1);
    if (part == Part::strict_lower) j1 = std::min(i, j1);
    if (part == Part::upper) j0 = i;
    if (part == Part::strict_upper) j0 = i + 1;
    const T* row = src.p + i * src.rs;
    T* out = dst + i * dr;
    for (int64_t j = j0; j < j1; ++j) {
      const T v = row[j * src.cs];
      finite &= std::isfinite(v);
      out[j * dc] = v;
    }
  }
  return finite;
}

/// Edge of the tiles the transposing copies walk: a tile of the source and one of the
/// destination stay in cache while one is read by rows and the other written by columns.
/// Small, because the rows of a tile of a matrix whose row length is a power of two fall in
/// one L1 set, which holds 8 lines.
inline constexpr int64_t kTransposeTile = 8;

/// dst[i + j rows] = src(i, j) (the column-major copy of src), tile by tile; returns false when
/// an element is a NaN or an infinity.
template <class T>
bool copy_column_major(const StridedMat<T>& src, T* dst) {
  bool finite = true;
  for (int64_t i0 = 0; i0 < src.rows; i0 += kTransposeTile) {
    const int64_t i1 = std::min(src.rows, i0 + kTransposeTile);
    for (int64_t j0 = 0; j0 < src.cols; j0 += kTransposeTile) {
      const int64_t j1 = std::min(src.cols, j0 + kTransposeTile);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) {
          const T v = src(i, j);
          finite &= std::isfinite(v);
          dst[i + j * src.rows] = v;
        }
      }
    }
  }
  return finite;
}

/// Transposes the n x n matrix m in place, tile by tile.
template <class T>
void transpose_square(T* m, int64_t n) {
  for (int64_t i0 = 0; i0 < n; i0 += kTransposeTile) {
    for (int64_t j0 = i0; j0 < n; j0 += kTransposeTile) {
      const int64_t i1 = std::min(n, i0 + kTransposeTile), j1 = std::min(n, j0 + kTransposeTile);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = std::max(j0, i + 1); j < j1; ++j) std::swap(m[i * n + j], m[j * n + i]);
      }
    }
  }
}

/// Whether the part of src is free of NaNs and infinities (read in place).
template <class T>
bool finite_part(const StridedMat<T>& src, Part part) {
  for (int64_t i = 0; i < src.rows; ++i) {
    for (int64_t j = 0; j < src.cols; ++j) {
      if (in_part(part, i, j) && !std::isfinite(src(i, j))) return false;
    }
  }
  return true;
}

/// The storage offsets (in elements) of every matrix of t, the batch dims walked in row-major
/// order; `batch` is the number of leading dims that index matrices.
inline std::vector<int64_t> batch_offsets(const RawTensor& t, int64_t batch_dims) {
  int64_t count = 1;
  for (int64_t d = 0; d < batch_dims; ++d) count *= t.shape()[d];
  std::vector<int64_t> out(static_cast<std::size_t>(count));
  std::vector<int64_t> idx(static_cast<std::size_t>(batch_dims), 0);
  int64_t off = t.offset();
  for (int64_t b = 0; b < count; ++b) {
    out[std::size_t(b)] = off;
    for (int64_t d = batch_dims - 1; d >= 0; --d) {
      off += t.strides()[d];
      if (++idx[std::size_t(d)] < t.shape()[d]) break;
      off -= t.strides()[d] * t.shape()[d];
      idx[std::size_t(d)] = 0;
    }
  }
  return out;
}

/// The matrix of batch element b of t (its last two dims), at storage offset `off`.
template <class T>
StridedMat<T> matrix_at(const RawTensor& t, int64_t off) {
  const int64_t nd = t.ndim();
  return {static_cast<const T*>(t.storage()->data()) + off, t.shape()[nd - 2], t.shape()[nd - 1],
          t.strides()[nd - 2], t.strides()[nd - 1]};
}

/// A contiguous tensor's first element.
template <class T>
T* data_of(const RawTensor& t) {
  return static_cast<T*>(t.storage()->data()) + t.offset();
}

/// A dimension as LAPACK's 32-bit int; ValueError naming op past kLapackMaxDim (workspaces of
/// n^2 elements are counted in ints too).
inline int lapack_dim(int64_t n, std::string_view op) {
  if (n > kLapackMaxDim) {
    fail<ValueError>(op, "matrix dimension ", n,
                     " is too large for LAPACK's 32-bit indices (at most ", kLapackMaxDim,
                     " on the CPU)");
  }
  return int(n);
}

/// The LAPACK workspace size a query returned (in its first work element), as an int; an f32
/// query is rounded up past its float's rounding. ValueError naming op past 32-bit ints.
template <class T>
int workspace_size(T query, std::string_view op) {
  double v = std::ceil(double(query) * (sizeof(T) == 4 ? 1.000001 : 1.0));
  if (v > 2147483647.0) {
    fail<ValueError>(op, "LAPACK's workspace of ", v,
                     " elements is too large for its 32-bit indices (use smaller matrices)");
  }
  return std::max(1, int(v));
}

/// Runs fn(lo, hi) over the batch elements [0, count), in parallel pieces of about 2^20
/// multiply-adds (`flops` per element) when the library allows concurrent calls. Every
/// element is computed by the same single-threaded calls whoever runs it, so the results do
/// not depend on the thread count.
template <class Fn>
void for_each_matrix(const Lapack& lib, int64_t count, double flops, Fn&& fn) {
  if (!lib.concurrent) return fn(int64_t{0}, count);
  const int64_t grain = std::max<int64_t>(1, int64_t(double(1 << 20) / std::max(flops, 1.0)));
  parallel_for(0, count, grain, fn);
}

/// Runs fn(task) for tasks [0, count) in parallel, one task a piece (the blocked algorithms'
/// tiles), when the library allows concurrent calls.
template <class Fn>
void for_each_tile(const Lapack& lib, int64_t count, Fn&& fn) {
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) fn(t);
  };
  if (!lib.concurrent || count <= 1) return body(0, count);
  parallel_for(0, count, 1, body);
}

}  // namespace strata::detail
