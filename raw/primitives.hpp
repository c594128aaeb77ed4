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
///   movement     views (core/layout.hpp; windows: numpy's sliding_window_view with
///                stride and dilation), contiguous, pad, concat, cast, fold (the
///                windows' transpose, col2im)
///   contraction  matmul [..., m, k] x [..., k, n]        raw::matmul
///   indexing     index_select, index_add                 raw::index_select/index_add
///   linalg       cholesky, triangular_solve, lu,         (raw/linalg.hpp)
///                lu_inverse, eigh, svd, qr: factorisations
///                of [..., m, n] and the inverse from LU's
///
/// Beyond the set, for the optimisers only (plain tensors, in place): fill_,
/// copy_, binary_, axpby_ and adam_step_ (raw/ops.hpp).
/// And the convolutions' accelerated kernels (raw/conv.hpp: conv_forward, conv_input_grad,
/// conv_weight_grad; oneDNN's, f32 on the CPU only): where has_conv_kernels is false,
/// diff/conv.hpp computes the same from the set.
///
/// The elementwise and reduction ops are three tables below, one row per op:
///   X(name, Functor, dtype class, NumPy equivalent[, vector kernel])
/// Each table generates its enum, the names, the front end's dtype check, the
/// backends' dispatch to the op's scalar functor (raw/scalar_ops.hpp, `Functor`
/// there) and the lists the test suites iterate. A new elementwise op is one
/// row here and one functor there (docs/adding_a_primitive.md).
#include <array>
#include <cstdint>
#include <string_view>

#include "core/dtype.hpp"

/// The unary ops, one row each: X(name, Functor, dtype class, NumPy equivalent, vector kernel).
///   neg   -x;  exp, log (natural), sin, cos, sqrt, tanh;  abs;  sign (-1, 0 or 1,
///   NaN stays NaN);  logical_not;  log1p = log(1 + x) and expm1 = e^x - 1, both
///   accurate near 0;  erf, the error function.
/// The last column names the CPU backend's vectorised kernel for contiguous f32/f64 blocks
/// (raw/cpu/vmath.hpp: kExp, ...; kNone: the scalar functor's loop, which the compiler
/// vectorises where it can), as candle's unary_op! carries its vectorised function.
#define STRATA_UNARY_OPS(X)                                       \
  X(neg, Neg, numeric, "numpy.negative", kNeg)                    \
  X(exp, Exp, floating, "numpy.exp", kExp)                        \
  X(log, Log, floating, "numpy.log", kLog)                        \
  X(sin, Sin, floating, "numpy.sin", kSin)                        \
  X(cos, Cos, floating, "numpy.cos", kCos)                        \
  X(sqrt, Sqrt, floating, "numpy.sqrt", kSqrt)                    \
  X(tanh, Tanh, floating, "numpy.tanh", kTanh)                    \
  X(abs, Abs, numeric, "numpy.abs", kAbs)                         \
  X(sign, Sign, numeric, "numpy.sign", kNone)                     \
  X(logical_not, LogicalNot, boolean, "numpy.logical_not", kNone) \
  X(log1p, Log1p, floating, "numpy.log1p", kNone)                 \
  X(expm1, Expm1, floating, "numpy.expm1", kNone)                 \
  X(erf, Erf, floating, "scipy.special.erf", kNone)

/// The binary ops on two tensors of one shape and dtype, one row each.
///   add, sub, mul wrap on integers;  div truncates toward zero on integers
///   (torch.div rounding_mode="trunc") and rejects a zero divisor;  pow (float);
///   maximum, minimum: NaN wins;  the comparisons give bool;  logical_and, _or;
///   safe_mul: a * b, but exactly 0 where a or b is 0, even where the other is
///   infinite or NaN;  safe_div: a / b, but exactly 0 where a == 0 (the derivative
///   rules multiply tangents and cotangents with them).
#define STRATA_BINARY_OPS(X)                                                   \
  X(add, Add, numeric, "numpy.add")                                            \
  X(sub, Sub, numeric, "numpy.subtract")                                       \
  X(mul, Mul, numeric, "numpy.multiply")                                       \
  X(div, Div, numeric, "numpy.true_divide")                                    \
  X(pow, Pow, floating, "numpy.power")                                         \
  X(maximum, Maximum, numeric, "numpy.maximum")                                \
  X(minimum, Minimum, numeric, "numpy.minimum")                                \
  X(eq, Eq, any, "numpy.equal")                                                \
  X(ne, Ne, any, "numpy.not_equal")                                            \
  X(lt, Lt, any, "numpy.less")                                                 \
  X(le, Le, any, "numpy.less_equal")                                           \
  X(gt, Gt, any, "numpy.greater")                                              \
  X(ge, Ge, any, "numpy.greater_equal")                                        \
  X(logical_and, LogicalAnd, boolean, "numpy.logical_and")                     \
  X(logical_or, LogicalOr, boolean, "numpy.logical_or")                        \
  X(safe_mul, SafeMul, floating, "numpy.where((a == 0) | (b == 0), 0, a * b)") \
  X(safe_div, SafeDiv, floating, "numpy.where(a == 0, 0, a / b)")

/// The reductions over a set of axes, one row each. sum: bool and integers sum
/// to i64; max, min: NaN wins; argmax, argmin: the i64 position (row-major over
/// the reduced axes) of the first extreme, or of the first NaN.
#define STRATA_REDUCE_OPS(X)                    \
  X(sum, SumReducer, any, "numpy.sum")          \
  X(max, MaxReducer, any, "numpy.max")          \
  X(min, MinReducer, any, "numpy.min")          \
  X(argmax, ArgmaxReducer, any, "numpy.argmax") \
  X(argmin, ArgminReducer, any, "numpy.argmin")

namespace strata {

/// The dtypes an op accepts (the third column of the tables).
enum class DTypeClass : uint8_t {
  floating,  ///< f32, f64
  numeric,   ///< i32, i64, f32, f64
  boolean,   ///< bool
  any,       ///< every dtype
};

/// Does `cls` admit dtype t?
constexpr bool admits(DTypeClass cls, DType t) {
  switch (cls) {
    case DTypeClass::floating:
      return t == DType::f32 || t == DType::f64;
    case DTypeClass::numeric:
      return t != DType::b8;
    case DTypeClass::boolean:
      return t == DType::b8;
    case DTypeClass::any:
      return true;
  }
  return false;
}

/// One row of an op table, as data.
template <class Op>
struct OpInfo {
  Op op;                   ///< the enumerator
  std::string_view name;   ///< as error messages spell it ("exp")
  DTypeClass dtypes;       ///< the dtypes it accepts
  std::string_view numpy;  ///< its NumPy (or SciPy) equivalent ("numpy.exp")
};

// The enumerators, in table order (each table's header comment says what they compute).
#define STRATA_OP_ENUMERATOR(name, ...) name,

/// Elementwise functions of one tensor (rows of STRATA_UNARY_OPS).
enum class UnaryOp : uint8_t { STRATA_UNARY_OPS(STRATA_OP_ENUMERATOR) };
/// Elementwise functions of two tensors of the same shape and dtype (rows of STRATA_BINARY_OPS).
enum class BinaryOp : uint8_t { STRATA_BINARY_OPS(STRATA_OP_ENUMERATOR) };
/// Reductions over a set of axes (rows of STRATA_REDUCE_OPS).
enum class ReduceOp : uint8_t { STRATA_REDUCE_OPS(STRATA_OP_ENUMERATOR) };

#undef STRATA_OP_ENUMERATOR
#define STRATA_OP_INFO(Enum, name, Functor, dtypes, numpy, ...) \
  OpInfo<Enum>{Enum::name, #name, DTypeClass::dtypes, numpy},
#define STRATA_UNARY_INFO(...) STRATA_OP_INFO(UnaryOp, __VA_ARGS__)
#define STRATA_BINARY_INFO(...) STRATA_OP_INFO(BinaryOp, __VA_ARGS__)
#define STRATA_REDUCE_INFO(...) STRATA_OP_INFO(ReduceOp, __VA_ARGS__)

/// The unary table as data, in enum order: `for (const auto& row : st::kUnaryOps)`.
inline constexpr std::array kUnaryOps{STRATA_UNARY_OPS(STRATA_UNARY_INFO)};
/// The binary table as data, in enum order.
inline constexpr std::array kBinaryOps{STRATA_BINARY_OPS(STRATA_BINARY_INFO)};
/// The reduction table as data, in enum order.
inline constexpr std::array kReduceOps{STRATA_REDUCE_OPS(STRATA_REDUCE_INFO)};

#undef STRATA_UNARY_INFO
#undef STRATA_BINARY_INFO
#undef STRATA_REDUCE_INFO
#undef STRATA_OP_INFO

namespace detail {
/// Row i of `table` describes enumerator i, for every row.
template <class Table>
constexpr bool rows_in_enum_order(const Table& table) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (static_cast<std::size_t>(table[i].op) != i) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::rows_in_enum_order(kUnaryOps) && detail::rows_in_enum_order(kBinaryOps) &&
              detail::rows_in_enum_order(kReduceOps));

/// The op's table row.
constexpr const OpInfo<UnaryOp>& op_info(UnaryOp op) { return kUnaryOps[std::size_t(op)]; }
/// The op's table row.
constexpr const OpInfo<BinaryOp>& op_info(BinaryOp op) { return kBinaryOps[std::size_t(op)]; }
/// The op's table row.
constexpr const OpInfo<ReduceOp>& op_info(ReduceOp op) { return kReduceOps[std::size_t(op)]; }

/// The op's name as error messages spell it ("exp", ...).
constexpr std::string_view op_name(UnaryOp op) { return op_info(op).name; }
/// The op's name as error messages spell it ("add", ...).
constexpr std::string_view op_name(BinaryOp op) { return op_info(op).name; }
/// The op's name as error messages spell it ("sum", ...).
constexpr std::string_view op_name(ReduceOp op) { return op_info(op).name; }

/// True for eq, ne, lt, le, gt, ge (bool results).
constexpr bool is_comparison(BinaryOp op) { return op >= BinaryOp::eq && op <= BinaryOp::ge; }

/// The per-step coefficients of one Adam update (raw::adam_step_), in double;
/// the kernels round each to the tensors' dtype. For torch.optim.Adam at step t:
/// l2 = weight_decay, decay = 1; for torch.optim.AdamW: l2 = 0,
/// decay = 1 - lr weight_decay; both: step = lr / (1 - beta1^t) and
/// sqrt_bc2 = sqrt(1 - beta2^t).
struct AdamStepCoefficients {
  double beta1;      ///< decay of the first moment
  double beta2;      ///< decay of the second moment
  double step;       ///< the step size, lr over the first moment's bias correction
  double sqrt_bc2;   ///< the square root of the second moment's bias correction
  double eps;        ///< added to the denominator
  double l2 = 0;     ///< L2 decay: the gradient used is g + l2 p (when l2 != 0)
  double decay = 1;  ///< decoupled decay: p is multiplied by it before the update
};

/// The options of raw::triangular_solve (scipy.linalg.solve_triangular's lower, trans and
/// unit_diagonal, plus the side); raw/linalg.hpp names it raw::TriangularSolve.
struct TriangularSolve {
  bool lower = true;       ///< A is lower (else upper) triangular; the other triangle is never read
  bool left = true;        ///< solve A X = B (else X A = B)
  bool transpose = false;  ///< use A^T in place of A
  bool unit_diagonal = false;  ///< A's diagonal is taken as ones (never read)
};

}  // namespace strata
