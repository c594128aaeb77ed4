// SPDX-License-Identifier: MIT
#pragma once
/// The movement ops: views that only rewrite the layout (reshape when the strides
/// allow it, permute, expand, transpose, squeeze, unsqueeze, flatten, flip,
/// slice, windows), and pad, cast, concat, stack, split and fold.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "diff/arithmetic.hpp"
#include "diff/comparison.hpp"

namespace strata {

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
  axis = normalize_axis(axis, x.shape(), "flip");
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
  if (std::ssize(pads) != x.shape().ndim()) {  // here, so that under vmap it names the example's
    detail::fail<ShapeError>("pad", pads.size(),
                             " (before, after) pairs given for a tensor of "
                             "shape ",
                             x.shape(), " (needs one per axis)");
  }
  T out = Prims<T>::pad(x, pads);
  if (value == 0.0 && !std::signbit(value)) return out;  // -0.0 pads with -0.0
  // The border selected (not added: x + 0 would turn -0 into +0) by a mask padded like x.
  const Tensor inside(raw::pad(raw::full(x.shape(), 1.0, DType::b8, x.device()), pads, 0.0));
  return where(inside, out, detail::filled<T>(value, out.shape(), out.dtype(), out.device()));
}
/// The sliding windows of x over its trailing kernel.size() axes (numpy's sliding_window_view,
/// with a stride and a dilation): [..., S1..Sk] -> [..., O1..Ok, K1..Kk], element [..., o, k]
/// being x[..., o * stride + k * dilation], O = (S - dilation (K - 1) - 1) / stride + 1. A view:
/// overlapping windows share elements. stride and dilation take one entry per axis, one for
/// every axis, or none (1). Throws ShapeError for a window longer than its axis (pad first)
/// or x of too few axes, ValueError for a kernel, stride or dilation < 1. Example:
/// `st::windows(img, {3, 3}, {2})` gives img's 3 x 3 patches two apart.
template <Diffable T>
T windows(const T& x, const Shape& kernel, const Shape& stride = {}, const Shape& dilation = {}) {
  const int64_t k = kernel.ndim();
  return Prims<T>::windows(x, Window{kernel, detail::per_axis(stride, k, 1, "stride", "windows"),
                                     detail::per_axis(dilation, k, 1, "dilation", "windows")});
}
/// The transpose of windows (col2im; torch.nn.functional.fold's sum): y [..., O..., K...] ->
/// [..., spatial...], every element of y added back at its window position (overlaps sum,
/// uncovered positions are 0). The kernel is y's last spatial.size() dims; stride and dilation
/// as for windows, and O must be the windows' count over spatial (ShapeError otherwise).
/// `<fold(u), v> == <u, windows(v)>`. Example: `st::fold(patches, {28, 28}, {2})`.
template <Diffable T>
T fold(const T& y, const Shape& spatial, const Shape& stride = {}, const Shape& dilation = {}) {
  const int64_t k = spatial.ndim();
  if (k == 0 || y.shape().ndim() < 2 * k) {
    detail::fail<ShapeError>("fold", "windows of shape ", y.shape(), " for the spatial shape ",
                             spatial,
                             ": fold takes [..., O1..Ok, K1..Kk] with k >= 1 spatial axes");
  }
  const Shape& s = y.shape();
  const Shape kernel(s.begin() + (s.ndim() - k), s.end());
  return Prims<T>::fold(y,
                        Window{kernel, detail::per_axis(stride, k, 1, "stride", "fold"),
                               detail::per_axis(dilation, k, 1, "dilation", "fold")},
                        spatial);
}
/// x converted to `dtype` (x itself when it already has it); differentiable between float
/// dtypes. Example: `st::cast(i, st::f64)`.
template <Diffable T>
T cast(const T& x, DType dtype) {
  return detail::as_dtype(x, dtype);
}
/// Joins tensors along an existing axis, 0 by default (numpy.concatenate); the other dims must
/// agree (ShapeError) and dtypes promote. Throws ValueError for an empty list. Example:
/// `st::concat({a, b})` stacks rows, `st::concat({a, b}, 1)` columns.
template <Diffable T>
T concat(const std::vector<T>& xs, int64_t axis = 0) {
  if (xs.empty()) detail::fail<ValueError>("concat", "needs at least one tensor");
  DType t = xs.front().dtype();
  for (const T& x : xs) t = promote_types(t, x.dtype());
  std::vector<T> cast_xs;
  for (const T& x : xs) cast_xs.push_back(detail::as_dtype(x, t));
  return Prims<T>::concat(cast_xs, axis);
}
/// concat of a braced list: `st::concat({a, b, c}, 1)`, `st::concat({a, b})` (axis 0).
template <Diffable T>
T concat(std::initializer_list<T> xs, int64_t axis = 0) {
  return concat(std::vector<T>(xs), axis);
}
/// Joins tensors of one shape along a new axis at `axis`, 0 by default (numpy.stack;
/// ShapeError when shapes differ, ValueError for an empty list). Example: `st::stack({a, b})`
/// gives [2, ...], `st::stack({a, b}, -1)` [..., 2].
template <Diffable T>
T stack(const std::vector<T>& xs, int64_t axis = 0) {
  if (xs.empty()) detail::fail<ValueError>("stack", "needs at least one tensor");
  // The new axis is one of the result's: [-(rank + 1), rank].
  axis = normalize_axis(axis, xs.front().shape().ndim() + 1, "stack");
  std::vector<T> parts;
  for (const T& x : xs) {
    if (x.shape() != xs.front().shape()) {
      detail::fail<ShapeError>("stack", "shapes ", xs.front().shape(), " and ", x.shape(),
                               " differ");
    }
    parts.push_back(unsqueeze(x, axis));
  }
  return concat(parts, axis);
}
/// stack of a braced list: `st::stack({a, b}, -1)`, `st::stack({a, b})` (axis 0).
template <Diffable T>
T stack(std::initializer_list<T> xs, int64_t axis = 0) {
  return stack(std::vector<T>(xs), axis);
}
/// Splits along axis into views of the given sizes, which must add up to the axis size
/// (ShapeError otherwise; ValueError for a negative size). Example:
/// `auto parts = st::split(x, {2, 3}, 1);`
template <Diffable T>
std::vector<T> split(const T& x, const std::vector<int64_t>& sizes, int64_t axis) {
  axis = normalize_axis(axis, x.shape(), "split");
  const int64_t n = x.shape()[std::size_t(axis)];
  for (int64_t s : sizes) {
    if (s < 0) detail::fail<ValueError>("split", "negative size ", s);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    // Compared before adding: sizes near INT64_MAX must not wrap to a sum that fits.
    if (s > n - total) {
      detail::fail<ShapeError>("split", "sizes add up to more than axis ", axis, " of ", x.shape(),
                               " (", n, ")");
    }
    total += s;
  }
  if (total != n) {
    detail::fail<ShapeError>("split", "sizes add up to ", total, " but axis ", axis, " of ",
                             x.shape(), " has ", n);
  }
  std::vector<T> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, axis, at, at + s));
    at += s;
  }
  return out;
}

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::flatten() const {
  return strata::flatten(self());
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

}  // namespace strata
