// SPDX-License-Identifier: MIT
#pragma once
/// Comparisons (eq, ne, lt, le, gt, ge and their operators) and logic (logical_not,
/// logical_and, logical_or): bool constants of the operands' level, never
/// differentiated. And where(cond, a, b), which selects between differentiable
/// operands by a plain condition.
#include "diff/operands.hpp"

namespace strata {

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

namespace detail {
/// x as bools: x itself when bool, else x != 0 (NaN counts as true, as in numpy).
template <Diffable T>
T truth(const T& x) {
  if (x.dtype() == DType::b8) return x;
  return constant_binary(BinaryOp::ne, x, filled<T>(0.0, x.shape(), x.dtype(), x.device()));
}
}  // namespace detail

/// Elementwise not, as a bool constant; any non-zero element counts as true.
/// Example: `st::logical_not(x > 0)`.
template <Diffable T>
T logical_not(const T& x) {
  return detail::constant_unary(UnaryOp::logical_not, detail::truth(x));
}
/// Elementwise a and b, as a bool constant; operands broadcast (ShapeError when they do
/// not) and non-zero counts as true. Example: `st::logical_and(x > 0, x < 1)`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> logical_and(const A& a, const B& b) {
  auto [x, y] = detail::operands(a, b, "logical_and");
  return detail::constant_binary(BinaryOp::logical_and, detail::truth(x), detail::truth(y));
}
/// Elementwise a or b, as a bool constant; operands broadcast (ShapeError when they do
/// not) and non-zero counts as true. Example: `st::logical_or(x < -1, x > 1)`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> logical_or(const A& a, const B& b) {
  auto [x, y] = detail::operands(a, b, "logical_or");
  return detail::constant_binary(BinaryOp::logical_or, detail::truth(x), detail::truth(y));
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
  if constexpr (contains_level<R, C>() && requires(const R& r) { Prims<R>::select(r, r, r); }) {
    // A condition that differs per example (st::vmap) has no plain value: it goes down the
    // levels as a constant of R, each level selecting with its own batch axes.
    if (detail::mapped(cond)) {
      const R c = lift<R>(cond);
      const Shape s = broadcast_shapes(c.shape(), x.shape(), "where");
      return Prims<R>::select(detail::broadcast_to(c, s), detail::broadcast_to(x, s),
                              detail::broadcast_to(y, s));
    }
  }
  const Tensor& c = plain(cond);
  const Shape s = broadcast_shapes(c.shape(), x.shape(), "where");
  return Prims<R>::where(detail::broadcast_to(c, s), detail::broadcast_to(x, s),
                         detail::broadcast_to(y, s));
}

}  // namespace strata
