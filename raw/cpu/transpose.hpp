// SPDX-License-Identifier: MIT
#pragma once
/// Transposes of blocks of elements (any type: only bits move), and the copy
/// of a transposed view into a row-major result that transposes each tile
/// straight into the result.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "core/strided.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"

namespace strata::detail {

/// transpose_block for elements of type U (any type of U's size: only bits
/// move), in 16 x 16 blocks that keep both sides' lines in L1. Fixed-size
/// copies, so each element is one load and one store (a memcpy of a runtime
/// size is a library call per element).
template <class U>
void transpose_typed(const char* src, int64_t lds, char* dst, int64_t ldd, int64_t rows,
                     int64_t cols) {
  constexpr int64_t kB = 16;
  constexpr auto size = int64_t(sizeof(U));
  for (int64_t b0 = 0; b0 < rows; b0 += kB) {
    for (int64_t a0 = 0; a0 < cols; a0 += kB) {
      for (int64_t a = a0; a < std::min(cols, a0 + kB); ++a) {
        for (int64_t b = b0; b < std::min(rows, b0 + kB); ++b) {
          U v;
          std::memcpy(&v, src + (a * lds + b) * size, sizeof(U));
          std::memcpy(dst + (b * ldd + a) * size, &v, sizeof(U));
        }
      }
    }
  }
}

/// dst[b * ldd + a] = src[a * lds + b] for b < rows, a < cols, elements of
/// `size` bytes (1, 2, 4 or 8; 4- and 8-byte elements through the vectorised
/// vmath kernels).
inline void transpose_block(const char* src, int64_t lds, char* dst, int64_t ldd, int64_t rows,
                            int64_t cols, int size) {
  switch (size) {
    case 1:
      return transpose_typed<uint8_t>(src, lds, dst, ldd, rows, cols);
    case 2:
      return transpose_typed<uint16_t>(src, lds, dst, ldd, rows, cols);
    case 4:
      if (const vmath::Kernels* k = vmath::best()) {
        return k->transpose32(src, lds, dst, ldd, rows, cols);
      }
      return transpose_typed<uint32_t>(src, lds, dst, ldd, rows, cols);
    default:
      if (const vmath::Kernels* k = vmath::best()) {
        return k->transpose64(src, lds, dst, ldd, rows, cols);
      }
      return transpose_typed<uint64_t>(src, lds, dst, ldd, rows, cols);
  }
}

/// Whether out (unit stride along its rows) and x (unit stride down out's
/// columns, a positive stride along them: a transposed view) pair up for
/// copy_transposed or stream_transposed, over more than kTile x kTile
/// elements; p is then their plan, prepared by prepare_tiles, with x's row
/// stride in sk and out's in ldd.
inline bool transposed_pair(const Layout& out, const Layout& x, StridedPlan<2>& p, int64_t& sk,
                            int64_t& ldd) {
  if (out.numel() <= kTile * kTile) return false;  // before the plan: most calls are small
  p = make_plan<2>(out.shape, {&out, &x});
  if (!prepare_tiles(p)) return false;
  const std::size_t r = p.shape.size();
  sk = p.strides[1][r - 1], ldd = p.strides[0][r - 2];
  return p.strides[1][r - 2] == 1 && sk > 1 && p.strides[0][r - 1] == 1 && ldd > 0;
}

/// A copy between two layouts of one shape and element size whose source is
/// read across its fast dim (a transposed view into a row-major result): each
/// tile is transposed straight into the result (vmath's transpose kernels),
/// in one pass, not through the staged walk's buffer and a second pass. The
/// tile is 128 bytes of each source column by 1024 result columns, so each
/// tile writes 16 (f64) or 32 (f32) whole result rows. CpuBackend::copy tries
/// stream_transposed first, so large results of 4- and 8-byte elements do
/// not come here. Returns false, having done nothing, for any other pair of
/// layouts.
inline bool copy_transposed(char* out_base, const Layout& out, const char* src, const Layout& x,
                            int size) {
  StridedPlan<2> p;
  int64_t sk = 0, ldd = 0;
  if (!transposed_pair(out, x, p, sk, ldd)) return false;
  for_each_tile(
      p, std::max(1, 128 / size), 1024,
      [&](const std::array<int64_t, 2>& base, int64_t b0, int64_t b1, int64_t a0, int64_t n) {
        transpose_block(src + (base[1] + b0 + a0 * sk) * size, sk,
                        out_base + (base[0] + b0 * ldd + a0) * size, ldd, b1 - b0, n, size);
      });
  return true;
}

}  // namespace strata::detail
