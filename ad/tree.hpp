// SPDX-License-Identifier: MIT
#pragma once
/// Trees of tensors: transform arguments may be a Diffable leaf or any
/// nesting of std::vector, std::array, std::map<std::string, ...> and
/// std::tuple; results (gradients, tangents) come back in the same structure.
#include <array>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "diff/diffable.hpp"

/// Trees of tensors (vectors, arrays, string maps, tuples, nested) and maps over their leaves.
namespace strata::tree {

/// The leaf type of a tree (every leaf of one tree has one type).
template <class X>
struct leaf;
/// A Diffable value is its own leaf.
template <Diffable X>
struct leaf<X> {
  using type = X;  ///< the leaf type
};
/// The leaf type of a vector's elements.
template <class X>
struct leaf<std::vector<X>> : leaf<X> {};
/// The leaf type of an array's elements.
template <class X, std::size_t N>
struct leaf<std::array<X, N>> : leaf<X> {};
/// The leaf type of a map's values.
template <class X>
struct leaf<std::map<std::string, X>> : leaf<X> {};
/// The leaf type of a tuple's elements (all must agree; a compile error otherwise).
template <class X, class... Xs>
struct leaf<std::tuple<X, Xs...>> : leaf<X> {
  static_assert((std::is_same_v<typename leaf<X>::type, typename leaf<Xs>::type> && ...),
                "all leaves of a tree must have one type");
};
/// The leaf type of the tree type X: `leaf_t<std::map<std::string, Tensor>>` is Tensor.
template <class X>
using leaf_t = typename leaf<std::remove_cvref_t<X>>::type;

/// The same tree with every leaf replaced by fn(leaf) (maps keep their keys). A value that is
/// neither a tensor nor a container is passed to fn as it is.
/// Example: `st::tree::map([](const st::Tensor& t) { return t * 2.0; }, params)`.
template <class Fn, class X>
auto map(Fn&& fn, const X& x) {
  if constexpr (Diffable<X>) {
    return fn(x);
  } else if constexpr (
      requires { std::tuple_size<X>::value; } && !requires { x.size(); }) {
    return std::apply([&](const auto&... e) { return std::make_tuple(map(fn, e)...); }, x);
  } else if constexpr (requires { typename X::key_type; }) {
    std::map<std::string, decltype(map(fn, x.begin()->second))> out;
    for (const auto& [k, v] : x) out.emplace(k, map(fn, v));
    return out;
  } else if constexpr (requires { std::tuple_size<X>::value; }) {  // std::array
    using E = decltype(map(fn, x[0]));
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<E, sizeof...(I)>{map(fn, x[I])...};
    }
    (std::make_index_sequence<std::tuple_size<X>::value>{});
  } else if constexpr (requires {
                         x.size();
                         x[0];
                       }) {
    std::vector<decltype(map(fn, x[0]))> out;
    out.reserve(x.size());
    for (const auto& e : x) out.push_back(map(fn, e));
    return out;
  } else {
    return fn(x);  // not a tree: fn decides (a transform reports a result that is no tensor)
  }
}

/// Like map over two trees of the same structure: fn(leaf_of_x, leaf_of_y). Throws ShapeError
/// when the structures differ (a missing key, lists of different lengths).
template <class Fn, class X, class Y>
auto map2(Fn&& fn, const X& x, const Y& y) {
  if constexpr (Diffable<X>) {
    return fn(x, y);
  } else if constexpr (
      requires { std::tuple_size<X>::value; } && !requires { x.size(); }) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::make_tuple(map2(fn, std::get<I>(x), std::get<I>(y))...);
    }
    (std::make_index_sequence<std::tuple_size<X>::value>{});
  } else if constexpr (requires { typename X::key_type; }) {
    if (x.size() != y.size()) detail::fail<ShapeError>("tree", "maps of different sizes");
    std::map<std::string, decltype(map2(fn, x.begin()->second, y.begin()->second))> out;
    for (const auto& [k, v] : x) {
      auto it = y.find(k);
      if (it == y.end())
        detail::fail<ShapeError>("tree", "key '", k, "' missing in the second tree");
      out.emplace(k, map2(fn, v, it->second));
    }
    return out;
  } else if constexpr (requires { std::tuple_size<X>::value; }) {
    using E = decltype(map2(fn, x[0], y[0]));
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<E, sizeof...(I)>{map2(fn, x[I], y[I])...};
    }
    (std::make_index_sequence<std::tuple_size<X>::value>{});
  } else {
    if (x.size() != y.size()) {
      detail::fail<ShapeError>("tree", "lists of different lengths (", x.size(), " vs ", y.size(),
                               ")");
    }
    std::vector<decltype(map2(fn, x[0], y[0]))> out;
    for (std::size_t i = 0; i < x.size(); ++i) out.push_back(map2(fn, x[i], y[i]));
    return out;
  }
}

}  // namespace strata::tree
