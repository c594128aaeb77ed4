// SPDX-License-Identifier: MIT
#pragma once
/// The transforms: jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian.
///
/// Each takes the user's function (any callable, typically a generic lambda)
/// and arguments that are Diffable values or trees of them (ad/tree.hpp).
/// A call owns its own tape or tag, so transforms keep no global state,
/// nest to any order and mix modes, and may run in several threads at once.
/// Every transform also has a function-returning form: st::grad(f) is a
/// callable, so st::grad(st::grad(f))(x) and st::hessian(f)(x) compose.
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ad/stacks.hpp"
#include "ad/tree.hpp"

namespace strata {
namespace detail {

/// The single argument itself, or a tuple of them.
template <class... Xs>
auto one_or_tuple(Xs&&... xs) {
  if constexpr (sizeof...(Xs) == 1) {
    return (std::forward<Xs>(xs), ...);
  } else {
    return std::tuple<std::remove_cvref_t<Xs>...>{std::forward<Xs>(xs)...};
  }
}

void require_float_leaf(DType dtype, std::string_view op);
void require_matching_tangent(const Shape& primal_shape, DType primal_dtype, const Shape& shape,
                              DType dtype, std::string_view op, std::string_view what);
void require_single_element(const Shape& shape, std::string_view op);

/// Declared, never defined: stands in for a result after a failed
/// static_assert, so that the compiler reports that one message and nothing
/// after it (the program never links, as it never compiles).
template <class Out>
Out ill_formed();

/// f(args...), where args are the values the transform wraps the user's
/// arguments in. A function written for `const st::Tensor&` cannot take them;
/// it is caught here with one readable message instead of an error from
/// inside std::apply.
template <class Out, class F, class... A>
decltype(auto) call_function(F& f, const A&... args) {
  if constexpr (std::is_invocable_v<F&, const A&...>) {
    return std::invoke(f, args...);
  } else {
    static_assert(std::is_invocable_v<F&, const A&...>,
                  "strata: a transform calls your function with its own tensor types "
                  "(st::Reverse<T>, st::Forward<T>, st::Batched<T>), one per argument, not with "
                  "st::Tensor: write the function as a generic lambda, "
                  "[](const auto& x) { ... }, or a template, "
                  "template <class T> T f(const T& x)");
    return ill_formed<Out>();
  }
}

/// f's output as a value of level Out (a lower level is a constant of it).
template <class Out, class Y>
Out as_level(const Y& y, std::string_view op) {
  if constexpr (contains_level<Out, Y>()) {
    return lift<Out>(y);
  } else {
    static_assert(contains_level<Out, Y>(),
                  "strata: your function must return a tensor of the level it was called with "
                  "(or a constant of a lower level, such as a captured st::Tensor), computed "
                  "from its argument, e.g. [](const auto& x) { return st::sum(x * x); }; not a "
                  "C++ number, a container, or a value of an outer transform");
    (void)y;
    (void)op;
    return ill_formed<Out>();
  }
}

/// Runs f on the arguments wrapped as Reverse values on one fresh tape.
template <class F, class... X>
auto record(F& f, std::string_view op, const X&... xs) {
  using T = tree::leaf_t<std::tuple_element_t<0, std::tuple<X...>>>;
  auto tape = std::make_shared<Tape<T>>();
  auto wrap = [&](const T& leaf) {
    require_float_leaf(leaf.dtype(), op);
    return Reverse<T>(leaf, tape, tape->add_leaf());
  };
  auto args = std::make_tuple(tree::map(wrap, xs)...);
  auto call = [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
    return call_function<Reverse<T>>(f, std::get<I>(args)...);
  };
  Reverse<T> out = as_level<Reverse<T>>(call(std::index_sequence_for<X...>{}), op);
  // An output recorded by another call (leaked out of it, or captured from an
  // outer call of the same type) is not ours to differentiate.
  if (out.tape() && out.tape() != tape) mixed_transform_calls(op);
  return std::make_tuple(std::move(args), std::move(out));
}

/// The cotangents of the wrapped arguments, as trees like the arguments.
template <class T, class Args>
auto gradients(const Args& args, const Reverse<T>& out, const T& seed) {
  std::vector<std::optional<T>> ct;
  if (!out.is_constant()) ct = out.tape()->backward(out.id(), seed);
  auto grad_of = [&](const Reverse<T>& w) {
    const std::size_t id = std::size_t(w.id());
    return id < ct.size() && ct[id] ? *ct[id] : zeros_like(w.primal());
  };
  return std::apply([&](const auto&... a) { return one_or_tuple(tree::map(grad_of, a)...); }, args);
}

}  // namespace detail

/// Reverse mode: (f(xs...), pullback), where pullback(ct) gives the vector-Jacobian product
/// ct^T J for each argument (one, or a tuple), in the arguments' tree structure; it may be
/// called many times. ct must have f's output shape and dtype (ShapeError / DTypeError);
/// the arguments must be float (DTypeError).
/// Example: `auto [y, pullback] = st::vjp(f, x); st::Tensor g = pullback(w);` (w shaped like y).
template <class F, class X0, class... X>
auto vjp(F f, const X0& x0, const X&... xs) {
  auto [args, out] = detail::record(f, "vjp", x0, xs...);
  using T = tree::leaf_t<X0>;
  // The cotangent may be of T's level or any level below it (lifted as a constant).
  auto pullback = [args = args, out = out](const auto& cotangent) {
    const T ct = lift<T>(cotangent);
    detail::require_matching_tangent(out.shape(), out.dtype(), ct.shape(), ct.dtype(), "vjp",
                                     "cotangent");
    return detail::gradients<T>(args, out, ct);
  };
  return std::pair{out.primal(), pullback};
}

/// (f(xs...), gradient(s)) in one pass, for f returning one element (ShapeError otherwise).
/// The gradients have the arguments' shapes, dtypes and tree structure.
/// Example: `auto [loss, g] = st::value_and_grad(loss_fn, params);`
template <class F, class X0, class... X>
auto value_and_grad(F f, const X0& x0, const X&... xs) {
  using T = tree::leaf_t<X0>;
  auto [args, out] = detail::record(f, "grad", x0, xs...);
  detail::require_single_element(out.shape(), "grad");
  const T seed = constant_like(out.primal(), 1.0);
  return std::pair{out.primal(), detail::gradients<T>(args, out, seed)};
}

/// The gradient of f, which must return one element (ShapeError otherwise), with respect to
/// every argument: one gradient for one argument, a tuple for several, each in its
/// argument's tree structure, shape and dtype. Arguments must be float tensors (DTypeError)
/// or trees of them. Example: `st::Tensor g = st::grad([](auto x) { return st::sum(x * x); }, x);`
template <class F, class X0, class... X>
auto grad(F f, const X0& x0, const X&... xs) {
  return value_and_grad(std::move(f), x0, xs...).second;
}

/// Forward mode: (f(x), J v), the derivative of f at x along the direction v, which has x's
/// tree structure, shapes and dtypes (ShapeError / DTypeError otherwise). One pass, no tape.
/// Example: `auto [y, dy] = st::jvp([](auto x) { return st::sin(x); }, x, v);`
template <class F, class X, class V>
auto jvp(F f, const X& x, const V& v) {
  using T = tree::leaf_t<X>;
  const uint64_t tag = Forward<T>::new_tag();
  auto wrap = [&](const T& p, const auto& tangent) {
    const T t = lift<T>(tangent);  // a tangent of a lower level is a constant of T's
    detail::require_float_leaf(p.dtype(), "jvp");
    detail::require_matching_tangent(p.shape(), p.dtype(), t.shape(), t.dtype(), "jvp", "tangent");
    return Forward<T>(p, t, tag);
  };
  const Forward<T> out = detail::as_level<Forward<T>>(
      detail::call_function<Forward<T>>(f, tree::map2(wrap, x, v)), "jvp");
  if (out.tangent() && out.tag() != tag) detail::common_tag({tag, out.tag()});  // throws
  T tangent = out.tangent() ? *out.tangent() : zeros_like(out.primal());
  return std::pair{out.primal(), std::move(tangent)};
}

namespace detail {
inline Shape concat_shapes(const Shape& a, const Shape& b) {
  Shape s = a;
  for (int64_t d : b) s.push_back(d);
  return s;
}
/// Every standard basis vector of a tensor of this shape, dtype and device, at once:
/// [n, ...shape], as a constant of level T. (Not from a plain value: under st::vmap the
/// tensor holds a batch of examples and has none.)
template <Diffable T>
T basis_batch(const Shape& shape, DType dtype, Device device) {
  const int64_t n = checked_numel(shape, "basis");
  const Tensor pos = arange(0, double(n), 1, i64, device);
  const Tensor eye = cast(eq(reshape(pos, {n, 1}), reshape(pos, {1, n})), dtype);
  return Prims<T>::constant(reshape(eye, concat_shapes({n}, shape)));
}
}  // namespace detail

/// The Jacobian of f at the float tensor x by forward mode: shape f(x).shape() ++ x.shape(),
/// J[i..., j...] = d f(x)[i...] / d x[j...]. Example: `st::jacfwd(f, x)`. One pass: f runs
/// once on Forward<Batched<T>> values whose tangent holds every basis vector
/// of x (ad/batched.hpp), so the primal is computed once and n jvps become
/// batched ops.
template <class F, Diffable T>
T jacfwd(F f, const T& x) {
  using B = Batched<T>;
  detail::require_float_leaf(x.dtype(), "jacfwd");
  const int64_t n = checked_numel(x.shape(), "jacfwd");
  const uint64_t tag = Forward<B>::new_tag();
  const Forward<B> in =
      n > 0
          ? Forward<B>(B(x), B(detail::basis_batch<T>(x.shape(), x.dtype(), x.device()), true), tag)
          : Forward<B>(B(x));
  const Forward<B> out =
      detail::as_level<Forward<B>>(detail::call_function<Forward<B>>(f, in), "jacfwd");
  if (out.tangent() && out.tag() != tag) detail::common_tag({tag, out.tag()});  // throws
  const Shape shape = detail::concat_shapes(out.shape(), x.shape());
  if (n == 0 || !out.tangent() || checked_numel(shape, "jacfwd") == 0) {
    return Prims<T>::constant(zeros(shape, x.dtype(), x.device()));
  }
  // The tangent is [n, out...]; the Jacobian puts the input axis last.
  Shape last;
  for (int64_t i = 1; i <= out.ndim(); ++i) last.push_back(i);
  last.push_back(0);
  return Prims<T>::reshape(Prims<T>::permute(out.tangent()->as_batch(n), last), shape);
}

/// The Jacobian of f at the float tensor x by reverse mode: shape f(x).shape() ++ x.shape(),
/// the same values as jacfwd (cheaper when the output is smaller than the input).
/// Example: `st::jacrev(f, x)`. One backward
/// pass: f is recorded once on Reverse<Batched<T>> values, and the cotangent
/// that the tape pulls back holds every basis vector of the output at once.
template <class F, Diffable T>
T jacrev(F f, const T& x) {
  using B = Batched<T>;
  auto [y, pullback] = vjp(std::move(f), B(x));
  const int64_t m = checked_numel(y.shape(), "jacrev");
  const Shape shape = detail::concat_shapes(y.shape(), x.shape());
  if (m == 0 || x.numel() == 0) return Prims<T>::constant(zeros(shape, x.dtype(), x.device()));
  // The gradient is [m, in...]: already out ++ in once reshaped.
  const B g = pullback(B(detail::basis_batch<T>(y.shape(), y.dtype(), y.device()), true));
  return Prims<T>::reshape(g.as_batch(m), shape);
}

/// The gradient as a function: st::grad(f)(x) is st::grad(f, x), and it composes:
/// `st::grad(st::grad(f))(x)` is the second derivative of a scalar function.
template <class F>
auto grad(F f) {
  return [f](const auto&... xs) { return grad(f, xs...); };
}
/// value_and_grad as a function: st::value_and_grad(f)(x) is st::value_and_grad(f, x).
template <class F>
auto value_and_grad(F f) {
  return [f](const auto&... xs) { return value_and_grad(f, xs...); };
}
/// jacfwd as a function: `st::jacfwd(st::jacrev(f))(x)` is the Hessian.
template <class F>
auto jacfwd(F f) {
  return [f](const auto& x) { return jacfwd(f, x); };
}
/// jacrev as a function: `st::jacrev(st::jacrev(f))(x)` is the Hessian too.
template <class F>
auto jacrev(F f) {
  return [f](const auto& x) { return jacrev(f, x); };
}

/// The Hessian of f, which returns one element, at the float tensor x: shape x.shape() ++
/// x.shape(), computed as jacfwd(jacrev(f)). Example: `st::hessian(f, x)` for x of shape [n]
/// gives [n, n].
template <class F, Diffable T>
T hessian(F f, const T& x) {
  return jacfwd(jacrev(std::move(f)), x);
}
/// hessian as a function: `st::hessian(f)(x)`.
template <class F>
auto hessian(F f) {
  return [f](const auto& x) { return hessian(f, x); };
}

}  // namespace strata
