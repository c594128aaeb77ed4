// SPDX-License-Identifier: MIT
#pragma once
/// st::vmap: a function of one example mapped over a batch of examples (jax.vmap).
///
/// `st::vmap(f, in_axes, out_axes)` is a function: called with arguments whose
/// mapped axes hold B examples, it runs f once on Batched<T> values (ad/batched.hpp)
/// whose shape() is one example's, and returns f's results with the batch axis put
/// back where out_axes says. No loop: every primitive runs once for the whole batch
/// through its batching rule. It composes with every transform in any order, because
/// Batched<T> is one more Diffable level: vmap(grad(f)) runs grad on Batched values
/// (per-example gradients), grad of a function that calls vmap runs vmap on Reverse
/// values, and vmap(vmap(f)) nests two batch levels.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ad/jacobian.hpp"

namespace strata {

/// Where the examples are, for one argument (or result) of st::vmap, as jax.vmap's in_axes and
/// out_axes: an axis (negative counts from the end), st::none (not mapped: the same value
/// for every example), or one spec per element of a list, tuple or array, or per key of a
/// map, which may stop early: a leaf spec applies to every tensor below it (a tree prefix).
/// Example: `{st::none, 0, 0}`, `{0, {1, st::none}}`, `std::map<std::string,
/// st::AxisSpec>{{"w", st::none}, {"b", 0}}`.
class AxisSpec {
 public:
  /// Examples along `axis` of every tensor.
  AxisSpec(int axis) : axis_(axis) {}  // NOLINT(google-explicit-constructor): spelled `0`
  /// Examples along `axis` of every tensor.
  AxisSpec(int64_t axis) : axis_(axis) {}  // NOLINT(google-explicit-constructor)
  /// Not mapped: `st::none`.
  AxisSpec(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  /// An axis, or not mapped when empty.
  AxisSpec(std::optional<int64_t> axis) : axis_(axis) {}  // NOLINT(google-explicit-constructor)
  /// One spec per element of a list, tuple or array (or per argument, at the top).
  AxisSpec(std::initializer_list<AxisSpec> items) : kind_(Kind::list), items_(items) {}
  /// One spec per element of a list, tuple or array (or per argument, at the top).
  explicit AxisSpec(std::vector<AxisSpec> items) : kind_(Kind::list), items_(std::move(items)) {}
  /// One spec per key of a map.
  explicit AxisSpec(const std::map<std::string, AxisSpec>& keys);

  /// Whether this is an axis or st::none (not a list or map of specs).
  bool is_leaf() const { return kind_ == Kind::leaf; }
  /// Whether this is a list of specs.
  bool is_list() const { return kind_ == Kind::list; }
  /// The axis of a leaf spec; empty for st::none.
  std::optional<int64_t> axis() const { return axis_; }
  /// The specs of a list spec.
  const std::vector<AxisSpec>& items() const { return items_; }
  /// The spec for key `k` of a map spec (nullptr when absent).
  const AxisSpec* find(const std::string& k) const;
  /// The number of keys of a map spec.
  std::size_t num_keys() const { return keys_.size(); }
  /// The spec as written: `0`, `none`, `[none, 0]`, `{"b": 0}`.
  std::string str() const;

 private:
  enum class Kind { leaf, list, map };
  Kind kind_ = Kind::leaf;
  std::optional<int64_t> axis_;
  std::vector<AxisSpec> items_;
  std::vector<std::pair<std::string, AxisSpec>> keys_;
};

namespace detail {

/// The structure of spec does not fit the value at `where` (ValueError).
[[noreturn]] void vmap_spec_mismatch(const AxisSpec& spec, const std::string& where,
                                     const std::string& value);
/// An axis of in_axes or out_axes outside [-rank, rank) (IndexError).
[[noreturn]] void vmap_axis_range(std::string_view which, int64_t axis, const std::string& where,
                                  const Shape& shape, int64_t rank);
/// One mapped input: where it is, its shape, the axis and the number of examples along it.
struct VmapSize {
  std::string where;  ///< "argument 1" or "argument 1[\"w\"]"
  Shape shape;        ///< the argument's shape
  int64_t axis;       ///< the mapped axis (normalised)
};
/// The common number of examples of the mapped inputs (ShapeError when they differ,
/// ValueError when nothing is mapped).
int64_t vmap_batch_size(const std::vector<VmapSize>& sizes);
/// A batched output whose out_axes is st::none (ValueError).
[[noreturn]] void vmap_unmapped_output(const std::string& where);

/// Like tree::map over the tree x, with the spec (a prefix of x's structure) alongside:
/// fn(leaf, axis, where) at each leaf, `where` naming the leaf in messages.
template <class Fn, class X>
auto map_axes(Fn& fn, const AxisSpec& spec, const X& x, const std::string& where) {
  if constexpr (Diffable<X>) {
    if (!spec.is_leaf()) vmap_spec_mismatch(spec, where, "a tensor");
    return fn(x, spec.axis(), where);
  } else if constexpr (requires { std::tuple_size<X>::value; }) {
    constexpr std::size_t n = std::tuple_size<X>::value;
    if (spec.is_list() && spec.items().size() != n) {
      vmap_spec_mismatch(spec, where, "a tuple or array of " + std::to_string(n));
    }
    if (!spec.is_leaf() && !spec.is_list()) vmap_spec_mismatch(spec, where, "a tuple or array");
    auto item = [&](std::size_t i) -> const AxisSpec& {
      return spec.is_leaf() ? spec : spec.items()[i];
    };
    auto at = [&](std::size_t i) { return where + "[" + std::to_string(i) + "]"; };
    if constexpr (!requires { x.size(); }) {  // std::tuple, std::pair
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::make_tuple(map_axes(fn, item(I), std::get<I>(x), at(I))...);
      }
      (std::make_index_sequence<n>{});
    } else {  // std::array
      using E = decltype(map_axes(fn, spec, x[0], where));
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<E, n>{map_axes(fn, item(I), x[I], at(I))...};
      }
      (std::make_index_sequence<n>{});
    }
  } else if constexpr (requires { typename X::key_type; }) {
    if (!spec.is_leaf()) {
      bool same = !spec.is_list() && spec.num_keys() == x.size();
      for (const auto& kv : x) same = same && spec.find(kv.first) != nullptr;
      if (!same) vmap_spec_mismatch(spec, where, "a map of " + std::to_string(x.size()) + " keys");
    }
    std::map<std::string, decltype(map_axes(fn, spec, x.begin()->second, where))> out;
    for (const auto& [k, v] : x) {
      out.emplace(
          k, map_axes(fn, spec.is_leaf() ? spec : *spec.find(k), v, where + "[\"" + k + "\"]"));
    }
    return out;
  } else {
    if (!spec.is_leaf() && !(spec.is_list() && spec.items().size() == x.size())) {
      vmap_spec_mismatch(spec, where, "a list of " + std::to_string(x.size()));
    }
    std::vector<decltype(map_axes(fn, spec, x[0], where))> out;
    out.reserve(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      out.push_back(map_axes(fn, spec.is_leaf() ? spec : spec.items()[i], x[i],
                             where + "[" + std::to_string(i) + "]"));
    }
    return out;
  }
}

/// The permutation of a rank-n tensor that moves axis `from` to position `to`.
Shape move_axis(int64_t n, int64_t from, int64_t to);

/// One call of vmap(f, in_axes, out_axes) on the arguments xs.
template <class F, class... X>
auto vmap_call(const F& f, const AxisSpec& in_axes, const AxisSpec& out_axes, const X&... xs) {
  static_assert(sizeof...(X) > 0, "st::vmap: the function needs at least one argument");
  using T = level_t<X...>;
  using B = Batched<T>;
  constexpr std::size_t nargs = sizeof...(X);
  if (in_axes.is_list() && in_axes.items().size() != nargs) {
    vmap_spec_mismatch(in_axes, "in_axes", std::to_string(nargs) + " argument(s)");
  }
  if (!in_axes.is_leaf() && !in_axes.is_list()) {
    vmap_spec_mismatch(in_axes, "in_axes", std::to_string(nargs) + " argument(s)");
  }
  const uint64_t tag = new_batch_tag();
  std::vector<VmapSize> sizes;
  auto wrap = [&](const auto& leaf, std::optional<int64_t> axis, const std::string& where) {
    const T v = lift<T>(leaf);
    if (!axis) return B(v);
    const int64_t r = v.ndim();
    if (*axis < -r || *axis >= r) vmap_axis_range("in_axes", *axis, where, v.shape(), r);
    const int64_t a = *axis < 0 ? *axis + r : *axis;
    sizes.push_back({where, v.shape(), a});
    return B(a == 0 ? v : Prims<T>::permute(v, move_axis(r, a, 0)), true, tag);
  };
  auto args = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(map_axes(wrap, in_axes.is_leaf() ? in_axes : in_axes.items()[I], xs,
                                    "argument " + std::to_string(I))...);
  }
  (std::index_sequence_for<X...>{});
  const int64_t n = vmap_batch_size(sizes);
  auto&& ys = std::apply(
      [&](const auto&... a) -> decltype(auto) { return call_function<B>(f, a...); }, args);
  auto unwrap = [&](const auto& y, std::optional<int64_t> axis, const std::string& where) {
    const B yb = as_level<B>(y, "vmap");
    if (yb.batched() && yb.tag() != tag) mixed_batches("vmap");
    if (!axis) {
      if (yb.batched()) vmap_unmapped_output(where);
      return yb.value();
    }
    const int64_t r = yb.ndim() + 1;
    if (*axis < -r || *axis >= r) vmap_axis_range("out_axes", *axis, where, yb.shape(), r);
    const int64_t a = *axis < 0 ? *axis + r : *axis;
    const T v = yb.as_batch(n);
    return a == 0 ? v : Prims<T>::permute(v, move_axis(r, 0, a));
  };
  return map_axes(unwrap, out_axes, ys, "output");
}

}  // namespace detail

/// f mapped over a batch of examples, as jax.vmap: `st::vmap(f, in_axes, out_axes)(xs...)`
/// calls f once on values holding every example and equals stacking f(example i) along
/// out_axes, for the examples taken along in_axes. in_axes is one AxisSpec for every
/// argument or a list of one per argument (`{st::none, 0, 0}`: the first argument shared by
/// every example); out_axes likewise for f's results. Arguments and results may be trees
/// (ad/tree.hpp). Composes with every transform: `st::vmap(st::grad(loss), {st::none, 0,
/// 0})(W, X, Y)` gives per-example gradients. Throws ShapeError when mapped axes hold
/// different numbers of examples, IndexError for an axis out of range, ValueError when a spec
/// does not fit its argument's structure, when no argument is mapped, or when an output with
/// out_axes st::none differs between examples. Example: `st::vmap(f)(xs)` maps axis 0.
template <class F>
auto vmap(F f, AxisSpec in_axes = 0, AxisSpec out_axes = 0) {
  return [f = std::move(f), in_axes = std::move(in_axes), out_axes = std::move(out_axes)](
             const auto&... xs) { return detail::vmap_call(f, in_axes, out_axes, xs...); };
}

}  // namespace strata
