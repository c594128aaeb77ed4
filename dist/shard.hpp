// SPDX-License-Identifier: MIT
#pragma once
/// Work split over the ranks along a batch axis (JAX's shard_map over one mesh axis):
/// st::dist::vmap(f, in_axes, out_axes) is st::vmap(f, in_axes, out_axes) where each rank
/// runs f on its own share of the examples and the results are gathered, so every rank gets
/// the whole result. Per-example gradients of a large batch, or the rows of a large
/// Jacobian (st::dist::jacrev, st::dist::hessian), spread over the processes.
///
/// Every rank passes the same arguments (the whole batch); rank r takes examples
/// [r k, (r + 1) k) with k = ceil(n / world_size()), the last ranks padding their share with
/// copies of the last example so that the gather moves equal blocks; the padding is dropped.
/// These are collectives: every rank makes the same calls.
///
///   auto per_example = st::dist::vmap(st::grad(loss), {st::none, 0, 0});
///   auto [gW, gX, gY] = per_example(W, X, Y);          // as st::vmap's, on every rank
///   st::Tensor J = st::dist::jacrev(f, x);             // as st::jacrev(f, x)
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ad/vmap.hpp"
#include "dist/process_group.hpp"

namespace strata::dist {

namespace detail {

/// Examples [first, first + k) of x along axis, the last example (n - 1) repeated past n.
Tensor shard_examples(const Tensor& x, int64_t axis, int64_t first, int64_t k, int64_t n);
/// Every rank's y, whose `axis` holds k examples each, gathered along axis in rank order,
/// the first n kept (an all_gather).
Tensor gather_examples(const Tensor& y, int64_t axis, int64_t n);
/// The rows [first, first + k) of the m x m identity (the last row repeated past m), shaped
/// [k, ...shape], of dtype.
Tensor identity_rows(int64_t first, int64_t k, int64_t m, const Shape& shape, DType dtype,
                     Device device);
/// axis normalised into [0, rank), or IndexError naming where.
int64_t normal_axis(std::string_view which, int64_t axis, const std::string& where,
                    const Shape& shape);

/// One call of st::dist::vmap(f, in_axes, out_axes) on xs.
template <class F, class... X>
auto sharded_vmap_call(const F& f, const AxisSpec& in_axes, const AxisSpec& out_axes,
                       const X&... xs) {
  static_assert((std::is_same_v<tree::leaf_t<X>, Tensor> && ...),
                "st::dist::vmap takes plain tensors (st::Tensor, or trees of them): it "
                "communicates results between processes, which no transform differentiates");
  using strata::detail::map_axes;
  auto spec = [&](std::size_t i) -> const AxisSpec& {
    return in_axes.is_leaf() ? in_axes : in_axes.items().at(i);
  };
  if (in_axes.is_list() && in_axes.items().size() != sizeof...(X)) {
    strata::detail::vmap_spec_mismatch(in_axes, "in_axes",
                                       std::to_string(sizeof...(X)) + " argument(s)");
  }
  // The number of examples, from the mapped inputs (st::vmap's checks and messages).
  std::vector<strata::detail::VmapSize> sizes;
  auto measure = [&](const Tensor& x, std::optional<int64_t> axis, const std::string& where) {
    if (axis) sizes.push_back({where, x.shape(), normal_axis("in_axes", *axis, where, x.shape())});
    return 0;
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (map_axes(measure, spec(I), xs, "argument " + std::to_string(I)), ...);
  }
  (std::index_sequence_for<X...>{});
  const int64_t n = strata::detail::vmap_batch_size(sizes);
  const int64_t world = world_size();
  const int64_t k = (n + world - 1) / world;
  const int64_t first = std::min<int64_t>(rank() * k, n);
  auto shard = [&](const Tensor& x, std::optional<int64_t> axis, const std::string& where) {
    if (!axis) return x;
    return shard_examples(x, normal_axis("in_axes", *axis, where, x.shape()), first, k, n);
  };
  auto local = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return strata::vmap(f, in_axes,
                        out_axes)(map_axes(shard, spec(I), xs, "argument " + std::to_string(I))...);
  }
  (std::index_sequence_for<X...>{});
  auto gather = [&](const Tensor& y, std::optional<int64_t> axis, const std::string& where) {
    if (!axis) return y;
    return gather_examples(y, normal_axis("out_axes", *axis, where, y.shape()), n);
  };
  return map_axes(gather, out_axes, local, "output");
}

}  // namespace detail

/// st::vmap(f, in_axes, out_axes) with the examples split over the ranks and the results
/// gathered: the same value on every rank as st::vmap's (up to the rounding of f's own
/// ops). Arguments are plain tensors or trees of them, the same on every rank; the errors
/// are st::vmap's, and DistError when a rank fails. Example:
/// `st::dist::vmap(st::grad(loss), {st::none, 0, 0})(W, X, Y)`.
template <class F>
auto vmap(F f, AxisSpec in_axes = 0, AxisSpec out_axes = 0) {
  return [f = std::move(f), in_axes = std::move(in_axes), out_axes = std::move(out_axes)](
             const auto&... xs) { return detail::sharded_vmap_call(f, in_axes, out_axes, xs...); };
}

/// st::jacrev(f, x) with the Jacobian's rows split over the ranks: each rank runs one
/// batched backward pass for its share of f's outputs and the rows are gathered, so every
/// rank gets the whole Jacobian, shaped f(x).shape() ++ x.shape(). f maps one float tensor
/// to one tensor; it is also called once on x itself, for its output's shape. Example:
/// `st::Tensor J = st::dist::jacrev([](const auto& x) { return st::sin(x) * x; }, x);`
template <class F>
Tensor jacrev(F f, const Tensor& x) {
  const Tensor y = f(x);
  const int64_t m = y.numel();
  Shape shape = y.shape();
  for (int64_t d : x.shape()) shape.push_back(d);
  if (m == 0 || x.numel() == 0) return zeros(shape, x.dtype(), x.device());
  const int64_t world = world_size();
  const int64_t k = (m + world - 1) / world;
  const int64_t first = std::min<int64_t>(rank() * k, m);
  const Tensor basis = detail::identity_rows(first, k, m, y.shape(), y.dtype(), y.device());
  // Row i of J is the gradient of <e_i, f(x)>; vmap runs the k of them as one pass.
  auto row = [&f](const auto& e, const auto& at) {
    return strata::grad([&](const auto& z) { return sum(e * f(z)); }, at);
  };
  const Tensor rows = strata::vmap(row, {0, none})(basis, x);
  return detail::gather_examples(rows, 0, m).reshape(shape);
}

/// The Hessian of f (one element out) at x, its rows split over the ranks:
/// st::dist::jacrev(st::grad(f), x), equal to st::hessian(f, x) up to rounding.
template <class F>
Tensor hessian(F f, const Tensor& x) {
  return jacrev(strata::grad(std::move(f)), x);
}

}  // namespace strata::dist
