// SPDX-License-Identifier: MIT
#pragma once
/// Hessian-vector products: st::hvp, forward mode over reverse mode.
#include "ad/transforms.hpp"

namespace strata {

/// The Hessian of f (which returns one element) at x applied to v: H v, computed forward over
/// reverse (the jvp of the gradient), so it costs a small multiple of one gradient and never
/// forms H. x and v are tensors or trees of the same structure, shapes and dtypes
/// (ShapeError / DTypeError otherwise); the result has x's structure. Example:
/// `st::Tensor hv = st::hvp(loss, w, v);`, in a Newton-CG loop.
template <class F, class X, class V>
auto hvp(F f, const X& x, const V& v) {
  using T = tree::leaf_t<X>;
  const uint64_t tag = Forward<T>::new_tag();
  auto wrap = [&](const T& p, const auto& tangent) {
    const T t = lift<T>(tangent);
    detail::require_float_leaf(p.dtype(), "hvp");
    detail::require_matching_tangent(p.shape(), p.dtype(), t.shape(), t.dtype(), "hvp", "tangent");
    return Forward<T>(p, t, tag);
  };
  const auto g = grad(std::move(f), tree::map2(wrap, x, v));
  return tree::map(
      [&](const Forward<T>& gi) {
        if (gi.tangent() && gi.tag() != tag) detail::common_tag({tag, gi.tag()});  // throws
        return gi.tangent() ? *gi.tangent() : zeros_like(gi.primal());
      },
      g);
}

/// hvp as a function: st::hvp(f)(x, v) is st::hvp(f, x, v).
template <class F>
auto hvp(F f) {
  return [f](const auto& x, const auto& v) { return hvp(f, x, v); };
}

}  // namespace strata
