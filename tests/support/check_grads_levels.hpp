// SPDX-License-Identifier: MIT
#pragma once
/// check_grads' machinery (support/check_grads.hpp): the levels of the AD stack a check of
/// order <= 3 reaches, and the tested function type-erased at each of them, so that the
/// derived functions and the checks compile once per argument count, not once per lambda.
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include <strata.hpp>

namespace strata::testing::detail_cg {

template <std::size_t N>
using Args = std::array<Tensor, N>;

// --- the levels of the AD stack, and f type-erased at each of them ---------------
// The user's generic f is instantiated once at each level a check of order <= 3
// can reach; the derived functions (jvp_of, vjp_of) and the checks themselves are
// then ordinary functions over these tables, compiled once per argument count
// rather than once per tested lambda.

template <class Tuple>
struct raise;
template <class... Us>
struct raise<std::tuple<Us...>> {
  using type = std::tuple<Forward<Us>..., Reverse<Us>...>;
};
using Level0 = std::tuple<Tensor>;
using Level1 = raise<Level0>::type;
using Level2 = raise<Level1>::type;
using Level3 = raise<Level2>::type;
using Levels = decltype(std::tuple_cat(std::declval<Level0>(), std::declval<Level1>(),
                                       std::declval<Level2>(), std::declval<Level3>()));

/// How many dual types wrap Tensor in U.
template <class U>
struct depth : std::integral_constant<int, 0> {};
template <class T>
struct depth<Forward<T>> : std::integral_constant<int, depth<T>::value + 1> {};
template <class T>
struct depth<Reverse<T>> : std::integral_constant<int, depth<T>::value + 1> {};

template <class U, std::size_t N>
using Fn = std::function<U(const std::array<U, N>&)>;

/// One N-argument function at every level of Levels (empty where not reachable).
template <std::size_t N, class L = Levels>
struct Table;
template <std::size_t N, class... Us>
struct Table<N, std::tuple<Us...>> {
  std::tuple<Fn<Us, N>...> fns;
  template <class U>
  Fn<U, N>& at() {
    return std::get<Fn<U, N>>(fns);
  }
  template <class U>
  const Fn<U, N>& at() const {
    return std::get<Fn<U, N>>(fns);
  }
  /// Calls visit(std::type_identity<U>{}) for every level U.
  template <class V>
  static void each(V&& visit) {
    (visit(std::type_identity<Us>{}), ...);
  }
};
template <std::size_t N>
using TablePtr = std::shared_ptr<const Table<N>>;

/// The function at level U, or an error when the checks went deeper than the order checked.
template <class U, std::size_t N>
const Fn<U, N>& level(const Table<N>& t) {
  const Fn<U, N>& fn = t.template at<U>();
  if (!fn) throw std::logic_error("check_grads: derivative deeper than the order checked");
  return fn;
}

/// f at every level of depth <= max_depth (its result lifted to the level of its arguments);
/// the deeper levels stay empty, and f is not instantiated there.
template <std::size_t N, int max_depth, class F>
TablePtr<N> erase(const F& f) {
  auto t = std::make_shared<Table<N>>();
  Table<N>::each([&](auto id) {
    using U = typename decltype(id)::type;
    if constexpr (depth<U>::value <= max_depth) {
      t->template at<U>() = [f](const std::array<U, N>& xs) -> U {
        auto y = std::apply(f, xs);
        if constexpr (std::is_same_v<decltype(y), U>) {
          return y;
        } else {
          return lift<U>(y);
        }
      };
    }
  });
  return t;
}

/// The plain tensors as constants of level U.
template <class U, std::size_t N>
std::array<U, N> lift_all(const Args<N>& ts) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<U, N>{Prims<U>::constant(ts[I])...};
  }
  (std::make_index_sequence<N>{});
}

}  // namespace strata::testing::detail_cg
