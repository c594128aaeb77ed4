// SPDX-License-Identifier: MIT
#pragma once
/// The scalar semantics of strata, written once for both devices: one functor
/// per row of the op tables (raw/primitives.hpp), the casts, and the reducers.
/// The CPU loops (raw/cpu/) and the CUDA kernels (raw/cuda/) both instantiate
/// exactly these, so the CPU suite checks the arithmetic the GPU runs.
///
/// The rules, for every device:
///   - signed integers wrap (two's complement), as in NumPy and PyTorch;
///   - maximum, minimum, max, min: a NaN operand wins;
///   - integer division truncates toward zero; MIN / -1 wraps; the front end
///     (raw/ops/) has rejected a zero divisor before a kernel runs;
///   - casts: floats to integers saturate and NaN becomes 0; anything to bool
///     is "!= 0";
///   - sums accumulate floats in double and integers (and bools) in wrapping
///     int64; argmax/argmin give the first position of the extreme, or of the
///     first NaN: ties go to the smaller position, whatever the combination order.
///
/// The CPU's vectorised kernels (raw/cpu/vmath*) replace some of these
/// functors on contiguous f32/f64 blocks; they are tested against them.
#include "core/error.hpp"
#include "raw/primitives.hpp"
#include "raw/scalar/arith.hpp"
#include "raw/scalar/binary.hpp"
#include "raw/scalar/reducers.hpp"
#include "raw/scalar/unary.hpp"

namespace strata::detail::scalar {

// --- dispatch: from an op to its functor, generated from the tables ---------------

/// Calls f(Functor{}) with the functor of `op`'s row. Only rows whose dtype
/// class admits T are instantiated; any other op throws DTypeError (the front
/// end rejects those first). Host code; the callbacks launch or loop.
template <class T, class F>
void visit_unary(UnaryOp op, F&& f) {
  switch (op) {
#define STRATA_VISIT_ROW(name, Functor, dtypes, numpy, ...) \
  case UnaryOp::name:                                       \
    if constexpr (admits(DTypeClass::dtypes, dtype_v<T>)) { \
      return f(Functor{});                                  \
    }                                                       \
    break;
    STRATA_UNARY_OPS(STRATA_VISIT_ROW)
#undef STRATA_VISIT_ROW
  }
  fail<DTypeError>(op_name(op), "dtype ", dtype_name(dtype_v<T>), " is not supported");
}

/// As visit_unary, for a binary op.
template <class T, class F>
void visit_binary(BinaryOp op, F&& f) {
  switch (op) {
#define STRATA_VISIT_ROW(name, Functor, dtypes, numpy)      \
  case BinaryOp::name:                                      \
    if constexpr (admits(DTypeClass::dtypes, dtype_v<T>)) { \
      return f(Functor{});                                  \
    }                                                       \
    break;
    STRATA_BINARY_OPS(STRATA_VISIT_ROW)
#undef STRATA_VISIT_ROW
  }
  fail<DTypeError>(op_name(op), "dtype ", dtype_name(dtype_v<T>), " is not supported");
}

/// Calls f(type_tag<Reducer<T>>{}) with the reducer of `op`'s row.
template <class T, class F>
void visit_reduce(ReduceOp op, F&& f) {
  switch (op) {
#define STRATA_VISIT_ROW(name, Reducer, dtypes, numpy)      \
  case ReduceOp::name:                                      \
    if constexpr (admits(DTypeClass::dtypes, dtype_v<T>)) { \
      return f(type_tag<Reducer<T>>{});                     \
    }                                                       \
    break;
    STRATA_REDUCE_OPS(STRATA_VISIT_ROW)
#undef STRATA_VISIT_ROW
  }
  fail<DTypeError>(op_name(op), "dtype ", dtype_name(dtype_v<T>), " is not supported");
}

}  // namespace strata::detail::scalar
