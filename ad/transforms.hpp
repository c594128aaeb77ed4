// SPDX-License-Identifier: MIT
#pragma once
/// The transforms jvp, vjp, grad and value_and_grad (jacfwd, jacrev and hessian:
/// ad/jacobian.hpp).
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

#include "ad/argnums.hpp"
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
/// require_single_element, and a float dtype (an integer or bool output has no gradient:
/// DTypeError rather than zeros).
void require_gradient_output(const Shape& shape, DType dtype, std::string_view op);

/// Declared, never defined: stands in for a result after a failed static_assert (or
/// another error already reported), so that the compiler reports that one message and
/// nothing after it (the program never links, as it never compiles).
template <class Out>
Out ill_formed();

/// Whether F's parameter types are fixed: a function (pointer), or a class with one
/// non-template call operator (a lambda with no `auto` parameter, std::function).
template <class F>
concept FixedSignature = !std::is_class_v<F> || requires {
  &F::operator();
};

/// What a call of ArgumentProbe<F> gives when none of F's call operators takes the arguments.
struct NoCallOperator {};
/// F's call operators, and a C variadic one that ranks below every other (an ellipsis
/// conversion): a call selects it only when none of F's takes the arguments, and then
/// instantiates no body of F.
template <class F>
struct ArgumentProbe : F {
  using F::operator();
  NoCallOperator operator()(...) const;  // declared only: used in unevaluated calls
};

/// Whether f(args...) fails because no call operator of the generic callable F takes the
/// arguments (a parameter of a fixed type, such as const st::Tensor&, or a constraint): not
/// because its body is ill-formed, which the compiler has already reported.
template <class F, class... A>
constexpr bool rejects_arguments() {
  if constexpr (FixedSignature<F> || std::is_final_v<F>) {
    return !std::is_invocable_v<F&, const A&...>;
  } else {
    using Probe = std::conditional_t<std::is_const_v<F>, const ArgumentProbe<std::remove_cv_t<F>>,
                                     ArgumentProbe<F>>;
    return requires(Probe & p, const A&... a) {
      { p(a...) } -> std::same_as<NoCallOperator>;
    };
  }
}

/// f(args...), where args are the values the transform wraps the user's arguments in. A
/// function written for `const st::Tensor&` cannot take them; it is caught here with one
/// readable message instead of an error from inside std::apply. The message is given only
/// when no call operator of f takes the arguments: asking whether a generic lambda is
/// invocable deduces its return type, which instantiates its body, so a mistake inside the
/// body also makes it "not invocable"; the compiler has reported that mistake, and this
/// message would add a false hint to it.
template <class Out, class F, class... A>
decltype(auto) call_function(F& f, const A&... args) {
  constexpr bool rejected = rejects_arguments<F, A...>();
  if constexpr (rejected) {
    static_assert(!rejected,
                  "strata: a transform calls your function with its own tensor types "
                  "(st::Reverse<T>, st::Forward<T>, st::Batched<T>), one per argument, not with "
                  "st::Tensor: write the function as a generic lambda, "
                  "[](const auto& x) { ... }, or a template, "
                  "template <class T> T f(const T& x); st::jvp and st::hvp pass a tree (a "
                  "tuple of tensors) as ONE argument, so f must take one parameter there");
    return ill_formed<Out>();
  } else if constexpr (std::is_invocable_v<F&, const A&...>) {
    return std::invoke(f, args...);
  } else {
    // A call operator of f takes the arguments, yet the call is ill-formed: the mistake is in
    // f's body, and the compiler reported it when it deduced the return type. Nothing to add
    // (calling f again would only add errors about that return type).
    return ill_formed<Out>();
  }
}

/// f's output as a value of level Out (a lower level is a constant of it).
template <class Out, class Y>
Out as_level(const Y& y, std::string_view op) {
  if constexpr (contains_level<Out, Y>() || UnnestedLevels<Out, Y>) {
    return lift<Out>(y);  // unnested: reported by detail::unnested_levels
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

/// The arguments as trees of Reverse<T> values on `tape`: the leaves of the arguments Sel
/// chooses become leaves of the tape (float only: DTypeError), the others constants of
/// level T. Arguments of a lower level than T are lifted.
template <class T, class Sel, class... X>
auto wrap_reverse(const std::shared_ptr<Tape<T>>& tape, std::string_view op, const X&... xs) {
  auto variable = [&](const auto& leaf) {
    require_float_leaf(leaf.dtype(), op);
    return Reverse<T>(lift<T>(leaf), tape, tape->add_leaf());
  };
  auto constant = [](const auto& leaf) { return Reverse<T>(lift<T>(leaf)); };
  auto wrap = [&]<std::size_t K>(const auto& x) {
    if constexpr (chosen<K>(Sel{})) {
      return tree::map(variable, x);
    } else {
      return tree::map(constant, x);
    }
  };
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return std::make_tuple(wrap.template operator()<K>(xs)...);
  }
  (std::index_sequence_for<X...>{});
}

/// f's output as a Reverse<T> value recorded on `tape` (or a constant).
template <class T, class Y>
Reverse<T> recorded_output(const Y& y, const std::shared_ptr<Tape<T>>& tape, std::string_view op) {
  Reverse<T> out = as_level<Reverse<T>>(y, op);
  // An output recorded by another call (leaked out of it, or captured from an
  // outer call of the same type) is not ours to differentiate.
  if (out.tape() && out.tape() != tape) mixed_transform_calls(op);
  return out;
}

/// Runs f on the arguments wrapped as Reverse values on one fresh tape (the ones Sel chooses
/// as its leaves, the others as constants): (the wrapped arguments, f's output).
template <class Sel, class F, class... X>
auto record(F& f, std::string_view op, const X&... xs) {
  using T = level_t<X...>;
  auto tape = std::make_shared<Tape<T>>();
  auto args = wrap_reverse<T, Sel>(tape, op, xs...);
  auto call = [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
    return call_function<Reverse<T>>(f, std::get<I>(args)...);
  };
  Reverse<T> out = recorded_output(call(std::index_sequence_for<X...>{}), tape, op);
  return std::make_tuple(std::move(args), std::move(out));
}

/// The cotangents of the wrapped arguments Sel chooses (one, or a tuple in Sel's order), as
/// trees like the arguments.
template <class T, int... I, class Args>
auto gradients(Argnums<I...>, const Args& args, const Reverse<T>& out, const T& seed) {
  std::vector<std::optional<T>> ct;
  if (!out.is_constant()) ct = out.tape()->backward(out.id(), seed);
  auto grad_of = [&](const Reverse<T>& w) {
    const std::size_t id = std::size_t(w.id());
    return id < ct.size() && ct[id] ? *ct[id] : zeros_like(w.primal());
  };
  return one_or_tuple(tree::map(grad_of, std::get<std::size_t(I)>(args))...);
}

/// A static_assert for argnums that name an argument past the last; true when they are fine.
/// An ill-formed choice (negative, repeated, none) is false here without a second error:
/// Argnums' own static_assert has reported it.
template <class Sel, std::size_t N>
constexpr bool check_argnums() {
  if constexpr (!argnums_traits<Sel>::valid) {
    return false;
  } else {
    constexpr bool ok = argnums_traits<Sel>::in_range(N);
    static_assert(ok,
                  "strata: st::argnums: an argument index is out of range (there are fewer "
                  "arguments than that): indices count from 0");
    return ok;
  }
}

}  // namespace detail

/// Reverse mode: (f(xs...), pullback), where pullback(ct) gives the vector-Jacobian product
/// ct^T J for each argument (one, or a tuple), in the arguments' tree structure; it may be
/// called many times. ct must have f's output shape and dtype (ShapeError / DTypeError);
/// the arguments must be float (DTypeError).
/// Example: `auto [y, pullback] = st::vjp(f, x); st::Tensor g = pullback(w);` (w shaped like y).
template <class F, class X0, class... X>
auto vjp(F f, const X0& x0, const X&... xs) {
  using Sel = detail::all_argnums_t<1 + sizeof...(X)>;
  auto [args, out] = detail::record<Sel>(f, "vjp", x0, xs...);
  using T = detail::level_t<X0, X...>;
  // The cotangent may be of T's level or any level below it (lifted as a constant).
  auto pullback = [args = args, out = out](const auto& cotangent) {
    const T ct = lift<T>(cotangent);
    detail::require_matching_tangent(out.shape(), out.dtype(), ct.shape(), ct.dtype(), "vjp",
                                     "cotangent");
    return detail::gradients<T>(Sel{}, args, out, ct);
  };
  return std::pair{out.primal(), pullback};
}

/// (f(xs...), gradient(s)) in one pass, for f returning one float element (ShapeError, DTypeError
/// otherwise), with respect to the arguments `st::argnums<I...>` chooses (the others are
/// constants): one gradient for one index, a tuple in the order given for several. Example: `auto
/// [loss, gw] = st::value_and_grad(loss_fn, st::argnums<0>, w, x);`
template <class F, int... I, class X0, class... X>
auto value_and_grad(F f, Argnums<I...> sel, const X0& x0, const X&... xs) {
  using Sel = Argnums<I...>;
  using T = detail::level_t<X0, X...>;
  if constexpr (!detail::check_argnums<Sel, 1 + sizeof...(X)>()) {
    return detail::ill_formed<std::pair<T, T>>();
  } else {
    auto [args, out] = detail::record<Sel>(f, "grad", x0, xs...);
    detail::require_gradient_output(out.shape(), out.dtype(), "grad");
    const T seed = constant_like(out.primal(), 1.0);
    return std::pair{out.primal(), detail::gradients<T>(sel, args, out, seed)};
  }
}

/// (f(xs...), gradient(s)) in one pass, for f returning one float element (ShapeError, DTypeError
/// otherwise). The gradients have the arguments' shapes, dtypes and tree structure. Example: `auto
/// [loss, g] = st::value_and_grad(loss_fn, params);`
template <class F, class X0, class... X>
requires(!detail::ArgnumsChoice<X0>) auto value_and_grad(F f, const X0& x0, const X&... xs) {
  return value_and_grad(std::move(f), detail::all_argnums<1 + sizeof...(X)>(), x0, xs...);
}

/// The gradient of f, which must return one float element (ShapeError, DTypeError otherwise), with
/// respect to the arguments `st::argnums<I...>` chooses (the others are passed as constants): one
/// gradient for one index, a tuple in the order given for several.
/// Example: `auto [gx, gz] = st::grad(f, st::argnums<0, 2>, x, y, z);`
template <class F, int... I, class X0, class... X>
auto grad(F f, Argnums<I...> sel, const X0& x0, const X&... xs) {
  return value_and_grad(std::move(f), sel, x0, xs...).second;
}

/// The gradient of f, which must return one float element (ShapeError, DTypeError otherwise), with
/// respect to every argument: one gradient for one argument, a tuple for several, each in its
/// argument's tree structure, shape and dtype. Arguments must be float tensors (DTypeError)
/// or trees of them. Example: `st::Tensor g = st::grad([](auto x) { return st::sum(x * x); }, x);`
template <class F, class X0, class... X>
requires(!detail::ArgnumsChoice<X0>) auto grad(F f, const X0& x0, const X&... xs) {
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

/// The gradient as a function: st::grad(f)(x) is st::grad(f, x), and it composes:
/// `st::grad(st::grad(f))(x)` is the second derivative of a scalar function.
template <class F>
auto grad(F f) {
  return [f](const auto&... xs) { return grad(f, xs...); };
}
/// The gradient with respect to the chosen arguments as a function:
/// `st::grad(f, st::argnums<1>)(x, y)` is `st::grad(f, st::argnums<1>, x, y)`.
template <class F, int... I>
auto grad(F f, Argnums<I...>) {
  return [f](const auto&... xs) { return grad(f, Argnums<I...>{}, xs...); };
}
/// value_and_grad as a function: st::value_and_grad(f)(x) is st::value_and_grad(f, x).
template <class F>
auto value_and_grad(F f) {
  return [f](const auto&... xs) { return value_and_grad(f, xs...); };
}
/// value_and_grad with respect to the chosen arguments as a function:
/// `st::value_and_grad(f, st::argnums<0>)(w, x)`.
template <class F, int... I>
auto value_and_grad(F f, Argnums<I...>) {
  return [f](const auto&... xs) { return value_and_grad(f, Argnums<I...>{}, xs...); };
}

}  // namespace strata
