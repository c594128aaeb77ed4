// SPDX-License-Identifier: MIT
#pragma once
/// How a fused group (jit/fuse.hpp) reads an operand that is neither dense nor one value (a
/// broadcast bias, a transpose, a slice): gathered, block by block, into a dense buffer.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/layout.hpp"

namespace strata::tracing {

/// l with its size-1 axes dropped and each axis merged into the one before it where a
/// row-major walk steps through both as through one (a [p, 1] column broadcast to [p, 3] stays
/// two axes; a transposed [4, 5] stays two; a contiguous slice of rows becomes one): fewer
/// carries per element in gather().
Layout coalesced(const Layout& l);

/// Copies elements [lo, lo + n) (row-major) of the tensor at `base` (its storage's data) with
/// layout l (coalesced), of `size` bytes each, to dst: a strided or broadcast operand as a
/// dense block (the bits are copied, whatever the dtype).
void gather(const char* base, const Layout& l, std::size_t size, int64_t lo, int64_t n, char* dst);

/// A tensor read as padded: pad(x, before, after) with a value, without writing it.
struct PadRead {
  /// x's layout in its storage, the padding before each axis, the padded shape, and the pad
  /// value's bits in x's dtype (the low bytes).
  PadRead(Layout source, Shape before, Shape padded, uint64_t fill);
  /// row_step when rows are walked in general.
  static constexpr int64_t kNoRowStep = std::numeric_limits<int64_t>::min();
  Layout source;  ///< x's layout in its storage
  Shape before;   ///< the padding before each axis
  Shape padded;   ///< the padded shape
  uint64_t fill;  ///< the pad value's bits in x's dtype (the low bytes)
  /// When only the last axis is padded and x's rows are equally spaced: their spacing.
  int64_t row_step = kNoRowStep;
};

/// Copies elements [lo, lo + n) (row-major) of pad(x) to dst, x at `base` (its storage's
/// data), of `size` bytes each.
void gather_padded(const char* base, const PadRead& p, std::size_t size, int64_t lo, int64_t n,
                   char* dst);

}  // namespace strata::tracing
