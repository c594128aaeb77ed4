// SPDX-License-Identifier: MIT
#pragma once
/// Streaming (non-temporal) stores of a large result of a walk over a
/// transposed view, each line written whole: no read-for-ownership of the
/// result's lines, which are not read again before they leave the caches.
/// From cpu_tuning().stream_transposed_bytes of result on; the staged walk
/// streams its result rows the same way (raw/cpu/staged_walk.hpp).
#include <array>
#include <cstdint>

#include "core/strided.hpp"
#include "raw/cpu/transpose.hpp"
#include "raw/cpu/tuning.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"

namespace strata::detail {

/// The result (row-major, 64-byte aligned rows) of a map or copy of a
/// transposed view x, at least cpu_tuning().stream_transposed_bytes, written
/// by `run`, a vmath StreamTranspose kernel (of the op, or the copy's): bands
/// of one line's elements of the result's columns (of x's rows), each along
/// up to kRun elements of x's rows: 16 (f32) or 8 (f64) long runs at a time,
/// which the hardware prefetcher follows, where the staged walk's tiles read
/// short runs. No staging buffer pass, and no read-for-ownership of the
/// result's lines. Returns false, having done nothing, for any other pair of
/// layouts or a smaller result.
inline bool stream_transposed(char* out_base, const Layout& out, const char* src, const Layout& x,
                              int size, vmath::StreamTranspose run) {
  if (size != 4 && size != 8) return false;
  StridedPlan<2> p;
  int64_t sk = 0, ldd = 0;
  if (!transposed_pair(out, x, p, sk, ldd) ||
      p.numel * size < cpu_tuning().stream_transposed_bytes || ldd * size % 64 != 0) {
    return false;
  }
  // Every row of the result starts on a line: its outer strides are multiples
  // of ldd (contiguous) or checked here.
  const std::size_t r = p.shape.size();
  for (std::size_t d = 0; d + 2 < r; ++d) {
    if (p.strides[0][d] * size % 64 != 0) return false;
  }
  if ((reinterpret_cast<uintptr_t>(out_base + p.offsets[0] * size) & 63) != 0) return false;
  constexpr int64_t kRun = 4096;
  for_each_tile(
      p, kRun, 64 / size,
      [&](const std::array<int64_t, 2>& base, int64_t b0, int64_t b1, int64_t a0, int64_t n) {
        run(src + (base[1] + b0 + a0 * sk) * size, sk, out_base + (base[0] + b0 * ldd + a0) * size,
            ldd, b1 - b0, n);
      });
  return true;
}

}  // namespace strata::detail
