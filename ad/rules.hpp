// SPDX-License-Identifier: MIT
#pragma once
/// The derivative rules of every differentiable primitive, in one place,
/// shared by Forward<T> (jvp) and Reverse<T> (vjp). Each is written in
/// Diffable ops on the level below (T), so rules are differentiable too:
/// that is what makes Forward<Reverse<T>>, Reverse<Reverse<T>>, ... work.
///
/// Elementwise rules are linear maps that are their own transposes (a
/// pointwise multiplication), so one function serves as jvp and vjp:
/// `v` is a tangent (jvp) or a cotangent (vjp). Structural rules come in
/// jvp / vjp pairs.
#include <optional>

#include "diff/ops.hpp"

/// The derivative rules of the primitives (jvp and vjp), shared by Forward and Reverse.
namespace strata::rules {

/// False for the piecewise-constant unary ops (sign, logical_not).
constexpr bool has_derivative(UnaryOp op) {
  return op != UnaryOp::sign && op != UnaryOp::logical_not;
}

/// The values a derivative rule reads besides the tangent or cotangent: its
/// residuals. Reverse<T> keeps exactly these on the tape (and version-checks
/// exactly these), so a chain of adds keeps nothing alive and writing into an
/// add's input after recording is harmless.
enum Keep : unsigned {
  keep_nothing = 0,
  keep_a = 1,    ///< the first (or only) input
  keep_b = 2,    ///< the second input
  keep_out = 4,  ///< the output
};

/// What `unary(op, x, y, v)` reads: x (keep_a), y (keep_out), or nothing.
constexpr unsigned keeps(UnaryOp op) {
  switch (op) {
    case UnaryOp::exp:
    case UnaryOp::sqrt:
    case UnaryOp::tanh:
      return keep_out;
    case UnaryOp::log:
    case UnaryOp::sin:
    case UnaryOp::cos:
    case UnaryOp::abs:
      return keep_a;
    default:
      return keep_nothing;  // neg is linear; sign and logical_not have no derivative
  }
}

/// What `binary(op, which, a, b, y, v)` reads for operand `which`.
constexpr unsigned keeps(BinaryOp op, int which) {
  switch (op) {
    case BinaryOp::mul:
      return which == 0 ? keep_b : keep_a;
    case BinaryOp::div:
      return which == 0 ? keep_b : keep_b | keep_out;
    case BinaryOp::pow:
      return which == 0 ? keep_a | keep_b : keep_a | keep_out;
    case BinaryOp::maximum:
    case BinaryOp::minimum:
      return keep_a | keep_b;
    default:
      return keep_nothing;  // add, sub: linear
  }
}

/// d unary(op, x) applied to v; nullopt for ops with zero derivative (sign).
template <Diffable T>
std::optional<T> unary(UnaryOp op, const T& x, const T& y, const T& v) {
  switch (op) {
    case UnaryOp::neg:
      return -v;
    case UnaryOp::exp:
      return v * y;
    case UnaryOp::log:
      return v / x;
    case UnaryOp::sin:
      return v * cos(x);
    case UnaryOp::cos:
      return -(v * sin(x));
    case UnaryOp::sqrt:
      return v / (y * 2.0);
    case UnaryOp::tanh:
      return v * (1.0 - y * y);
    case UnaryOp::abs:
      return v * sign(x);
    default:
      return std::nullopt;  // sign, logical_not: piecewise constant
  }
}

/// The partial derivative of binary(op, a, b) in operand `which` (0: a, 1: b) applied to v.
template <Diffable T>
T binary(BinaryOp op, int which, const T& a, const T& b, const T& y, const T& v) {
  switch (op) {
    case BinaryOp::add:
      return v;
    case BinaryOp::sub:
      return which == 0 ? v : -v;
    case BinaryOp::mul:
      return which == 0 ? v * b : v * a;
    case BinaryOp::div:
      return which == 0 ? v / b : -(v * y / b);
    case BinaryOp::pow:
      // 0 ** 0 keeps finite derivatives: d/da is 0 where a == b == 0 (b * a ** (b - 1)
      // is 0 * inf there), and d/db uses log(1) where a == 0, as in JAX. Both are
      // "double wheres": the branch a where does not select still runs (and is
      // differentiated, with a zero cotangent) on inputs made safe first, a = 1,
      // so its own derivatives are finite and 0 * (its derivative) stays 0.
      if (which == 0) {
        const T zero_zero = logical_and(a == 0, b == 0);
        return v * where(zero_zero, 0, b * pow(where(zero_zero, 1, a), b - 1.0));
      }
      return v * log(where(a == 0, 1, a)) * y;
    case BinaryOp::maximum:
    case BinaryOp::minimum: {
      // Ties split the derivative evenly between the operands, like JAX.
      const bool mx = op == BinaryOp::maximum;
      const T mine = which == 0 ? a : b, other = which == 0 ? b : a;
      const T wins = mx ? cast(mine > other, v.dtype()) : cast(mine < other, v.dtype());
      return v * (wins + cast(mine == other, v.dtype()) * 0.5);
    }
    default:
      break;
  }
  detail::fail<DTypeError>(op_name(op), "has no derivative");
}

/// sum's vjp: the cotangent broadcast back over the reduced axes.
template <Diffable T>
T unreduce(const T& ct, const Shape& in_shape, const Shape& axes, bool keepdims) {
  T c = ct;
  if (!keepdims) {
    Shape kept = in_shape;
    for (int64_t a : axes) kept[std::size_t(normalize_axis(a, in_shape, "sum"))] = 1;
    c = Prims<T>::reshape(c, kept);
  }
  return Prims<T>::expand(c, in_shape);
}

/// max's weights: 1 / (number of maxima) at each maximum, 0 elsewhere (a constant).
template <Diffable T>
T max_weights(const T& x, const T& y, const Shape& axes, bool keepdims) {
  const Tensor& px = plain(x);
  const Tensor yk = unreduce(plain(y), px.shape(), axes, keepdims);
  const Tensor hit = cast(px == yk, px.dtype());
  const Tensor count = unreduce(Prims<Tensor>::sum(hit, axes, true), px.shape(), axes, true);
  return Prims<T>::constant(hit / count);
}

/// The inverse of a permutation.
inline Shape inverse_permutation(const Shape& dims) {
  Shape inv(dims.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    inv[std::size_t(normalize_axis(dims[i], dims.ndim(), "permute"))] = int64_t(i);
  }
  return inv;
}

/// The positions a slice picks along an axis of size n, as an i64 index tensor.
inline Tensor slice_positions(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                              int64_t step, Device device) {
  return Tensor(raw::arange(0, double(n), 1, i64, device).slice(0, start, stop, step));
}

/// True for a 2-D value stored column-major (a transposed view of a
/// row-major matrix, like the W^T of x @ W^T).
inline bool column_major_2d(const Tensor& t) {
  const Strides& s = t.raw().strides();
  return t.ndim() == 2 && t.shape()[0] > 1 && t.shape()[1] > 1 && s[0] == 1 && s[1] >= t.shape()[0];
}

/// matmul's vjp for operand a ([..., m, k]) or b ([..., k, n]). For a 2-D
/// column-major operand the same product is computed transposed, so the
/// gradient comes out in the operand's own layout: the gradient of W in
/// x @ W^T is then a contiguous [out, in] matrix that optimisers update with
/// unit-stride loops.
template <Diffable T>
T matmul_vjp(int which, const T& a, const T& b, const T& ct) {
  const bool flat = a.shape().ndim() == 2 && b.shape().ndim() == 2;
  if (which == 0) {
    if (flat && column_major_2d(strata::plain(a))) {
      return transpose(Prims<T>::matmul(b, transpose(ct, 0, 1)), 0, 1);
    }
    return sum_to(Prims<T>::matmul(ct, transpose(b, -1, -2)), a.shape());
  }
  if (flat && column_major_2d(strata::plain(b))) {
    return transpose(Prims<T>::matmul(transpose(ct, 0, 1), a), 0, 1);
  }
  return sum_to(Prims<T>::matmul(transpose(a, -1, -2), ct), b.shape());
}

/// pad's vjp: the interior of the cotangent.
template <Diffable T>
T unpad(const T& ct, const Pads& pads, const Shape& in_shape) {
  T c = ct;
  for (std::size_t i = 0; i < pads.size(); ++i) {
    c = Prims<T>::slice(c, int64_t(i), pads[i].first, pads[i].first + in_shape[i], 1);
  }
  return c;
}

}  // namespace strata::rules
