// SPDX-License-Identifier: MIT
#pragma once
/// The elementwise math functions: exp, log, sin, cos, sqrt, tanh, log1p, expm1 and
/// erf (float; integer and bool inputs give f32), abs and sign (any numeric dtype),
/// and clamp.
#include "diff/arithmetic.hpp"
#include "diff/comparison.hpp"

namespace strata {

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

/// Elementwise log(1 + x), accurate for x near 0 (NaN below -1, -inf at -1). Same shape as x;
/// floating dtypes are kept, integer and bool inputs give f32. Example: `st::log1p(p)`.
template <Diffable T>
T log1p(const T& x) {
  return detail::float_unary(UnaryOp::log1p, x);
}
/// Elementwise e^x - 1, accurate for x near 0. Same shape as x; floating dtypes are kept,
/// integer and bool inputs give f32. Example: `st::expm1(x)`.
template <Diffable T>
T expm1(const T& x) {
  return detail::float_unary(UnaryOp::expm1, x);
}
/// Elementwise the error function erf(x) = 2/sqrt(pi) * integral of e^(-t^2) from 0 to x
/// (scipy.special.erf; exact GELU is x/2 * (1 + erf(x/sqrt(2)))). Same shape as x; floating
/// dtypes are kept, integer and bool inputs give f32. Example: `st::erf(x)`.
template <Diffable T>
T erf(const T& x) {
  return detail::float_unary(UnaryOp::erf, x);
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
/// Elementwise min(max(x, lo), hi) with the bounds C++ numbers, promoting as maximum and
/// minimum do (torch.clamp): an integer x with integer bounds stays integer, with floating
/// bounds becomes f32; a float x keeps its dtype. The derivative is 1 inside [lo, hi], the
/// bounds included (as torch.clamp: not maximum's even split of a tie), and 0 outside; NaN
/// stays NaN; lo > hi gives hi everywhere. Example: `st::clamp(p, 1e-7, 1.0 - 1e-7)`,
/// `st::clamp(labels, 0, 9)`.
template <Diffable T, class L, class H>
requires Scalar<L> && Scalar<H> T clamp(const T& x, L lo, H hi) {
  if (double(lo) > double(hi)) return clamp(x, hi, hi);  // min(max(x, lo), hi) is hi
  return where(x > hi, hi, where(x < lo, lo, x));
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
D Ops<D>::log1p() const {
  return strata::log1p(self());
}
template <class D>
D Ops<D>::expm1() const {
  return strata::expm1(self());
}
template <class D>
D Ops<D>::erf() const {
  return strata::erf(self());
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
D Ops<D>::clamp(double lo, double hi) const {
  return strata::clamp(self(), lo, hi);
}

}  // namespace strata
