// SPDX-License-Identifier: MIT
#pragma once
/// How a fused group (jit/fuse.hpp) reads an operand that is neither dense nor one value (a
/// broadcast bias, a transpose, a slice): gathered, block by block, into a dense buffer.
#include <cstddef>
#include <cstdint>

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

}  // namespace strata::tracing
