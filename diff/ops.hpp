// SPDX-License-Identifier: MIT
#pragma once
/// The composite ops: written once as templates over Diffable, from the
/// primitives of Prims<T> only, so they run — and are differentiable — at
/// every level of the AD stack (Tensor, Forward<T>, Reverse<T>, nested).
///
/// Mixed operands follow one rule: the lower level (a captured Tensor, a
/// value of an outer transform, a C++ number) is lifted to the higher as a
/// constant; shapes broadcast like NumPy; dtypes promote like PyTorch
/// (bool < i32 < i64 < f32 < f64), and a C++ number is weak: it takes the
/// tensor's dtype, except that a floating-point number with an integer or
/// bool tensor gives f32.
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "diff/tensor.hpp"

namespace strata {

// --- helpers --------------------------------------------------------------------
namespace detail {

/// A constant T of `shape` whose every element is v (a zero-stride view: no memory).
template <Diffable T>
T filled(double v, const Shape& shape, DType dtype, Device device) {
  return Prims<T>::constant(Tensor(raw::full({}, v, dtype, device).expand(shape)));
}

template <Diffable T>
T broadcast_to(const T& x, const Shape& shape) {
  return x.shape() == shape ? x : Prims<T>::expand(x, shape);
}

template <Diffable T>
T as_dtype(const T& x, DType dtype) {
  return x.dtype() == dtype ? x : Prims<T>::cast(x, dtype);
}

/// Integers and bools become f32 before float math (as in PyTorch).
template <Diffable T>
T float_input(const T& x) {
  return is_floating(x.dtype()) ? x : Prims<T>::cast(x, DType::f32);
}

template <class S>
DType scalar_dtype(DType tensor) {
  if constexpr (std::is_floating_point_v<S>) {
    return is_floating(tensor) ? tensor : DType::f32;
  } else if constexpr (std::is_same_v<S, bool>) {
    return tensor;
  } else {
    return tensor == DType::b8 ? DType::i64 : tensor;
  }
}

template <class A, class B>
concept Operands = (Diffable<A> || Diffable<B>)&&requires {
  typename common_level_t<A, B>;
};

/// Both operands at their common level, dtype and broadcast shape.
template <class A, class B>
requires Operands<A, B>
auto operands(const A& a, const B& b, std::string_view op) {
  using R = common_level_t<A, B>;
  if constexpr (Scalar<A>) {
    const R y = lift<R>(b);
    const DType t = scalar_dtype<A>(y.dtype());
    return std::pair<R, R>{filled<R>(double(a), y.shape(), t, y.device()), as_dtype(y, t)};
  } else if constexpr (Scalar<B>) {
    const R x = lift<R>(a);
    const DType t = scalar_dtype<B>(x.dtype());
    return std::pair<R, R>{as_dtype(x, t), filled<R>(double(b), x.shape(), t, x.device())};
  } else {
    const R x = lift<R>(a), y = lift<R>(b);
    const DType t = promote_types(x.dtype(), y.dtype());
    const Shape s = broadcast_shapes(x.shape(), y.shape(), op);
    return std::pair<R, R>{broadcast_to(as_dtype(x, t), s), broadcast_to(as_dtype(y, t), s)};
  }
}

template <Diffable T>
T binary(BinaryOp op, const T& a, const T& b) {
  return Prims<T>::binary(op, a, b);
}

/// The broadcasting binary `op` on any mix of levels and scalars (add, sub, mul, ...).
template <class A, class B>
requires Operands<A, B> common_level_t<A, B> lifted_binary(BinaryOp op, const A& a, const B& b) {
  auto [x, y] = operands(a, b, op_name(op));
  return binary(op, x, y);
}

/// The comparison `op` on any mix of levels and scalars: a bool constant of their level.
template <class A, class B>
requires Operands<A, B> common_level_t<A, B> lifted_compare(BinaryOp op, const A& a, const B& b) {
  using R = common_level_t<A, B>;
  auto [x, y] = operands(a, b, op_name(op));
  return Prims<R>::constant(Prims<Tensor>::binary(op, Prims<R>::plain(x), Prims<R>::plain(y)));
}

/// The float unary `op` (exp, log, ...); integer and bool inputs become f32 first.
template <Diffable T>
T float_unary(UnaryOp op, const T& x) {
  return Prims<T>::unary(op, float_input(x));
}

/// Every axis when `axes` is empty, else `axes`.
inline Shape reduce_axes(const Shape& axes, int64_t ndim) {
  if (!axes.empty()) return axes;
  Shape all;
  for (int64_t d = 0; d < ndim; ++d) all.push_back(d);
  return all;
}

/// The axes of the reduction `op` (every axis when `axes` is empty), normalised;
/// an axis out of range or repeated is an IndexError naming op.
inline Shape checked_axes(const Shape& axes, const Shape& shape, std::string_view op) {
  Shape out;
  for (int64_t a : reduce_axes(axes, shape.ndim())) {
    const int64_t n = normalize_axis(a, shape, op);
    for (int64_t seen : out) {
      if (seen == n)
        fail<IndexError>(op, "axis ", n, " repeated in axes ", axes, " (shape ", shape, ")");
    }
    out.push_back(n);
  }
  return out;
}

/// How many elements a reduction over the (normalised) axes combines per output.
inline int64_t reduced_count(const Shape& shape, const Shape& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[std::size_t(a)];
  return n;
}

}  // namespace detail

/// The plain Tensor value underneath every level of x.
template <Diffable T>
const Tensor& plain(const T& x) {
  return Prims<T>::plain(x);
}

/// x as a constant: no derivative flows through it, at any level (jax.lax.stop_gradient).
template <Diffable T>
T stop_gradient(const T& x) {
  return Prims<T>::constant(plain(x));
}

/// A constant of x's type, shape and dtype, every element `value`.
template <Diffable T>
T constant_like(const T& x, double value) {
  return Prims<T>::constant(Tensor(raw::full(x.shape(), value, x.dtype(), x.device())));
}

/// A constant of x's type, shape and dtype, every element 0 (a zero-stride view: no memory).
template <Diffable T>
T zeros_like(const T& x) {
  return detail::filled<T>(0.0, x.shape(), x.dtype(), x.device());
}

// --- arithmetic -------------------------------------------------------------------
/// Elementwise a + b. The operands are tensors of any level or C++ numbers: they
/// broadcast like NumPy (ShapeError when they do not), promote like PyTorch, and the
/// result has their common level. Example: `st::add(x, 1.0)` adds 1 to every element; the operator
/// `a + b` is the same op.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> add(const A& a, const B& b) {
  return detail::lifted_binary(BinaryOp::add, a, b);
}
/// Elementwise a - b. The operands are tensors of any level or C++ numbers: they
/// broadcast like NumPy (ShapeError when they do not), promote like PyTorch, and the
/// result has their common level. Example: `st::sub(x, st::mean(x))`; the operator `a - b` is the
/// same op.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> sub(const A& a, const B& b) {
  return detail::lifted_binary(BinaryOp::sub, a, b);
}
/// Elementwise a * b. The operands are tensors of any level or C++ numbers: they
/// broadcast like NumPy (ShapeError when they do not), promote like PyTorch, and the
/// result has their common level. Example: `st::mul(w, x)`; the operator `a * b` is the same op.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> mul(const A& a, const B& b) {
  return detail::lifted_binary(BinaryOp::mul, a, b);
}
/// Elementwise max(a, b). The operands are tensors of any level or C++ numbers: they
/// broadcast like NumPy (ShapeError when they do not), promote like PyTorch, and the
/// result has their common level. Example: `st::maximum(x, 0.0)` is relu; NaN in either operand
/// gives NaN.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> maximum(const A& a, const B& b) {
  return detail::lifted_binary(BinaryOp::maximum, a, b);
}
/// Elementwise min(a, b). The operands are tensors of any level or C++ numbers: they
/// broadcast like NumPy (ShapeError when they do not), promote like PyTorch, and the
/// result has their common level. Example: `st::minimum(x, 1.0)`; NaN in either operand gives NaN.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> minimum(const A& a, const B& b) {
  return detail::lifted_binary(BinaryOp::minimum, a, b);
}

/// Elementwise a / b, broadcasting and promoting like add; integer and bool operands
/// divide as f32 (true division, as in PyTorch). Example: `st::div(x, 2)`, or `x / 2`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> div(const A& a, const B& b) {
  auto [x, y] = detail::operands(a, b, "div");
  return detail::binary(BinaryOp::div, detail::float_input(x), detail::float_input(y));
}

/// Elementwise a ** b, broadcasting and promoting like add; integer and bool operands
/// are computed in f32. Example: `st::pow(x, 2.0)` squares; `st::pow(2.0, x)` is 2^x.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> pow(const A& a, const B& b) {
  auto [x, y] = detail::operands(a, b, "pow");
  return detail::binary(BinaryOp::pow, detail::float_input(x), detail::float_input(y));
}

/// a + b: st::add.
template <class A, class B>
requires detail::Operands<A, B>
auto operator+(const A& a, const B& b) { return add(a, b); }
/// a - b: st::sub.
template <class A, class B>
requires detail::Operands<A, B>
auto operator-(const A& a, const B& b) { return sub(a, b); }
/// a * b: st::mul.
template <class A, class B>
requires detail::Operands<A, B>
auto operator*(const A& a, const B& b) { return mul(a, b); }
/// a / b: st::div (true division).
template <class A, class B>
requires detail::Operands<A, B>
auto operator/(const A& a, const B& b) { return div(a, b); }
/// -x, elementwise, keeping x's dtype.
template <Diffable T>
T operator-(const T& x) {
  return Prims<T>::unary(UnaryOp::neg, x);
}

// --- comparisons and logic: constants of the operands' level ------------------
/// Elementwise a == b as a bool tensor, a constant (no derivative) of the operands'
/// common level. Operands broadcast and promote like add (ShapeError when they do not
/// broadcast). Example: `st::eq(x, 0.0)`, or `x == 0.0`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> eq(const A& a, const B& b) {
  return detail::lifted_compare(BinaryOp::eq, a, b);
}
/// a == b: st::eq.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B>
operator==(const A& a, const B& b) { return eq(a, b); }
/// Elementwise a != b as a bool tensor, a constant (no derivative) of the operands'
/// common level. Operands broadcast and promote like add (ShapeError when they do not
/// broadcast). Example: `st::ne(x, 0.0)`, or `x != 0.0`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> ne(const A& a, const B& b) {
  return detail::lifted_compare(BinaryOp::ne, a, b);
}
/// a != b: st::ne.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B>
operator!=(const A& a, const B& b) { return ne(a, b); }
/// Elementwise a < b as a bool tensor, a constant (no derivative) of the operands'
/// common level. Operands broadcast and promote like add (ShapeError when they do not
/// broadcast). Example: `st::lt(x, 0.0)`, or `x < 0.0`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> lt(const A& a, const B& b) {
  return detail::lifted_compare(BinaryOp::lt, a, b);
}
/// a < b: st::lt.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B>
operator<(const A& a, const B& b) { return lt(a, b); }
/// Elementwise a <= b as a bool tensor, a constant (no derivative) of the operands'
/// common level. Operands broadcast and promote like add (ShapeError when they do not
/// broadcast). Example: `st::le(x, 0.0)`, or `x <= 0.0`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> le(const A& a, const B& b) {
  return detail::lifted_compare(BinaryOp::le, a, b);
}
/// a <= b: st::le.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B>
operator<=(const A& a, const B& b) { return le(a, b); }
/// Elementwise a > b as a bool tensor, a constant (no derivative) of the operands'
/// common level. Operands broadcast and promote like add (ShapeError when they do not
/// broadcast). Example: `st::gt(x, 0.0)`, or `x > 0.0`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> gt(const A& a, const B& b) {
  return detail::lifted_compare(BinaryOp::gt, a, b);
}
/// a > b: st::gt.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B>
operator>(const A& a, const B& b) { return gt(a, b); }
/// Elementwise a >= b as a bool tensor, a constant (no derivative) of the operands'
/// common level. Operands broadcast and promote like add (ShapeError when they do not
/// broadcast). Example: `st::ge(x, 0.0)`, or `x >= 0.0`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> ge(const A& a, const B& b) {
  return detail::lifted_compare(BinaryOp::ge, a, b);
}
/// a >= b: st::ge.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B>
operator>=(const A& a, const B& b) { return ge(a, b); }

/// Elementwise not, as a bool constant; any non-zero element counts as true.
/// Example: `st::logical_not(x > 0)`.
template <Diffable T>
T logical_not(const T& x) {
  return Prims<T>::constant(Prims<Tensor>::unary(UnaryOp::logical_not, plain(x)));
}
/// Elementwise a and b, as a bool constant; operands broadcast (ShapeError when they do
/// not) and non-zero counts as true. Example: `st::logical_and(x > 0, x < 1)`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> logical_and(const A& a, const B& b) {
  auto [x, y] = detail::operands(a, b, "logical_and");
  using R = common_level_t<A, B>;
  return Prims<R>::constant(Prims<Tensor>::binary(BinaryOp::logical_and, plain(x), plain(y)));
}
/// Elementwise a or b, as a bool constant; operands broadcast (ShapeError when they do
/// not) and non-zero counts as true. Example: `st::logical_or(x < -1, x > 1)`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> logical_or(const A& a, const B& b) {
  auto [x, y] = detail::operands(a, b, "logical_or");
  using R = common_level_t<A, B>;
  return Prims<R>::constant(Prims<Tensor>::binary(BinaryOp::logical_or, plain(x), plain(y)));
}

/// cond ? a : b elementwise. cond, a and b broadcast together (ShapeError when they do
/// not); a and b promote like add and may be C++ numbers; cond is used as a plain bool
/// (its derivative is never taken). The unselected branch contributes exactly zero to a
/// gradient, even where its own derivative is infinite or NaN.
/// Example: `st::where(x > 0.0, st::sqrt(x), 0.0)`.
template <class C, class A, class B>
requires detail::Operands<A, B> &&
    (Diffable<C>)common_level_t<A, B> where(const C& cond, const A& a, const B& b) {
  using R = common_level_t<A, B>;
  auto [x, y] = detail::operands(a, b, "where");
  const Tensor& c = plain(cond);
  const Shape s = broadcast_shapes(c.shape(), x.shape(), "where");
  return Prims<R>::where(detail::broadcast_to(c, s), detail::broadcast_to(x, s),
                         detail::broadcast_to(y, s));
}

// --- elementwise functions ---------------------------------------------------------
/// Elementwise e^x. Same shape as x; floating dtypes are kept, integer and bool
/// inputs give f32. Example: `st::exp(x)`, or `x.exp()`.
template <Diffable T>
T exp(const T& x) {
  return detail::float_unary(UnaryOp::exp, x);
}
/// Elementwise the natural logarithm (NaN below 0, -inf at 0). Same shape as x; floating dtypes are
/// kept, integer and bool inputs give f32. Example: `st::log(x)`, or `x.log()`.
template <Diffable T>
T log(const T& x) {
  return detail::float_unary(UnaryOp::log, x);
}
/// Elementwise sin(x). Same shape as x; floating dtypes are kept, integer and bool
/// inputs give f32. Example: `st::sin(x)`, or `x.sin()`.
template <Diffable T>
T sin(const T& x) {
  return detail::float_unary(UnaryOp::sin, x);
}
/// Elementwise cos(x). Same shape as x; floating dtypes are kept, integer and bool
/// inputs give f32. Example: `st::cos(x)`, or `x.cos()`.
template <Diffable T>
T cos(const T& x) {
  return detail::float_unary(UnaryOp::cos, x);
}
/// Elementwise the square root (NaN below 0). Same shape as x; floating dtypes are kept, integer
/// and bool inputs give f32. Example: `st::sqrt(x)`, or `x.sqrt()`.
template <Diffable T>
T sqrt(const T& x) {
  return detail::float_unary(UnaryOp::sqrt, x);
}
/// Elementwise the hyperbolic tangent. Same shape as x; floating dtypes are kept, integer and bool
/// inputs give f32. Example: `st::tanh(x)`, or `x.tanh()`.
template <Diffable T>
T tanh(const T& x) {
  return detail::float_unary(UnaryOp::tanh, x);
}

/// Elementwise |x|, keeping x's shape and dtype (integers stay integers). Its derivative
/// at 0 is 0. Example: `st::abs(x)`.
template <Diffable T>
T abs(const T& x) {
  return Prims<T>::unary(UnaryOp::abs, x);
}
/// Elementwise -1, 0 or +1 by the sign of x, keeping x's shape and dtype; its derivative
/// is 0 everywhere. Example: `st::sign(x)`.
template <Diffable T>
T sign(const T& x) {
  return Prims<T>::unary(UnaryOp::sign, x);
}
/// Elementwise 1 / (1 + e^-x), as (tanh(x / 2) + 1) / 2: no overflow for any x. Same
/// shape; integer and bool inputs give f32. Example: `st::sigmoid(logits)`.
template <Diffable T>
T sigmoid(const T& x) {
  return (tanh(detail::float_input(x) * 0.5) + 1.0) * 0.5;
}
/// Elementwise max(x, 0), with derivative 0 at 0 (as in JAX and PyTorch). NaN stays NaN,
/// and its derivative there is 1 (the cotangent passes), as in PyTorch's threshold_backward.
/// Same shape and dtype as x. Example: `st::relu(st::matmul(x, w))`.
template <Diffable T>
T relu(const T& x) {
  return where(x <= 0, 0, x);  // NaN <= 0 is false: NaN selects x (one compare, one where)
}
/// Elementwise GELU, its tanh approximation (PyTorch's approximate="tanh"). Same shape;
/// integer and bool inputs give f32. Example: `st::gelu(h)`.
template <Diffable T>
T gelu(const T& x) {
  const T f = detail::float_input(x);
  return f * 0.5 * (tanh((f + f * f * f * 0.044715) * 0.7978845608028654) + 1.0);
}
/// Elementwise x * sigmoid(x) (SiLU, swish). Same shape; integer and bool inputs give
/// f32. Example: `st::silu(h)`.
template <Diffable T>
T silu(const T& x) {
  return x * sigmoid(x);
}
/// Elementwise log(1 + e^x), computed as max(x, 0) + log(1 + e^-|x|): stable for any x.
/// Same shape; integer and bool inputs give f32. Example: `st::softplus(x)`.
template <Diffable T>
T softplus(const T& x) {
  const T f = detail::float_input(x);
  return maximum(f, 0) + log(exp(-abs(f)) + 1.0);
}
/// Elementwise min(max(x, lo), hi), keeping x's shape and dtype; the derivative is 1
/// inside [lo, hi] and 0 outside. Example: `st::clamp(p, 1e-7, 1.0 - 1e-7)`.
template <Diffable T>
T clamp(const T& x, double lo, double hi) {
  return minimum(maximum(x, lo), hi);
}

// --- reductions (an empty axes list reduces every axis) ---------------------
/// The sum over `axes` (every axis when empty; negative axes count from the end), keeping
/// them as size-1 dims when keepdims. Float dtypes are kept; integer and bool inputs sum
/// as i64. Throws IndexError for an axis out of range. Example: `st::sum(x, {1}, true)`.
template <Diffable T>
T sum(const T& x, const Shape& axes = {}, bool keepdims = false) {
  return Prims<T>::sum(x, detail::reduce_axes(axes, x.shape().ndim()), keepdims);
}
/// The maximum over `axes` (every axis when empty), keeping them as size-1 dims when
/// keepdims; same dtype as x. The gradient is shared equally between tied maxima.
/// Throws IndexError for an axis out of range, ValueError for an empty reduction.
/// Example: `st::max(x, {0})`.
template <Diffable T>
T max(const T& x, const Shape& axes = {}, bool keepdims = false) {
  return Prims<T>::max(x, detail::reduce_axes(axes, x.shape().ndim()), keepdims);
}
/// The minimum over `axes` (every axis when empty), as -max(-x); same dtype as x.
/// Throws like max. Example: `st::min(x, {1}, true)`.
template <Diffable T>
T min(const T& x, const Shape& axes = {}, bool keepdims = false) {
  const Shape ax = detail::checked_axes(axes, x.shape(), "min");
  if (detail::reduced_count(x.shape(), ax) == 0) {
    detail::fail<ValueError>("min", "cannot reduce over an empty axis (shape ", x.shape(),
                             ", axes ", axes, ")");
  }
  return -max(-x, ax, keepdims);
}
/// The mean over `axes` (every axis when empty), keeping them as size-1 dims when
/// keepdims; integer and bool inputs give f32. Throws IndexError for an axis out of
/// range. Example: `st::mean(x, {0})` averages the rows.
template <Diffable T>
T mean(const T& x, const Shape& axes = {}, bool keepdims = false) {
  const Shape ax = detail::reduce_axes(axes, x.shape().ndim());
  int64_t count = 1;
  for (int64_t a : ax) count *= x.shape()[std::size_t(normalize_axis(a, x.shape(), "mean"))];
  return sum(detail::float_input(x), ax, keepdims) / double(count);
}
/// The population variance over `axes` (ddof 0, like numpy.var and jnp.var; every axis
/// when empty); integer and bool inputs give f32. Example: `st::var(x, {1})`.
template <Diffable T>
T var(const T& x, const Shape& axes = {}, bool keepdims = false) {
  detail::checked_axes(axes, x.shape(), "var");
  const T d = detail::float_input(x) - mean(x, axes, true);
  return mean(d * d, axes, keepdims);
}
/// The population standard deviation, sqrt(var(x, axes, keepdims)).
/// Example: `st::std(x)`.
template <Diffable T>
T std(const T& x, const Shape& axes = {}, bool keepdims = false) {
  detail::checked_axes(axes, x.shape(), "std");
  return sqrt(var(x, axes, keepdims));
}
/// The Frobenius (2-) norm of all elements, a 0-d tensor; integer and bool inputs give
/// f32. Example: `st::norm(g)`.
template <Diffable T>
T norm(const T& x) {
  const T f = detail::float_input(x);
  return sqrt(sum(f * f));
}
namespace detail {
/// The shift of logsumexp and softmax over (checked) axes: the max, kept, as a
/// constant (it changes neither the value nor the derivative); 0 where the max is
/// infinite (all -inf rows stay -inf, not NaN), and 0 over an empty axis, whose
/// max does not exist (then softmax is empty and logsumexp is log(0) = -inf).
template <Diffable T>
T max_shift(const T& f, const Shape& ax) {
  if (reduced_count(f.shape(), ax) == 0) {
    Shape kept = f.shape();
    for (int64_t a : ax) kept[std::size_t(a)] = 1;
    return filled<T>(0.0, kept, f.dtype(), f.device());
  }
  const T m = stop_gradient(max(f, ax, true));
  return where(abs(m) < INFINITY, m, 0);
}
}  // namespace detail

/// log(sum(exp(x))) over `axes` (every axis when empty), shifted by the (constant) max for
/// stability, so large inputs do not overflow and rows of -inf give -inf; over an empty axis
/// it is -inf (the log of an empty sum). Integer and bool inputs give f32.
/// Example: `st::logsumexp(logits, {1})`.
template <Diffable T>
T logsumexp(const T& x, const Shape& axes = {}, bool keepdims = false) {
  const T f = detail::float_input(x);
  const Shape ax = detail::checked_axes(axes, f.shape(), "logsumexp");
  const T shift = detail::max_shift(f, ax);
  const T out = log(sum(exp(f - shift), ax, true)) + shift;
  return keepdims ? out : sum(out, ax, false);  // drops the size-1 axes
}
/// exp(x) / sum(exp(x)) along `axis`, stable for large inputs; same shape as x, f32 for
/// integer and bool inputs. Throws IndexError for an axis out of range.
/// Example: `st::softmax(logits, -1)`.
template <Diffable T>
T softmax(const T& x, int64_t axis) {
  const T f = detail::float_input(x);
  const Shape ax = detail::checked_axes({axis}, f.shape(), "softmax");
  const T e = exp(f - detail::max_shift(f, ax));
  return e / sum(e, ax, true);
}
/// x - logsumexp(x) along `axis`: the log of softmax, without its underflow. Same shape as
/// x. Example: `st::log_softmax(logits, 1)`.
template <Diffable T>
T log_softmax(const T& x, int64_t axis) {
  const T f = detail::float_input(x);
  return f - logsumexp(f, detail::checked_axes({axis}, f.shape(), "log_softmax"), true);
}
/// Position of the first maximum along `axis`, as an i64 constant (numpy.argmax); the axis
/// is dropped unless keepdims. Throws IndexError for an axis out of range, ValueError on an
/// empty axis. Example: `st::argmax(logits, 1)` gives the predicted classes.
template <Diffable T>
T argmax(const T& x, int64_t axis, bool keepdims = false) {
  return Prims<T>::constant(
      Tensor(raw::reduce(ReduceOp::argmax, plain(x).raw(), {axis}, keepdims)));
}
/// Position of the first minimum along `axis`, as an i64 constant (numpy.argmin). Throws
/// like argmax. Example: `st::argmin(d, 0)`.
template <Diffable T>
T argmin(const T& x, int64_t axis, bool keepdims = false) {
  return Prims<T>::constant(
      Tensor(raw::reduce(ReduceOp::argmin, plain(x).raw(), {axis}, keepdims)));
}
/// Sums x down to `shape` (the transpose of broadcasting x from `shape`; shape must
/// broadcast to x's shape). Example: `st::sum_to(g, b.shape())` reduces a bias gradient.
template <Diffable T>
T sum_to(const T& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.shape().ndim() - shape.ndim();
  Shape axes;
  for (int64_t i = 0; i < x.shape().ndim(); ++i) {
    if (i < lead || (shape[std::size_t(i - lead)] == 1 && x.shape()[std::size_t(i)] != 1)) {
      axes.push_back(i);
    }
  }
  return Prims<T>::reshape(Prims<T>::sum(x, axes, true), shape);
}

// --- reductions over one axis given as an integer (st::sum(x, 1), st::logsumexp(x, -1)) ---
/// sum over one axis (negative counts from the end); the same as st::sum(x, {axis}).
template <Diffable T, AxisIndex I>
T sum(const T& x, I axis, bool keepdims = false) {
  return sum(x, Shape{int64_t(axis)}, keepdims);
}
/// mean over one axis; the same as st::mean(x, {axis}).
template <Diffable T, AxisIndex I>
T mean(const T& x, I axis, bool keepdims = false) {
  return mean(x, Shape{int64_t(axis)}, keepdims);
}
/// max over one axis; the same as st::max(x, {axis}).
template <Diffable T, AxisIndex I>
T max(const T& x, I axis, bool keepdims = false) {
  return max(x, Shape{int64_t(axis)}, keepdims);
}
/// min over one axis; the same as st::min(x, {axis}).
template <Diffable T, AxisIndex I>
T min(const T& x, I axis, bool keepdims = false) {
  return min(x, Shape{int64_t(axis)}, keepdims);
}
/// Population variance over one axis; the same as st::var(x, {axis}).
template <Diffable T, AxisIndex I>
T var(const T& x, I axis, bool keepdims = false) {
  return var(x, Shape{int64_t(axis)}, keepdims);
}
/// Population standard deviation over one axis; the same as st::std(x, {axis}).
template <Diffable T, AxisIndex I>
T std(const T& x, I axis, bool keepdims = false) {
  return std(x, Shape{int64_t(axis)}, keepdims);
}
/// The 2-norm over `axes` (an empty list: every axis, like st::norm(x)).
template <Diffable T>
T norm(const T& x, const Shape& axes, bool keepdims = false) {
  const T f = detail::float_input(x);
  return sqrt(sum(f * f, axes, keepdims));
}
/// The 2-norm along one axis (numpy.linalg.norm(x, axis=axis)).
template <Diffable T, AxisIndex I>
T norm(const T& x, I axis, bool keepdims = false) {
  return norm(x, Shape{int64_t(axis)}, keepdims);
}
/// log(sum(exp(x))) over one axis; the same as st::logsumexp(x, {axis}).
template <Diffable T, AxisIndex I>
T logsumexp(const T& x, I axis, bool keepdims = false) {
  return logsumexp(x, Shape{int64_t(axis)}, keepdims);
}

// --- movement -----------------------------------------------------------------------
/// x with a new shape of the same element count (one entry may be -1: inferred); a view
/// when the strides allow it, else a copy. Throws ShapeError when the counts differ.
/// Example: `x.reshape({3, -1})`.
template <Diffable T>
T reshape(const T& x, const Shape& shape) {
  return Prims<T>::reshape(x, shape);
}
/// x with its axes reordered, output axis i being input axis dims[i] (numpy.transpose);
/// a view. Throws ShapeError unless dims is a permutation. Example: `st::permute(x, {2, 0, 1})`.
template <Diffable T>
T permute(const T& x, const Shape& dims) {
  return Prims<T>::permute(x, dims);
}
/// x broadcast to `shape` (numpy.broadcast_to): a view with zero strides. Throws ShapeError
/// when x's shape does not broadcast to it. Example: `st::expand(b, {4, 3})`.
template <Diffable T>
T expand(const T& x, const Shape& shape) {
  return Prims<T>::expand(x, shape);
}
/// x with axes a and b swapped (a view; negative axes count from the end). Throws
/// IndexError for an axis out of range. Example: `st::transpose(m, 0, 1)`.
template <Diffable T>
T transpose(const T& x, int64_t a, int64_t b) {
  const int64_t n = x.shape().ndim();
  a = normalize_axis(a, x.shape(), "transpose");
  b = normalize_axis(b, x.shape(), "transpose");
  Shape dims;
  for (int64_t i = 0; i < n; ++i) dims.push_back(i == a ? b : i == b ? a : i);
  return permute(x, dims);
}
/// x without `axis`, which must have size 1 (ShapeError otherwise; IndexError when out of
/// range). Example: `st::squeeze(col, 1)` turns [n, 1] into [n].
template <Diffable T>
T squeeze(const T& x, int64_t axis) {
  axis = normalize_axis(axis, x.shape(), "squeeze");
  if (x.shape()[std::size_t(axis)] != 1) {
    detail::fail<ShapeError>("squeeze", "axis ", axis, " of shape ", x.shape(), " has size ",
                             x.shape()[std::size_t(axis)], ", not 1");
  }
  Shape s = x.shape();
  s.erase(std::size_t(axis));
  return reshape(x, s);
}
/// x with a new size-1 axis at position `axis` (in the result; -1 appends). Example:
/// `st::unsqueeze(v, 0)` turns [n] into [1, n].
template <Diffable T>
T unsqueeze(const T& x, int64_t axis) {
  axis = normalize_axis(axis, x.shape().ndim() + 1, "unsqueeze");
  Shape s = x.shape();
  s.insert(std::size_t(axis), 1);
  return reshape(x, s);
}
/// x as one dimension of numel() elements (row-major). Example: `st::flatten(img)`.
template <Diffable T>
T flatten(const T& x) {
  return reshape(x, {-1});
}
/// x reversed along `axis` (a view with a negative stride). Throws IndexError for an axis
/// out of range. Example: `st::flip(x, 0)`.
template <Diffable T>
T flip(const T& x, int64_t axis) {
  return Prims<T>::slice(x, axis, std::nullopt, std::nullopt, -1);
}
/// Python's x[start:stop:step] along one axis (a view for plain tensors); bounds clamp like
/// Python's, st::none is an absent bound, step may be negative. Throws IndexError for an
/// axis out of range, ValueError for step 0. Example: `st::slice(x, 1, 0, st::none, 2)`.
template <Diffable T>
T slice(const T& x, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
        int64_t step = 1) {
  return Prims<T>::slice(x, axis, start, stop, step);
}
/// Pads each axis by (before, after) elements of value (numpy.pad, constant mode); one
/// pair per axis. Throws ShapeError for a wrong number of pairs, ValueError for a negative
/// width. Example: `st::pad(x, {{1, 0}, {0, 2}})`.
template <Diffable T>
T pad(const T& x, const Pads& pads, double value = 0.0) {
  T out = Prims<T>::pad(x, pads);
  if (value == 0.0) return out;
  const Tensor border(raw::pad(raw::full(x.shape(), 0.0, x.dtype(), x.device()), pads, value));
  return out + Prims<T>::constant(border);
}
/// x converted to `dtype` (x itself when it already has it); differentiable between float
/// dtypes. Example: `st::cast(i, st::f64)`.
template <Diffable T>
T cast(const T& x, DType dtype) {
  return detail::as_dtype(x, dtype);
}
/// Joins tensors along an existing axis; the other dims must agree (ShapeError) and dtypes
/// promote. Throws ValueError for an empty list. Example: `st::concat({a, b}, 0)`.
template <Diffable T>
T concat(const std::vector<T>& xs, int64_t axis) {
  if (xs.empty()) detail::fail<ValueError>("concat", "needs at least one tensor");
  DType t = xs.front().dtype();
  for (const T& x : xs) t = promote_types(t, x.dtype());
  std::vector<T> cast_xs;
  for (const T& x : xs) cast_xs.push_back(detail::as_dtype(x, t));
  return Prims<T>::concat(cast_xs, axis);
}
/// concat of a braced list: `st::concat({a, b, c}, 1)`.
template <Diffable T>
T concat(std::initializer_list<T> xs, int64_t axis) {
  return concat(std::vector<T>(xs), axis);
}
/// Joins tensors of one shape along a new axis at `axis` (ShapeError when shapes differ,
/// ValueError for an empty list). Example: `st::stack({a, b}, 0)` gives [2, ...].
template <Diffable T>
T stack(const std::vector<T>& xs, int64_t axis) {
  if (xs.empty()) detail::fail<ValueError>("stack", "needs at least one tensor");
  std::vector<T> parts;
  for (const T& x : xs) {
    if (x.shape() != xs.front().shape()) {
      detail::fail<ShapeError>("stack", "shapes ", xs.front().shape(), " and ", x.shape(),
                               " differ");
    }
    parts.push_back(unsqueeze(x, axis < 0 ? axis + x.shape().ndim() + 1 : axis));
  }
  return concat(parts, axis < 0 ? axis + xs.front().shape().ndim() + 1 : axis);
}
/// stack of a braced list: `st::stack({a, b}, -1)`.
template <Diffable T>
T stack(std::initializer_list<T> xs, int64_t axis) {
  return stack(std::vector<T>(xs), axis);
}
/// Splits along axis into views of the given sizes, which must add up to the axis size
/// (ShapeError otherwise; ValueError for a negative size). Example:
/// `auto parts = st::split(x, {2, 3}, 1);`
template <Diffable T>
std::vector<T> split(const T& x, const std::vector<int64_t>& sizes, int64_t axis) {
  axis = normalize_axis(axis, x.shape(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) detail::fail<ValueError>("split", "negative size ", s);
    total += s;
  }
  if (total != x.shape()[std::size_t(axis)]) {
    detail::fail<ShapeError>("split", "sizes add up to ", total, " but axis ", axis, " of ",
                             x.shape(), " has ", x.shape()[std::size_t(axis)]);
  }
  std::vector<T> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, axis, at, at + s));
    at += s;
  }
  return out;
}

// --- contraction ---------------------------------------------------------------------
/// Matrix product (numpy.matmul): [..., m, k] x [..., k, n] -> [..., m, n]. 1-D operands
/// become a row / column and lose that dim again; batch dims broadcast; dtypes promote.
/// Throws ShapeError for rank 0 or mismatched k. Example: `st::matmul(x, w)`.
template <class A, class B>
requires detail::Operands<A, B> &&
    (!Scalar<A>)&&(!Scalar<B>)common_level_t<A, B> matmul(const A& a, const B& b) {
  using R = common_level_t<A, B>;
  R x = lift<R>(a), y = lift<R>(b);
  if (x.shape().ndim() == 0 || y.shape().ndim() == 0) {
    detail::fail<ShapeError>("matmul", "operands need rank >= 1, got shapes ", x.shape(), " and ",
                             y.shape());
  }
  const DType t = promote_types(x.dtype(), y.dtype());
  x = detail::as_dtype(x, t);
  y = detail::as_dtype(y, t);
  const bool vec_a = x.shape().ndim() == 1, vec_b = y.shape().ndim() == 1;
  if (vec_a) x = unsqueeze(x, 0);
  if (vec_b) y = unsqueeze(y, 1);
  R out = Prims<R>::matmul(x, y);
  if (vec_b) out = squeeze(out, -1);
  if (vec_a) out = squeeze(out, vec_b ? -1 : -2);
  return out;
}
/// Inner product of two vectors (a 0-d tensor); matmul otherwise. Example: `st::dot(u, v)`.
template <class A, class B>
requires detail::Operands<A, B> &&
    (!Scalar<A>)&&(!Scalar<B>)common_level_t<A, B> dot(const A& a, const B& b) {
  return matmul(a, b);
}

// --- construction helpers -------------------------------------------------------------
/// Integer positions idx (any shape, i32 or i64) as one-hot rows of length n: shape
/// idx.shape() + [n], a plain constant. Throws IndexError for a position outside [0, n).
/// Example: `st::one_hot(labels, 10)`.
Tensor one_hot(const Tensor& idx, int64_t n, DType dtype = f32);
/// x with the elements above diagonal k set to zero, over the last two axes (numpy.tril;
/// k > 0 keeps diagonals above). Throws ShapeError for rank < 2. Example: `st::tril(m)`.
template <Diffable T>
T tril(const T& x, int64_t k = 0);
/// x with the elements below diagonal k set to zero, over the last two axes (numpy.triu).
/// Throws ShapeError for rank < 2. Example: `st::triu(m, 1)`.
template <Diffable T>
T triu(const T& x, int64_t k = 0);

namespace detail {
/// A [rows, cols] bool mask: col - row <= k (tril) or >= k (triu).
Tensor band_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device);
}  // namespace detail

template <Diffable T>
T tril(const T& x, int64_t k) {
  const int64_t n = x.shape().ndim();
  if (n < 2) detail::fail<ShapeError>("tril", "needs rank >= 2, got shape ", x.shape());
  const Tensor m = detail::band_mask(x.shape()[n - 2], x.shape()[n - 1], k, true, x.device());
  return where(m, x, 0);
}
template <Diffable T>
T triu(const T& x, int64_t k) {
  const int64_t n = x.shape().ndim();
  if (n < 2) detail::fail<ShapeError>("triu", "needs rank >= 2, got shape ", x.shape());
  const Tensor m = detail::band_mask(x.shape()[n - 2], x.shape()[n - 1], k, false, x.device());
  return where(m, x, 0);
}

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::exp() const {
  return strata::exp(self());
}
template <class D>
D Ops<D>::log() const {
  return strata::log(self());
}
template <class D>
D Ops<D>::sin() const {
  return strata::sin(self());
}
template <class D>
D Ops<D>::cos() const {
  return strata::cos(self());
}
template <class D>
D Ops<D>::sqrt() const {
  return strata::sqrt(self());
}
template <class D>
D Ops<D>::tanh() const {
  return strata::tanh(self());
}
template <class D>
D Ops<D>::abs() const {
  return strata::abs(self());
}
template <class D>
D Ops<D>::sign() const {
  return strata::sign(self());
}
template <class D>
D Ops<D>::sigmoid() const {
  return strata::sigmoid(self());
}
template <class D>
D Ops<D>::relu() const {
  return strata::relu(self());
}
template <class D>
D Ops<D>::gelu() const {
  return strata::gelu(self());
}
template <class D>
D Ops<D>::silu() const {
  return strata::silu(self());
}
template <class D>
D Ops<D>::softplus() const {
  return strata::softplus(self());
}
template <class D>
D Ops<D>::norm() const {
  return strata::norm(self());
}
template <class D>
D Ops<D>::flatten() const {
  return strata::flatten(self());
}
template <class D>
D Ops<D>::sum(const Shape& axes, bool keepdims) const {
  return strata::sum(self(), axes, keepdims);
}
template <class D>
D Ops<D>::mean(const Shape& axes, bool keepdims) const {
  return strata::mean(self(), axes, keepdims);
}
template <class D>
D Ops<D>::max(const Shape& axes, bool keepdims) const {
  return strata::max(self(), axes, keepdims);
}
template <class D>
D Ops<D>::min(const Shape& axes, bool keepdims) const {
  return strata::min(self(), axes, keepdims);
}
template <class D>
D Ops<D>::var(const Shape& axes, bool keepdims) const {
  return strata::var(self(), axes, keepdims);
}
template <class D>
D Ops<D>::std(const Shape& axes, bool keepdims) const {
  return strata::std(self(), axes, keepdims);
}
template <class D>
D Ops<D>::logsumexp(const Shape& axes, bool keepdims) const {
  return strata::logsumexp(self(), axes, keepdims);
}

// The one-axis reductions and argmax/argmin as methods.
template <class D>
D Ops<D>::norm(const Shape& axes, bool keepdims) const {
  return strata::norm(self(), axes, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::sum(I axis, bool keepdims) const {
  return strata::sum(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::mean(I axis, bool keepdims) const {
  return strata::mean(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::max(I axis, bool keepdims) const {
  return strata::max(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::min(I axis, bool keepdims) const {
  return strata::min(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::var(I axis, bool keepdims) const {
  return strata::var(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::std(I axis, bool keepdims) const {
  return strata::std(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::norm(I axis, bool keepdims) const {
  return strata::norm(self(), axis, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::logsumexp(I axis, bool keepdims) const {
  return strata::logsumexp(self(), axis, keepdims);
}
template <class D>
D Ops<D>::argmax(int64_t axis, bool keepdims) const {
  return strata::argmax(self(), axis, keepdims);
}
template <class D>
D Ops<D>::argmin(int64_t axis, bool keepdims) const {
  return strata::argmin(self(), axis, keepdims);
}

template <class D>
D Ops<D>::pow(double exponent) const {
  return strata::pow(self(), exponent);
}
template <class D>
D Ops<D>::clamp(double lo, double hi) const {
  return strata::clamp(self(), lo, hi);
}
template <class D>
D Ops<D>::softmax(int64_t axis) const {
  return strata::softmax(self(), axis);
}
template <class D>
D Ops<D>::log_softmax(int64_t axis) const {
  return strata::log_softmax(self(), axis);
}
template <class D>
D Ops<D>::reshape(const Shape& shape) const {
  return strata::reshape(self(), shape);
}
template <class D>
D Ops<D>::permute(const Shape& dims) const {
  return strata::permute(self(), dims);
}
template <class D>
D Ops<D>::transpose(int64_t a, int64_t b) const {
  return strata::transpose(self(), a, b);
}
template <class D>
D Ops<D>::squeeze(int64_t axis) const {
  return strata::squeeze(self(), axis);
}
template <class D>
D Ops<D>::unsqueeze(int64_t axis) const {
  return strata::unsqueeze(self(), axis);
}
template <class D>
D Ops<D>::expand(const Shape& shape) const {
  return strata::expand(self(), shape);
}
template <class D>
D Ops<D>::flip(int64_t axis) const {
  return strata::flip(self(), axis);
}
template <class D>
D Ops<D>::cast(DType dtype) const {
  return strata::cast(self(), dtype);
}
template <class D>
D Ops<D>::matmul(const D& other) const {
  return strata::matmul(self(), other);
}
template <class D>
D Ops<D>::dot(const D& other) const {
  return strata::dot(self(), other);
}

}  // namespace strata

// The indexing ops and their Ops methods (index.hpp includes this header first).
#include "diff/index.hpp"
