// SPDX-License-Identifier: MIT
#pragma once
/// The reductions sum, max and min over a list of axes (an empty list reduces
/// every axis, like JAX's axis=None) or one integer axis; argmax and argmin; and
/// sum_to, the transpose of broadcasting. mean, var, std, norm and logsumexp are
/// in diff/statistics.hpp.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "diff/arithmetic.hpp"

namespace strata {

namespace detail {

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
/// The minimum over `axes` (every axis when empty), through max with the order reversed
/// (so it shares max's derivative); same dtype as x, exact for every integer and bool.
/// Throws like max. Example: `st::min(x, {1}, true)`.
template <Diffable T>
T min(const T& x, const Shape& axes = {}, bool keepdims = false) {
  const Shape ax = detail::checked_axes(axes, x.shape(), "min");
  if (detail::reduced_count(x.shape(), ax) == 0) {
    detail::fail<ValueError>("min", "cannot reduce over an empty axis (shape ", x.shape(),
                             ", axes ", axes, ")");
  }
  if (is_floating(x.dtype())) return -max(-x, ax, keepdims);
  if (x.dtype() == DType::b8) {
    const T flipped = detail::constant_unary(UnaryOp::logical_not, x);
    return detail::constant_unary(UnaryOp::logical_not, max(flipped, ax, keepdims));
  }
  // -x - 1 (two's complement ~x, integer arithmetic wrapping) reverses the order with no
  // overflow, where -x overflows at the type's minimum.
  return -max(-x - 1, ax, keepdims) - 1;
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

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::sum(const Shape& axes, bool keepdims) const {
  return strata::sum(self(), axes, keepdims);
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
template <AxisIndex I>
D Ops<D>::sum(I axis, bool keepdims) const {
  return strata::sum(self(), axis, keepdims);
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
D Ops<D>::argmax(int64_t axis, bool keepdims) const {
  return strata::argmax(self(), axis, keepdims);
}
template <class D>
D Ops<D>::argmin(int64_t axis, bool keepdims) const {
  return strata::argmin(self(), axis, keepdims);
}

}  // namespace strata
