// SPDX-License-Identifier: MIT
#pragma once
/// The elementwise primitives on one block of elements, for a plan's fused chains
/// (jit/fuse.hpp): out[i] = op(in[i * s]...) for i < n, each operand's step s 1 (dense) or 0
/// (one value for the whole block). Each element is computed by the same functor or vmath
/// kernel as the eager kernel (elementwise.cpp), whose results do not depend on an element's
/// position, so a fused chain gives eager's bits. `dtype` is the operands' (a and b's for
/// where); the result's is the op's (bool for comparisons). Host memory only.
///
/// A chain may end in a sum, maximum or minimum over contiguous rows of the block: the row
/// functions below give the eager reduction's bits (raw/cpu/row_reduce.hpp) when the block's
/// rows are whole rows of the reduced tensor, or the pieces of a longer row that eager sums
/// one by one.
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

/// Whether the row functions below give the eager reduction's bits for `op` over rows of `row`
/// elements of `dtype`: sums of f32 and f64 rows of any length, maxima and minima of f32 and
/// f64 rows of at most vmath::kSumBlock elements.
bool row_reduction_fuses(ReduceOp op, DType dtype, int64_t row);
/// out[r] = op over x[r * row, (r + 1) * row) for r < rows (row <= vmath::kSumBlock), results
/// of `dtype` like the rows.
void reduce_rows_block(ReduceOp op, DType dtype, const void* x, int64_t row, int64_t rows,
                       void* out);
/// The sum of x[0, n) (n <= vmath::kSumBlock): one piece of a longer row.
double sum_piece(DType dtype, const void* x, int64_t n);
/// out[index] = the sum of a row from its pieces' sum_piece values, in `dtype`.
void store_row_sum(DType dtype, const double* pieces, int64_t count, void* out, int64_t index);

}  // namespace strata::detail
