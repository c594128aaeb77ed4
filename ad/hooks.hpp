// SPDX-License-Identifier: MIT
#pragma once
/// st::value_and_grad_with_hook: value_and_grad that hands each gradient to a callback as
/// soon as the backward pass has finished accumulating it.
///
/// The tape is walked from the output down; a leaf's cotangent is complete once the walk has
/// passed below the smallest node with an edge into it (Tape::LeafHook). For a network that
/// is right after the backward pass leaves the layer that uses the parameter, so the
/// gradients of the last layers are final long before the pass ends: a caller may start
/// work on them then (st::dist::DataParallel starts its all-reduces there, overlapping
/// communication with the rest of the pass, as PyTorch's DDP reducer does).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "ad/transforms.hpp"

namespace strata {

/// value_and_grad with respect to the arguments `st::argnums<I...>` chooses, calling
/// `on_final(index, gradient)` once for each of their leaves, during the backward pass, as
/// soon as that leaf's gradient is final. `index` counts the chosen leaves from 0, argument by
/// argument in argnums' order and, inside one, in st::tree::map's order (a map's keys sorted);
/// `gradient` is of level T (a zero tensor for a leaf the output does not depend on: every
/// leaf gets exactly one call, in the order the pass completes them). The results are
/// value_and_grad's. An exception from on_final ends the pass and propagates.
/// Example: `st::value_and_grad_with_hook(loss, [&](std::size_t k, const st::Tensor& g) {
/// send(k, g); }, st::argnums<0>, params, batch);`
template <class F, class H, int... I, class X0, class... X>
auto value_and_grad_with_hook(F f, H on_final, Argnums<I...>, const X0& x0, const X&... xs) {
  using Sel = Argnums<I...>;
  using T = detail::level_t<X0, X...>;
  if constexpr (!detail::check_argnums<Sel, 1 + sizeof...(X)>()) {
    return detail::ill_formed<std::pair<T, T>>();
  } else {
    auto [args, out] = detail::record<Sel>(f, "grad", x0, xs...);
    detail::require_gradient_output(out.shape(), out.dtype(), "grad");
    // The chosen leaves in index order, and each one's index by node id.
    std::vector<const Reverse<T>*> leaves;
    auto collect = [&](const Reverse<T>& w) {
      leaves.push_back(&w);
      return 0;
    };
    (tree::map(collect, std::get<std::size_t(I)>(args)), ...);
    std::vector<std::size_t> index_of;
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      const std::size_t id = std::size_t(leaves[k]->id());
      if (index_of.size() <= id) index_of.resize(id + 1, leaves.size());
      index_of[id] = k;
    }
    std::vector<std::optional<T>> ct;
    if (out.is_constant()) {
      for (std::size_t k = 0; k < leaves.size(); ++k) on_final(k, zeros_like(leaves[k]->primal()));
    } else {
      const typename Tape<T>::LeafHook hook = [&](int64_t leaf, const T* cotangent) {
        if (std::size_t(leaf) >= index_of.size() || index_of[std::size_t(leaf)] == leaves.size()) {
          return;  // a leaf of an argument argnums leaves out (never reached: a constant)
        }
        const std::size_t k = index_of[std::size_t(leaf)];
        if (cotangent) {
          on_final(k, *cotangent);
        } else {
          on_final(k, zeros_like(leaves[k]->primal()));
        }
      };
      ct = out.tape()->backward(out.id(), constant_like(out.primal(), 1.0), &hook);
    }
    auto grad_of = [&](const Reverse<T>& w) {
      const std::size_t id = std::size_t(w.id());
      return id < ct.size() && ct[id] ? *ct[id] : zeros_like(w.primal());
    };
    return std::pair{out.primal(),
                     detail::one_or_tuple(tree::map(grad_of, std::get<std::size_t(I)>(args))...)};
  }
}

/// value_and_grad_with_hook with respect to every argument.
/// Example: `auto [loss, g] = st::value_and_grad_with_hook(loss_fn, hook, params);`
template <class F, class H, class X0, class... X>
requires(!detail::ArgnumsChoice<X0>) auto value_and_grad_with_hook(F f, H on_final, const X0& x0,
                                                                   const X&... xs) {
  return value_and_grad_with_hook(std::move(f), std::move(on_final),
                                  detail::all_argnums<1 + sizeof...(X)>(), x0, xs...);
}

}  // namespace strata
