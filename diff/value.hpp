// SPDX-License-Identifier: MIT
#pragma once
/// Reading the value of a traced tensor, for data-dependent control flow:
/// st::value_of(x) (the plain Tensor) and st::item<T>(x) (its single element).
///
/// Inside st::grad, st::jvp, st::hessian... a function sees dual values
/// (Forward<T>, Reverse<T>, nested), whose primal value is an ordinary
/// tensor. A loop that runs until a value crosses zero, or a branch on a
/// norm, reads that value here. Nothing read this way carries a derivative:
/// the branch taken is a constant of the derivative, as in PyTorch's
/// `x.item()`. Under st::vmap a value holds a batch of examples and has no
/// single value to branch on: both throw, and st::where chooses per example.
#include <string_view>

#include "diff/operands.hpp"

namespace strata {

namespace detail {
/// Throws: a batched value (st::vmap) has no single value for control flow.
[[noreturn]] inline void no_single_value(std::string_view op) {
  fail<ValueError>(op,
                   "the value holds a batch of examples (an argument mapped by st::vmap, or "
                   "the tangents or cotangents of jacfwd/jacrev), so it has no single value "
                   "to branch on; choose per example with st::where, or move the branch "
                   "outside the mapped function");
}
}  // namespace detail

/// The primal value of x as a plain st::Tensor, at every level (a Tensor itself, the value
/// inside Forward / Reverse, nested): for loops and branches that depend on data. It carries no
/// derivative. Throws ValueError for a value batched by st::vmap (no single value exists).
/// Example: `if (st::value_of(st::norm(v)).item<double>() < 1e-4) ...` (in a generic lambda
/// write `.template item<double>()`, or use st::item<double>(x)).
template <Diffable T>
Tensor value_of(const T& x) {
  if constexpr (!detail::holds_values<T>) (void)plain(x);  // the level's own message
  if (detail::mapped(x)) detail::no_single_value("value_of");
  return plain(x);
}

/// The single element of x's primal value as a C++ number E (double, float, int64_t, int32_t,
/// bool), at every level: PyTorch's `x.item()`, for data-dependent control flow. It carries no
/// derivative. This spelling also works in a generic lambda, where `x.item<double>()` cannot be
/// parsed (C++ needs `x.template item<double>()` there). Throws ValueError unless x has exactly
/// one element, or when x is batched by st::vmap. Example: `while (st::item<double>(y) > 0) ...`.
template <Element E, Diffable T>
E item(const T& x) {
  if constexpr (!detail::holds_values<T>) (void)plain(x);  // the level's own message
  if (detail::mapped(x)) detail::no_single_value("item");
  return plain(x).template item<E>();
}

}  // namespace strata
