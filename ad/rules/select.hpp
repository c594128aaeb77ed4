// SPDX-License-Identifier: MIT
#pragma once
/// The rule of `where` with a condition that is a constant of the operands' level rather than
/// a plain tensor: the condition of a function under st::vmap, which differs per example
/// (it was computed from batched values) and so has no single plain value.
#include <string_view>

#include "ad/rules/residuals.hpp"

namespace strata {
namespace detail {
/// where(cond, a, b) on one level, cond a bool constant of that level (the level's select hook).
template <Diffable T>
T select(const T& cond, const T& a, const T& b) {
  return Prims<T>::select(cond, a, b);
}
}  // namespace detail

namespace rules {

/// The primitive `where(cond, a, b)` with cond a constant of T (batched under st::vmap),
/// linear in (a, b), exactly like rules::Where.
template <Diffable T>
struct Select {
  T cond;                               ///< where to take a, a bool constant of T
  static constexpr bool linear = true;  ///< its jvp is select(cond, ta, tb)

  /// "where", for errors.
  std::string_view name() const { return "where"; }
  /// The primitive on T.
  T operator()(const T& a, const T& b) const { return detail::select(cond, a, b); }
  /// The transpose for operand `which`: the cotangent where that operand was taken. The
  /// condition is a value computed inside the transform, so nothing is version-checked.
  Pullback<T> pullback(int which, const T&, const T&, const T&) const {
    if (which == 0) {
      return {[c = cond](const T& ct) { return detail::select(c, ct, zeros_like(ct)); }, {}};
    }
    return {[c = cond](const T& ct) { return detail::select(c, zeros_like(ct), ct); }, {}};
  }
};

}  // namespace rules
}  // namespace strata
