// SPDX-License-Identifier: MIT
#pragma once
/// The closed primitive set of strata, in one place. Every backend implements
/// exactly these; everything else (broadcasting arithmetic, softmax, indexing,
/// matmul with 1-D operands...) is a composite of them in diff/.
///
///   creation     empty, full, from host data, arange, uniform, normal,
///                to host, to device                      (raw/ops.hpp)
///   unary        UnaryOp below                           raw::unary
///   binary       BinaryOp below (same shape and dtype)   raw::binary
///   ternary      where(cond, a, b)                       raw::where
///   reduce       ReduceOp below, over axes, keepdims     raw::reduce
///   movement     views (core/layout.hpp), contiguous, pad, concat, cast
///   contraction  matmul [..., m, k] x [..., k, n]        raw::matmul
///   indexing     index_select, index_add                 raw::index_select/index_add
#include <cstdint>
#include <string_view>

namespace strata {

/// Elementwise functions of one tensor.
enum class UnaryOp : uint8_t {
  neg,          ///< -x                  (numpy.negative)   float, int
  exp,          ///< e^x                 (numpy.exp)        float
  log,          ///< natural log         (numpy.log)        float
  sin,          ///< sine                (numpy.sin)        float
  cos,          ///< cosine              (numpy.cos)        float
  sqrt,         ///< square root         (numpy.sqrt)       float
  tanh,         ///< hyperbolic tangent  (numpy.tanh)       float
  abs,          ///< |x|                 (numpy.abs)        float, int
  sign,         ///< -1, 0 or 1          (numpy.sign)       float, int
  logical_not,  ///< !x                  (numpy.logical_not) bool
};

/// Elementwise functions of two tensors of the same shape and dtype.
enum class BinaryOp : uint8_t {
  add,          ///< a + b               (numpy.add)        float, int
  sub,          ///< a - b               (numpy.subtract)   float, int
  mul,          ///< a * b               (numpy.multiply)   float, int
  div,          ///< a / b; ints truncate toward zero (torch.div trunc) float, int
  pow,          ///< a ** b              (numpy.power)      float
  maximum,      ///< larger, NaN wins    (numpy.maximum)    float, int
  minimum,      ///< smaller, NaN wins   (numpy.minimum)    float, int
  eq,           ///< a == b -> bool      (numpy.equal)      all
  ne,           ///< a != b -> bool      (numpy.not_equal)  all
  lt,           ///< a < b -> bool       (numpy.less)       all
  le,           ///< a <= b -> bool      (numpy.less_equal) all
  gt,           ///< a > b -> bool       (numpy.greater)    all
  ge,           ///< a >= b -> bool      (numpy.greater_equal) all
  logical_and,  ///< a && b              (numpy.logical_and) bool
  logical_or,   ///< a || b              (numpy.logical_or)  bool
};

/// Reductions over a set of axes.
enum class ReduceOp : uint8_t {
  sum,     ///< sum; bool and ints sum to i64   (numpy.sum)
  max,     ///< largest; NaN wins               (numpy.max)
  min,     ///< smallest; NaN wins              (numpy.min)
  argmax,  ///< i64 position of the first max, row-major over the reduced axes (numpy.argmax)
  argmin,  ///< i64 position of the first min   (numpy.argmin)
};

/// The op's name as error messages spell it ("exp", ...).
std::string_view op_name(UnaryOp op);
/// The op's name as error messages spell it ("add", ...).
std::string_view op_name(BinaryOp op);
/// The op's name as error messages spell it ("sum", ...).
std::string_view op_name(ReduceOp op);

/// True for eq, ne, lt, le, gt, ge (bool results).
constexpr bool is_comparison(BinaryOp op) { return op >= BinaryOp::eq && op <= BinaryOp::ge; }

}  // namespace strata
