// SPDX-License-Identifier: MIT
#pragma once
/// Which raw/cpu/vmath function computes a unary op: the table row's vector kernel column,
/// for the eager kernels (elementwise.cpp) and the fused blocks (blocks.cpp) alike.
#include "raw/cpu/vmath.hpp"
#include "raw/primitives.hpp"

namespace strata::detail {

/// The vmath function computing op, or vmath::kNone when op has none.
inline int vmath_fn(UnaryOp op) {
  switch (op) {
#define STRATA_VMATH_ROW(name, Functor, dtypes, numpy, kernel) \
  case UnaryOp::name:                                          \
    return vmath::kernel;
    STRATA_UNARY_OPS(STRATA_VMATH_ROW)
#undef STRATA_VMATH_ROW
  }
  return vmath::kNone;
}

/// The vmath binary kernel computing op (vmath::BinaryFn), or -1 when op has none.
inline int vmath_binary_fn(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
      return vmath::kAdd;
    case BinaryOp::sub:
      return vmath::kSub;
    case BinaryOp::mul:
      return vmath::kMul;
    case BinaryOp::div:
      return vmath::kDiv;
    case BinaryOp::maximum:
      return vmath::kMaximum;
    case BinaryOp::minimum:
      return vmath::kMinimum;
    default:
      return -1;
  }
}

}  // namespace strata::detail
