// SPDX-License-Identifier: MIT
#pragma once
/// jacfwd, jacrev and hessian: whole Jacobians and Hessians, for several
/// arguments and trees, with st::argnums to choose which (ad/argnums.hpp).
///
/// Results nest as JAX's: f's output tree outermost; at each output leaf,
/// one Jacobian per chosen argument (a tuple for several), each in its
/// argument's tree structure, a leaf's of shape out.shape ++ leaf.shape.
/// So jacfwd of f returning (a, b) with respect to (x, y) is
/// ((da/dx, da/dy), (db/dx, db/dy)), and hessian(f, x, y) the blocks
/// ((Hxx, Hxy), (Hyx, Hyy)), each of shape out.shape ++ x_i.shape ++ x_j.shape.
///
/// One pass each: jacfwd runs f once on Forward<Batched<T>> values whose
/// tangents hold every basis vector of every chosen leaf together; jacrev
/// records f once and runs one backward pass per output leaf with every
/// basis vector of that leaf as one batched cotangent.
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ad/transforms.hpp"

namespace strata {
namespace detail {

inline Shape concat_shapes(const Shape& a, const Shape& b) {
  Shape s = a;
  for (int64_t d : b) s.push_back(d);
  return s;
}

/// Rows [off, off + numel(shape)) of the [n, n] identity, as the columns of a [n, ...shape]
/// constant of level T: the tangents of one leaf among all the basis vectors of several
/// (the identity in its own rows, zero elsewhere). (Not from a plain value: under st::vmap
/// the tensor holds a batch of examples and has none.)
template <Diffable T>
T basis_block(int64_t n, int64_t off, const Shape& shape, DType dtype, Device device) {
  const int64_t k = checked_numel(shape, "basis");
  const Tensor rows = arange(0, double(n), 1, i64, device);
  const Tensor cols = arange(double(off), double(off + k), 1, i64, device);
  const Tensor eye = cast(eq(reshape(rows, {n, 1}), reshape(cols, {1, k})), dtype);
  return Prims<T>::constant(reshape(eye, concat_shapes({n}, shape)));
}

/// The permutation that moves axis 0 of a rank r + 1 tensor last.
inline Shape first_axis_last(int64_t r) {
  Shape dims;
  for (int64_t i = 1; i <= r; ++i) dims.push_back(i);
  dims.push_back(0);
  return dims;
}

}  // namespace detail

/// The Jacobian of f by forward mode, with respect to the arguments `st::argnums<I...>` chooses
/// (the others are passed as constants): one Jacobian for one index, a tuple in the order given
/// for several, each in its argument's tree structure, a leaf's of shape f(xs...).shape() ++
/// leaf.shape(): J[i..., j...] = d f[i...] / d leaf[j...]. f may return a tree of tensors; the
/// result is then that tree of the above. Chosen leaves must be float (DTypeError).
/// Example: `st::Tensor Jy = st::jacfwd(f, st::argnums<1>, x, y);`. One pass: f runs once on
/// Forward<Batched<T>> values whose tangents hold every basis vector of every chosen leaf
/// (ad/batched.hpp), so the primal is computed once and n jvps become batched ops.
template <class F, int... I, class X0, class... X>
auto jacfwd(F f, Argnums<I...>, const X0& x0, const X&... xs0) {
  using Sel = Argnums<I...>;
  using T = detail::level_t<X0, X...>;
  using B = Batched<T>;
  constexpr std::size_t nargs = 1 + sizeof...(X);
  if constexpr (!detail::check_argnums<Sel, nargs>()) {
    return detail::ill_formed<T>();
  } else {
    const auto xs = std::forward_as_tuple(x0, xs0...);
    // Each chosen leaf owns the rows [off, off + numel) of the n basis vectors.
    int64_t n = 0;
    auto place = [&](const auto& leaf) {
      detail::require_float_leaf(leaf.dtype(), "jacfwd");
      const int64_t off = n;
      n += checked_numel(leaf.shape(), "jacfwd");
      return off;
    };
    auto offsets_of = [&]<std::size_t K>() {
      if constexpr (detail::chosen<K>(Sel{})) {
        return tree::map(place, std::get<K>(xs));
      } else {
        return 0;  // not differentiated
      }
    };
    const auto offsets = [&]<std::size_t... K>(std::index_sequence<K...>) {
      return std::tuple{offsets_of.template operator()<K>()...};
    }
    (std::make_index_sequence<nargs>{});

    const uint64_t tag = Forward<B>::new_tag();
    auto variable = [&](const auto& leaf, int64_t off) {
      const T p = lift<T>(leaf);
      if (checked_numel(p.shape(), "jacfwd") == 0) return Forward<B>(B(p));
      const int64_t k = p.numel();
      const T basis = detail::basis_block<T>(n, off, p.shape(), p.dtype(), p.device());
      return Forward<B>(B(p), off == 0 && k == n ? B::identity(basis) : B(basis, true), tag);
    };
    auto constant = [](const auto& leaf) { return Forward<B>(B(lift<T>(leaf))); };
    auto wrap = [&]<std::size_t K>() {
      if constexpr (detail::chosen<K>(Sel{})) {
        return tree::map2(variable, std::get<K>(xs), std::get<K>(offsets));
      } else {
        return tree::map(constant, std::get<K>(xs));
      }
    };
    const auto args = [&]<std::size_t... K>(std::index_sequence<K...>) {
      return std::make_tuple(wrap.template operator()<K>()...);
    }
    (std::make_index_sequence<nargs>{});
    const auto ys = std::apply(
        [&](const auto&... a) { return detail::call_function<Forward<B>>(f, a...); }, args);

    // Each output leaf's tangent is [n, out...]: rows of one input leaf, with the input axis
    // put last, are that leaf's Jacobian.
    auto jacobians_of = [&](const auto& y_any) {
      const Forward<B> y = detail::as_level<Forward<B>>(y_any, "jacfwd");
      if (y.tangent() && y.tag() != tag) detail::common_tag({tag, y.tag()});  // throws
      const Shape out = y.shape();
      std::optional<T> t;
      if (n > 0 && y.tangent()) t = y.tangent()->as_batch(n);
      auto block = [&](const auto& leaf, int64_t off) -> T {
        const Shape shape = detail::concat_shapes(out, leaf.shape());
        if (!t || checked_numel(shape, "jacfwd") == 0) {
          return Prims<T>::constant(zeros(shape, leaf.dtype(), leaf.device()));
        }
        const int64_t k = checked_numel(leaf.shape(), "jacfwd");
        const T rows = off == 0 && k == n ? *t : Prims<T>::slice(*t, 0, off, off + k, 1);
        return Prims<T>::reshape(Prims<T>::permute(rows, detail::first_axis_last(out.ndim())),
                                 shape);
      };
      return detail::one_or_tuple(
          tree::map2(block, std::get<std::size_t(I)>(xs), std::get<std::size_t(I)>(offsets))...);
    };
    return tree::map(jacobians_of, ys);
  }
}

/// The Jacobian of f by forward mode with respect to every argument: one Jacobian for one
/// argument (a tensor's of shape f(x).shape() ++ x.shape(), J[i..., j...] = d f(x)[i...] /
/// d x[j...]), a tuple for several; trees give trees of Jacobians, and an f returning a tree
/// a tree of those (as st::jacfwd with st::argnums). Example: `st::jacfwd(f, x)`.
template <class F, class X0, class... X>
requires(!detail::ArgnumsChoice<X0>) auto jacfwd(F f, const X0& x0, const X&... xs) {
  return jacfwd(std::move(f), detail::all_argnums<1 + sizeof...(X)>(), x0, xs...);
}

/// The Jacobian of f by reverse mode, with respect to the arguments `st::argnums<I...>` chooses:
/// the same values and nesting as st::jacfwd (cheaper when the output is smaller than the
/// input). Example: `auto [Jx, Jz] = st::jacrev(f, st::argnums<0, 2>, x, y, z);`. f is recorded
/// once on Reverse<Batched<T>> values, and one backward pass per output leaf pulls back every
/// basis vector of that leaf at once.
template <class F, int... I, class X0, class... X>
auto jacrev(F f, Argnums<I...>, const X0& x0, const X&... xs) {
  using Sel = Argnums<I...>;
  using T = detail::level_t<X0, X...>;
  using B = Batched<T>;
  if constexpr (!detail::check_argnums<Sel, 1 + sizeof...(X)>()) {
    return detail::ill_formed<T>();
  } else {
    auto tape = std::make_shared<Tape<B>>();
    const auto args = detail::wrap_reverse<B, Sel>(tape, "jacrev", x0, xs...);
    const auto ys = std::apply(
        [&](const auto&... a) { return detail::call_function<Reverse<B>>(f, a...); }, args);
    auto jacobians_of = [&](const auto& y_any) {
      const Reverse<B> y = detail::recorded_output(y_any, tape, "jacrev");
      const Shape out = y.shape();
      const int64_t m = checked_numel(out, "jacrev");
      std::vector<std::optional<B>> ct;
      if (m > 0 && !y.is_constant()) {
        ct = tape->backward(y.id(),
                            B::identity(detail::basis_block<T>(m, 0, out, y.dtype(), y.device())));
      }
      // Each cotangent is [m, in...]: already out ++ in once reshaped.
      auto block = [&](const Reverse<B>& w) -> T {
        const Shape shape = detail::concat_shapes(out, w.shape());
        const std::size_t id = std::size_t(w.id());
        if (id >= ct.size() || !ct[id] || checked_numel(shape, "jacrev") == 0) {
          return Prims<T>::constant(zeros(shape, w.dtype(), w.device()));
        }
        return Prims<T>::reshape(ct[id]->as_batch(m), shape);
      };
      return detail::one_or_tuple(tree::map(block, std::get<std::size_t(I)>(args))...);
    };
    return tree::map(jacobians_of, ys);
  }
}

/// The Jacobian of f by reverse mode with respect to every argument: the same values and
/// nesting as st::jacfwd. Example: `st::jacrev(f, x)` (shape f(x).shape() ++ x.shape()),
/// `auto [Ja, Jb] = st::jacrev(f, a, b);`.
template <class F, class X0, class... X>
requires(!detail::ArgnumsChoice<X0>) auto jacrev(F f, const X0& x0, const X&... xs) {
  return jacrev(std::move(f), detail::all_argnums<1 + sizeof...(X)>(), x0, xs...);
}

/// jacfwd as a function: `st::jacfwd(st::jacrev(f))(x)` is the Hessian.
template <class F>
auto jacfwd(F f) {
  return [f](const auto&... xs) { return jacfwd(f, xs...); };
}
/// jacfwd with respect to the chosen arguments as a function:
/// `st::jacfwd(f, st::argnums<0, 1>)(x, y, z)`.
template <class F, int... I>
auto jacfwd(F f, Argnums<I...>) {
  return [f](const auto&... xs) { return jacfwd(f, Argnums<I...>{}, xs...); };
}
/// jacrev as a function: `st::jacrev(st::jacrev(f))(x)` is the Hessian too.
template <class F>
auto jacrev(F f) {
  return [f](const auto&... xs) { return jacrev(f, xs...); };
}
/// jacrev with respect to the chosen arguments as a function:
/// `st::vmap(st::jacrev(f, st::argnums<1>), {st::none, 0})(w, xs)`.
template <class F, int... I>
auto jacrev(F f, Argnums<I...>) {
  return [f](const auto&... xs) { return jacrev(f, Argnums<I...>{}, xs...); };
}

/// The Hessian of f with respect to the arguments `st::argnums<I...>` chooses, computed as
/// jacfwd(jacrev(f)), as JAX's and torch.func's hessian: f's output dims first, then the
/// argument's dims twice. For one index the argument's Hessian, a tensor's of shape
/// f(xs...).shape() ++ x.shape() ++ x.shape() (x.shape() ++ x.shape() when f returns a 0-d
/// value; [4, 3, 3] for f: [3] -> [4], H[i] the Hessian of f(x)[i]); for several, the
/// blocks as a tuple of tuples, H_ij = d2 f / dx_i dx_j of shape out ++ x_i.shape() ++
/// x_j.shape(). Trees of arguments give trees of blocks, and an f returning a tree a tree of
/// those (outermost), as st::jacfwd. Example: `auto [hx, hy] = st::hessian(f, st::argnums<0,
/// 1>, x, y);` (hx = (Hxx, Hxy)).
template <class F, int... I, class X0, class... X>
auto hessian(F f, Argnums<I...> sel, const X0& x0, const X&... xs) {
  return jacfwd(jacrev(std::move(f), sel), sel, x0, xs...);
}

/// The Hessian of f with respect to every argument, as jacfwd(jacrev(f)): for one float tensor
/// x, shape f(x).shape() ++ x.shape() ++ x.shape() (x.shape() ++ x.shape() for an f returning
/// a 0-d value, [1] ++ x.shape() ++ x.shape() for a [1] one, as JAX); for several, the blocks
/// ((Hxx, Hxy), (Hyx, Hyy)) as tuples. Example: `st::hessian(f, x)` for x of shape [n] and
/// f returning a 0-d value gives [n, n].
template <class F, class X0, class... X>
requires(!detail::ArgnumsChoice<X0>) auto hessian(F f, const X0& x0, const X&... xs) {
  return hessian(std::move(f), detail::all_argnums<1 + sizeof...(X)>(), x0, xs...);
}
/// hessian as a function: `st::hessian(f)(x)`.
template <class F>
auto hessian(F f) {
  return [f](const auto&... xs) { return hessian(f, xs...); };
}
/// hessian with respect to the chosen arguments as a function:
/// `st::hessian(f, st::argnums<0>)(x, y)`.
template <class F, int... I>
auto hessian(F f, Argnums<I...>) {
  return [f](const auto&... xs) { return hessian(f, Argnums<I...>{}, xs...); };
}

}  // namespace strata
