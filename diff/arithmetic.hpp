// SPDX-License-Identifier: MIT
#pragma once
/// Broadcasting arithmetic on any mix of levels and C++ numbers: add, sub, mul,
/// div, pow, maximum, minimum, their operators and unary minus (the operand rule
/// is in diff/operands.hpp).
#include "diff/operands.hpp"

namespace strata {

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
/// result has their common level. Example: `st::maximum(x, 0.0)` (relu's values; its
/// derivative at 0 is 0.5, the tie split, where relu's is 0); NaN in either operand gives NaN.
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
  return detail::with_operands(a, b, "div", [](const auto& x, const auto& y) {
    return detail::float_binary(BinaryOp::div, x, y);
  });
}

/// Elementwise a ** b, broadcasting and promoting like add; integer and bool operands
/// are computed in f32. Example: `st::pow(x, 2.0)` squares; `st::pow(2.0, x)` is 2^x.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> pow(const A& a, const B& b) {
  return detail::with_operands(a, b, "pow", [](const auto& x, const auto& y) {
    return detail::float_binary(BinaryOp::pow, x, y);
  });
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

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::pow(double exponent) const {
  return strata::pow(self(), exponent);
}

}  // namespace strata
