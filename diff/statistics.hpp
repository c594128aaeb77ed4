// SPDX-License-Identifier: MIT
#pragma once
/// The reductions built from sum and max: mean, var, std, norm and logsumexp,
/// over a list of axes (every axis when empty) or one integer axis.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "diff/comparison.hpp"
#include "diff/math.hpp"
#include "diff/reductions.hpp"

namespace strata {

/// The mean over `axes` (every axis when empty), keeping them as size-1 dims when
/// keepdims; integer and bool inputs give f32. Throws IndexError for an axis out of
/// range. Example: `st::mean(x, {0})` averages the rows.
template <Diffable T>
T mean(const T& x, const Shape& axes = {}, bool keepdims = false) {
  const Shape ax = detail::checked_axes(axes, x.shape(), "mean");
  return sum(detail::float_input(x), ax, keepdims) / double(detail::reduced_count(x.shape(), ax));
}
/// The population variance over `axes` (ddof 0, like numpy.var and jnp.var; every axis
/// when empty); integer and bool inputs give f32. The corrected two-pass formula (Chan,
/// Golub and LeVeque): mean(d^2) - mean(d)^2 with d = x - mean(x), whose second term takes
/// out the rounding error of the mean, which the square would otherwise add (f32 data far
/// from 0: 1000 + small steps had var 0.3% off). Example: `st::var(x, {1})`.
template <Diffable T>
T var(const T& x, const Shape& axes = {}, bool keepdims = false) {
  detail::checked_axes(axes, x.shape(), "var");
  const T d = detail::float_input(x) - mean(x, axes, true);
  const T drift = mean(d, axes, keepdims);
  // >= 0 in exact arithmetic; rounding can leave -tiny where every d is the same (a where,
  // not a maximum, so the derivative at 0 is whole, as var's Hessian at constant x needs).
  const T v = mean(d * d, axes, keepdims) - drift * drift;
  return where(v < 0, 0, v);
}
namespace detail {
/// sqrt(s) of a sum of squares, with derivative 0 where s == 0 (the subgradient of
/// the norm at 0, not inf * 0 = NaN): a "double where", so the sqrt that runs at
/// s == 0 is sqrt(1), whose derivative is finite, and its cotangent there is zero.
template <Diffable T>
T norm_sqrt(const T& s) {
  const T zero = s == 0;
  return where(zero, 0, sqrt(where(zero, 1, s)));
}
}  // namespace detail
/// The population standard deviation, sqrt(var(x, axes, keepdims)). Where x is constant along
/// the axes its derivatives are 0 (a subgradient, as norm's at 0), not NaN.
/// Example: `st::std(x)`.
template <Diffable T>
T std(const T& x, const Shape& axes = {}, bool keepdims = false) {
  detail::checked_axes(axes, x.shape(), "std");
  return detail::norm_sqrt(var(x, axes, keepdims));
}

/// The Frobenius (2-) norm of all elements, a 0-d tensor; integer and bool inputs give
/// f32. Its gradient at x = 0 is 0 (a subgradient), not NaN. Example: `st::norm(g)`.
template <Diffable T>
T norm(const T& x) {
  const T f = detail::float_input(x);
  return detail::norm_sqrt(sum(f * f));
}
namespace detail {
/// The shift of logsumexp, softmax and log_softmax over (checked) axes: the max, kept, as a
/// constant (it changes neither the value nor the derivative), and 0 over an empty axis,
/// whose max does not exist. With `finite` (logsumexp) an infinite max shifts by 0 instead,
/// so that a slice holding +inf gives +inf and one of only -inf gives -inf; without it
/// (softmax, log_softmax) the infinite max shifts too, and such slices give NaN throughout
/// (inf - inf, -inf - -inf), as in PyTorch and JAX.
template <Diffable T>
T max_shift(const T& f, const Shape& ax, bool finite) {
  if (reduced_count(f.shape(), ax) == 0) {
    Shape kept = f.shape();
    for (int64_t a : ax) kept[std::size_t(a)] = 1;
    return filled<T>(0.0, kept, f.dtype(), f.device());
  }
  const T m = stop_gradient(max(f, ax, true));
  return finite ? where(abs(m) < INFINITY, m, 0) : m;
}
}  // namespace detail

/// log(sum(exp(x))) over `axes` (every axis when empty), shifted by the (constant) max for
/// stability, so large inputs do not overflow. Infinities follow PyTorch and JAX: a slice
/// holding +inf gives +inf, a slice of only -inf gives -inf (as over an empty axis: the log
/// of an empty sum), and a slice holding NaN gives NaN. Integer and bool inputs give f32.
/// Example: `st::logsumexp(logits, {1})`.
template <Diffable T>
T logsumexp(const T& x, const Shape& axes = {}, bool keepdims = false) {
  const T f = detail::float_input(x);
  const Shape ax = detail::checked_axes(axes, f.shape(), "logsumexp");
  const T shift = detail::max_shift(f, ax, true);
  const T out = log(sum(exp(f - shift), ax, true)) + shift;
  return keepdims ? out : sum(out, ax, false);  // drops the size-1 axes
}

// --- over one axis given as an integer (st::mean(x, 1), st::logsumexp(x, -1)) ---
/// mean over one axis; the same as st::mean(x, {axis}).
template <Diffable T, AxisIndex I>
T mean(const T& x, I axis, bool keepdims = false) {
  return mean(x, Shape{int64_t(axis)}, keepdims);
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
  return detail::norm_sqrt(sum(f * f, axes, keepdims));
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

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::norm() const {
  return strata::norm(self());
}
template <class D>
D Ops<D>::mean(const Shape& axes, bool keepdims) const {
  return strata::mean(self(), axes, keepdims);
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
template <class D>
D Ops<D>::norm(const Shape& axes, bool keepdims) const {
  return strata::norm(self(), axes, keepdims);
}
template <class D>
template <AxisIndex I>
D Ops<D>::mean(I axis, bool keepdims) const {
  return strata::mean(self(), axis, keepdims);
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

}  // namespace strata
