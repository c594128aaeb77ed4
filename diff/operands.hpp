// SPDX-License-Identifier: MIT
#pragma once
/// How a composite meets its operands, and the constants of a level. Every
/// composite op (diff/ops.hpp lists the headers) is written once as a template
/// over Diffable, from the primitives of Prims<T> only, so it runs — and is
/// differentiable — at every level of the AD stack (Tensor, Forward<T>,
/// Reverse<T>, nested).
///
/// Mixed operands follow one rule: the lower level (a captured Tensor, a
/// value of an outer transform, a C++ number) is lifted to the higher as a
/// constant; shapes broadcast like NumPy; dtypes promote like PyTorch
/// (bool < i32 < i64 < f32 < f64; a 0-d tensor beside one with dims raises
/// the dtype only into a higher category, as torch.result_type), and a C++
/// number is weak: it takes the tensor's dtype, except that a floating-point
/// number with an integer or bool tensor gives f32.
#include <string_view>
#include <type_traits>
#include <utility>

#include "diff/tensor.hpp"

namespace strata {

namespace detail {

/// A constant T of `shape` whose every element is v (a zero-stride view: no memory).
template <Diffable T>
T filled(double v, const Shape& shape, DType dtype, Device device) {
  return Prims<T>::constant(Tensor(raw::full({}, v, dtype, device).expand(shape)));
}

// x itself (moved, not copied) when it already has the shape / dtype.
/// The C++ number v as a constant operand of `shape` and dtype t: filled, except for an
/// integer past 2^53 in an integer dtype, which the double that raw::full takes would round.
template <Diffable T, class S>
T scalar_constant(S v, const Shape& shape, DType t, Device device) {
  if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>) {
    constexpr int64_t kExact = int64_t{1} << 53;
    const auto wide = static_cast<int64_t>(v);
    if (is_integral(t) && (wide > kExact || wide < -kExact)) {
      const RawTensor c = raw::cast(raw::from_host(&wide, {}, DType::i64, device), t);
      return Prims<T>::constant(Tensor(c.expand(shape)));
    }
  }
  return filled<T>(double(v), shape, t, device);
}

template <Diffable T>
T broadcast_to(T x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return Prims<T>::expand(x, shape);
}

template <Diffable T>
T as_dtype(T x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return Prims<T>::cast(x, dtype);
}

/// Integers and bools become f32 before float math (as in PyTorch).
template <Diffable T>
T float_input(T x) {
  if (is_floating(x.dtype())) return x;
  return Prims<T>::cast(x, DType::f32);
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

/// The dtype two tensor operands compute in (torch.result_type): promote_types, except that
/// a 0-d tensor beside one with dims raises the dtype only into a higher category (bool <
/// integer < float): f32 [n] with f64 0-d gives f32, i64 [n] with f32 0-d gives f32.
inline DType result_type(DType a, bool a_0d, DType b, bool b_0d) {
  if (a_0d == b_0d) return promote_types(a, b);
  auto category = [](DType t) { return is_floating(t) ? 2 : is_integral(t) ? 1 : 0; };
  const DType dims = a_0d ? b : a, zero = a_0d ? a : b;
  return category(zero) > category(dims) ? promote_types(dims, zero) : dims;
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
    R y = lift<R>(b);
    const DType t = scalar_dtype<A>(y.dtype());
    R c = scalar_constant<R>(a, y.shape(), t, y.device());
    return std::pair<R, R>{std::move(c), as_dtype(std::move(y), t)};
  } else if constexpr (Scalar<B>) {
    R x = lift<R>(a);
    const DType t = scalar_dtype<B>(x.dtype());
    R c = scalar_constant<R>(b, x.shape(), t, x.device());
    return std::pair<R, R>{as_dtype(std::move(x), t), std::move(c)};
  } else {
    R x = lift<R>(a), y = lift<R>(b);
    const DType t = result_type(x.dtype(), x.shape().ndim() == 0, y.dtype(), y.shape().ndim() == 0);
    const Shape s = broadcast_shapes(x.shape(), y.shape(), op);
    return std::pair<R, R>{broadcast_to(as_dtype(std::move(x), t), s),
                           broadcast_to(as_dtype(std::move(y), t), s)};
  }
}

template <Diffable T>
T binary(BinaryOp op, const T& a, const T& b) {
  return Prims<T>::binary(op, a, b);
}

/// fn(x, y) on the operands that operands(a, b, op) makes, without its copies where a
/// and b are already at their common level, dtype and shape (a scalar then only becomes
/// a constant): for small tensors those copies were a good part of each op.
template <class A, class B, class Fn>
requires Operands<A, B> common_level_t<A, B> with_operands(const A& a, const B& b,
                                                           std::string_view op, Fn&& fn) {
  using R = common_level_t<A, B>;
  if constexpr (std::is_same_v<A, R> && std::is_same_v<B, R>) {
    if (a.dtype() == b.dtype() && a.shape() == b.shape()) return fn(a, b);
  } else if constexpr (std::is_same_v<A, R> && Scalar<B>) {
    if (scalar_dtype<B>(a.dtype()) == a.dtype()) {
      return fn(a, scalar_constant<R>(b, a.shape(), a.dtype(), a.device()));
    }
  } else if constexpr (Scalar<A> && std::is_same_v<B, R>) {
    if (scalar_dtype<A>(b.dtype()) == b.dtype()) {
      return fn(scalar_constant<R>(a, b.shape(), b.dtype(), b.device()), b);
    }
  }
  auto [x, y] = operands(a, b, op);
  return fn(x, y);
}

/// The broadcasting binary `op` on any mix of levels and scalars (add, sub, mul, ...).
template <class A, class B>
requires Operands<A, B> common_level_t<A, B> lifted_binary(BinaryOp op, const A& a, const B& b) {
  return with_operands(a, b, op_name(op),
                       [op](const auto& x, const auto& y) { return binary(op, x, y); });
}

// Values that are the same at every level (masks, comparisons, stop_gradient) are computed
// by the LevelHooks of each level (diff/diffable.hpp): on the plain values, except where a
// level below holds a batch of examples (st::vmap) and there is no single plain value; then
// the batching level computes them level by level.

/// Whether x holds a batch axis at some level (a batched value of st::vmap).
template <Diffable T>
bool mapped(const T& x) {
  return Prims<T>::mapped(x);
}

/// The plain tensor whose storage holds x's values (batch axes included), for the tape's
/// version checks.
template <Diffable T>
const Tensor& stored(const T& x) {
  return Prims<T>::stored(x);
}

/// Whether a level's values can be read (false for one that runs a function without values:
/// the sparsity tracer). Checks that read values (a singular pivot) skip such levels; the
/// transform that evaluates the function afterwards runs them.
template <class T>
inline constexpr bool holds_values = true;

/// x's values as a constant of its level (batch axes kept).
template <Diffable T>
T detach(const T& x) {
  return Prims<T>::detach(x);
}

/// The non-differentiable binary `op` (a comparison or logical op) on same-shape operands of
/// one level, as a constant of that level (batch axes kept).
template <Diffable T>
T constant_binary(BinaryOp op, const T& a, const T& b) {
  return Prims<T>::constant_binary(op, a, b);
}

/// The non-differentiable unary `op` (logical_not) as a constant of x's level.
template <Diffable T>
T constant_unary(UnaryOp op, const T& x) {
  return Prims<T>::constant_unary(op, x);
}

/// The comparison `op` on any mix of levels and scalars: a bool constant of their level.
template <class A, class B>
requires Operands<A, B> common_level_t<A, B> lifted_compare(BinaryOp op, const A& a, const B& b) {
  return with_operands(a, b, op_name(op),
                       [op](const auto& x, const auto& y) { return constant_binary(op, x, y); });
}

/// The binary `op` of float math (div, pow) on same-shape operands of one level; integer
/// and bool operands become f32 first.
template <Diffable T>
T float_binary(BinaryOp op, const T& a, const T& b) {
  if (is_floating(a.dtype()) && is_floating(b.dtype())) return binary(op, a, b);
  return binary(op, float_input(a), float_input(b));
}

/// The float unary `op` (exp, log, ...); integer and bool inputs become f32 first.
template <Diffable T>
T float_unary(UnaryOp op, const T& x) {
  if (is_floating(x.dtype())) return Prims<T>::unary(op, x);
  return Prims<T>::unary(op, float_input(x));
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
  return detail::detach(x);
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

}  // namespace strata
