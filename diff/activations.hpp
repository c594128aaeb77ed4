// SPDX-License-Identifier: MIT
#pragma once
/// The activations: sigmoid, relu, gelu, silu and softplus elementwise, and
/// softmax and log_softmax along one axis, each written to stay finite (and its
/// derivative too) for any finite input; infinities in softmax and log_softmax
/// follow PyTorch and JAX (see softmax).
#include <cstdint>

#include "diff/comparison.hpp"
#include "diff/math.hpp"
#include "diff/statistics.hpp"

namespace strata {

/// Elementwise 1 / (1 + e^-x), PyTorch's formula: accurate in both tails (sigmoid(-40) is
/// 4.2e-18, not a difference from 1); where e^-x overflows the result is 0 and its
/// derivative 0. Same shape; integer and bool inputs give f32. Example: `st::sigmoid(logits)`.
template <Diffable T>
T sigmoid(const T& x) {
  return 1.0 / (exp(-detail::float_input(x)) + 1.0);
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
/// Elementwise log(1 + e^x), computed as max(x, 0) + log1p(e^-|x|): stable for any x and
/// accurate in the negative tail (softplus(-40) is 4.2e-18). Same shape; integer and bool
/// inputs give f32. Example: `st::softplus(x)`.
template <Diffable T>
T softplus(const T& x) {
  const T f = detail::float_input(x);
  return maximum(f, 0) + log1p(exp(-abs(f)));
}
/// exp(x) / sum(exp(x)) along `axis`, shifted by the max for stability; same shape as x, f32
/// for integer and bool inputs. Infinities follow PyTorch and JAX (the shift is the max even
/// where it is infinite): a slice along `axis` holding +inf, NaN, or only -inf is NaN in every
/// element (softmax([inf, 1]) is [nan, nan], softmax([-inf, -inf]) [nan, nan]); -inf
/// elements beside finite ones are 0. Throws IndexError for an axis out of range.
/// Example: `st::softmax(logits, -1)`.
template <Diffable T>
T softmax(const T& x, int64_t axis) {
  const T f = detail::float_input(x);
  const Shape ax = detail::checked_axes({axis}, f.shape(), "softmax");
  const T e = exp(f - detail::max_shift(f, ax, false));
  return e / sum(e, ax, true);
}
/// The log of softmax along `axis`, (x - m) - log(sum(exp(x - m))) for the max m: without
/// softmax's underflow. Same shape as x. Infinities as softmax's (PyTorch and JAX): a slice
/// holding +inf, NaN, or only -inf is NaN in every element; -inf elements beside finite ones
/// are -inf. Example: `st::log_softmax(logits, 1)`.
template <Diffable T>
T log_softmax(const T& x, int64_t axis) {
  const T f = detail::float_input(x);
  const Shape ax = detail::checked_axes({axis}, f.shape(), "log_softmax");
  const T d = f - detail::max_shift(f, ax, false);
  return d - log(sum(exp(d), ax, true));
}

// --- the Ops mixin's methods ------------------------------------------------------------
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
D Ops<D>::softmax(int64_t axis) const {
  return strata::softmax(self(), axis);
}
template <class D>
D Ops<D>::log_softmax(int64_t axis) const {
  return strata::log_softmax(self(), axis);
}

}  // namespace strata
