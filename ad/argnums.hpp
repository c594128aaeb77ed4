// SPDX-License-Identifier: MIT
#pragma once
/// st::argnums: which arguments a transform differentiates (JAX's `argnums`).
///
/// `st::jacrev(f, st::argnums<1>, x, y)` differentiates f with respect to y
/// only; x is passed to f as a constant of the same level. With one index the
/// result is that argument's derivative, with several a std::tuple in the
/// order given. Without argnums every argument is differentiated.
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ad/tree.hpp"

namespace strata {

namespace detail {
/// Whether the indices I... are pairwise distinct.
template <int... I>
constexpr bool distinct_indices() {
  constexpr int idx[] = {I...};
  for (std::size_t a = 0; a < sizeof...(I); ++a) {
    for (std::size_t b = a + 1; b < sizeof...(I); ++b) {
      if (idx[a] == idx[b]) return false;
    }
  }
  return true;
}
}  // namespace detail

/// The choice of arguments to differentiate, as a type: the positions I... (0-based, distinct,
/// at least one) in the order the results come back. Spelled through st::argnums.
template <int... I>
struct Argnums {
  static_assert(sizeof...(I) > 0, "strata: st::argnums needs at least one argument index");
  static_assert(((I >= 0) && ...), "strata: st::argnums: an argument index is negative");
  static_assert(detail::distinct_indices<I...>(),
                "strata: st::argnums: an argument index is repeated");
  /// The number of arguments chosen.
  static constexpr std::size_t size = sizeof...(I);
};

/// The arguments to differentiate, passed right after the function, as JAX's argnums:
/// `st::grad(f, st::argnums<0, 2>, x, y, z)` gives (df/dx, df/dz); y is a constant.
/// `st::jacfwd(f, st::argnums<1>)` is a function, like `st::jacfwd(f)`.
template <int... I>
inline constexpr Argnums<I...> argnums{};

namespace detail {

/// Whether X is an st::Argnums choice.
template <class X>
struct is_argnums : std::false_type {};
/// Argnums<I...> is one.
template <int... I>
struct is_argnums<Argnums<I...>> : std::true_type {};
/// Whether X (cv-ref removed) is an st::Argnums choice.
template <class X>
concept ArgnumsChoice = is_argnums<std::remove_cvref_t<X>>::value;

/// Argnums<0, 1, ..., N - 1>: every one of N arguments.
template <std::size_t N>
auto all_argnums() {
  return []<std::size_t... K>(std::index_sequence<K...>) { return Argnums<int(K)...>{}; }
  (std::make_index_sequence<N>{});
}
/// The type of all_argnums<N>().
template <std::size_t N>
using all_argnums_t = decltype(all_argnums<N>());

/// Whether argument K is one of I...
template <std::size_t K, int... I>
constexpr bool chosen(Argnums<I...>) {
  return ((std::size_t(I) == K) || ...);
}
/// What a choice Sel = Argnums<I...> allows, read from its indices alone (never completing
/// Argnums<I...>, whose own static_asserts report an invalid choice once).
template <class Sel>
struct argnums_traits;
/// The traits of Argnums<I...>.
template <int... I>
struct argnums_traits<Argnums<I...>> {
  /// Whether Argnums<I...> is well formed (indices present, non-negative, distinct).
  static constexpr bool valid = sizeof...(I) > 0 && ((I >= 0) && ...) && distinct_indices<I...>();
  /// Whether every index names one of n arguments.
  static constexpr bool in_range(std::size_t n) { return ((I >= 0 && std::size_t(I) < n) && ...); }
};

/// The highest level among the leaf types Ls (all must nest: a compile error otherwise).
template <class L, class... Ls>
struct highest_level {
  using type = L;  ///< the level
};
/// The highest level of A, B and the rest.
template <class A, class B, class... Ls>
struct highest_level<A, B, Ls...> : highest_level<common_level_t<A, B>, Ls...> {};
/// The level a transform runs at for arguments (trees) X...: the highest of their leaves'
/// (an argument of a lower level is lifted to it, as a value of an outer transform's level
/// would be).
template <class... X>
using level_t = typename highest_level<tree::leaf_t<X>...>::type;

}  // namespace detail
}  // namespace strata
