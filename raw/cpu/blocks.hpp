// SPDX-License-Identifier: MIT
#pragma once
/// The elementwise primitives on one block of elements, for a plan's fused chains
/// (jit/fuse.hpp): out[i] = op(in[i * s]...) for i < n, each operand's step s 1 (dense) or 0
/// (one value for the whole block). Each element is computed by the same functor or vmath
/// kernel as the eager kernel (elementwise.cpp), whose results do not depend on an element's
/// position, so a fused chain gives eager's bits. `dtype` is the operands' (a and b's for
/// where); the result's is the op's (bool for comparisons). Host memory only.
#include <cstdint>

#include "core/dtype.hpp"
#include "raw/primitives.hpp"

namespace strata::detail {

/// out[i] = op(x[i * sx]).
void unary_block(UnaryOp op, DType dtype, const void* x, int64_t sx, void* out, int64_t n);
/// out[i] = op(a[i * sa], b[i * sb]).
void binary_block(BinaryOp op, DType dtype, const void* a, int64_t sa, const void* b, int64_t sb,
                  void* out, int64_t n);
/// out[i] = x[i * sx] converted from `from` to `to` (scalar::convert, as the eager copy).
void cast_block(DType from, DType to, const void* x, int64_t sx, void* out, int64_t n);
/// out[i] = c[i * sc] ? a[i * sa] : b[i * sb] (c bool).
void where_block(DType dtype, const void* c, int64_t sc, const void* a, int64_t sa, const void* b,
                 int64_t sb, void* out, int64_t n);

}  // namespace strata::detail
