// SPDX-License-Identifier: MIT
#pragma once
/// Custom derivative rules (jax.custom_jvp, jax.custom_vjp) and rematerialisation
/// (jax.checkpoint).
///
/// st::custom_jvp(f, f_jvp), st::custom_vjp(f, f_fwd, f_bwd) and st::checkpoint(f) are
/// functions that compute f but are differentiated by a rule object instead of through
/// f's ops. As for a primitive (ad/rules.hpp), one rule serves every mode: Custom<Rule>
/// dispatches on the level of its arguments, and the rule supplies the calculus:
///
///   Tensor       f itself
///   Forward<T>   the primal by the custom function on T (so that inner levels use the
///                rule too) and the tangent by rule.tangent: f_jvp's; for a custom_vjp
///                the transpose of f_bwd (linear in its cotangent u: J t is the gradient
///                over u of <f_bwd(res, u), t>); for a checkpoint, f on the dual values
///   Reverse<T>   one tape node whose joint pullback rule.record builds: f_bwd on the
///                residuals f_fwd returned; for a custom_jvp the transpose of the tangent
///                map t -> f_jvp(x, t) (a vjp over t); for a checkpoint a vjp of f,
///                recomputed from the saved inputs
///   Batched<T>   the custom function of the rule with f, f_jvp, f_fwd, f_bwd vmapped, on
///                the stacked values (how JAX batches custom rules)
///
/// The rules are called with values of level T, so rules written as generic lambdas are
/// differentiated in turn: second derivatives (grad of grad, hessian) differentiate
/// f_bwd or f_jvp.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ad/transforms.hpp"
#include "ad/vmap.hpp"

namespace strata {
namespace detail {

/// Whether L is a Forward, a Reverse or a Batched level.
template <class L>
inline constexpr bool is_forward_level = false;
template <Diffable T>
inline constexpr bool is_forward_level<Forward<T>> = true;
template <class L>
inline constexpr bool is_reverse_level = false;
template <Diffable T>
inline constexpr bool is_reverse_level<Reverse<T>> = true;
template <class L>
inline constexpr bool is_batched_level = false;
template <Diffable T>
inline constexpr bool is_batched_level<Batched<T>> = true;

/// Whether some level of L carries derivatives (a Forward or Reverse level at any depth):
/// where none does, a rule's own primal output is the value, with nothing to differentiate.
template <class L>
constexpr bool has_derivative_level() {
  if constexpr (is_forward_level<L> || is_reverse_level<L>) {
    return true;
  } else if constexpr (is_batched_level<L>) {
    return has_derivative_level<typename inner_level<L>::type>();
  } else {
    return false;
  }
}

/// Throws ShapeError / DTypeError when `what`, a value the custom rule of `fn` returned (for
/// argument `index`; -1: for the result), lacks the shape and dtype it must have.
void require_rule_value(const std::string& fn, std::string_view what, int index,
                        const Shape& want_shape, DType want_dtype, const Shape& shape, DType dtype);
/// Throws ValueError: the custom rule of `fn` returned `got` cotangents for `want` arguments.
[[noreturn]] void rule_count_mismatch(const std::string& fn, std::size_t want, std::size_t got);

/// The values of a result that is one value, a tuple or pair, or a std::vector, as level T.
template <Diffable T, class R>
std::vector<T> values_of(const R& r, std::string_view op) {
  std::vector<T> out;
  if constexpr (Diffable<R>) {
    out.push_back(as_level<T>(r, op));
  } else if constexpr (requires {
                         r.size();
                         r[0];
                       }) {
    for (const auto& c : r) out.push_back(as_level<T>(c, op));
  } else {
    std::apply([&](const auto&... c) { (out.push_back(as_level<T>(c, op)), ...); }, r);
  }
  return out;
}

/// The shapes and dtypes a rule's cotangents must have: its arguments'.
struct ArgSpecs {
  std::vector<Shape> shapes;  ///< each argument's shape
  std::vector<DType> dtypes;  ///< each argument's dtype
  std::string fn;             ///< the function's name, for errors
};

/// A rule's cotangents (one value, a tuple or pair, or a vector), checked against `args`.
template <Diffable T, class R>
std::vector<T> rule_cotangents(const R& r, const ArgSpecs& args) {
  std::vector<T> out = values_of<T>(r, "custom_vjp");
  if (out.size() != args.shapes.size())
    rule_count_mismatch(args.fn, args.shapes.size(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    require_rule_value(args.fn, "the cotangent returned", int(i), args.shapes[i], args.dtypes[i],
                       out[i].shape(), out[i].dtype());
  }
  return out;
}

/// x with every tensor leaf lifted to the level U (a tree keeps its structure).
template <Diffable U, class X>
auto lift_tree(const X& x) {
  return tree::map([](const auto& leaf) { return lift<U>(leaf); }, x);
}

/// Appends the plain values under every tensor leaf of x, for the tape's version checks.
template <class X>
void collect_stored(const X& x, std::vector<Tensor>& saved) {
  tree::map([&](const auto& leaf) { return saved.push_back(stored(leaf)), 0; }, x);
}

/// The (first, second) of a rule's pair result, with a readable error for anything else.
template <class P>
void require_pair(std::string_view rule) {
  if constexpr (requires { std::tuple_size<std::remove_cvref_t<P>>::value; }) {
    static_assert(std::tuple_size<std::remove_cvref_t<P>>::value == 2,
                  "strata: custom_jvp's f_jvp and custom_vjp's f_fwd return a pair: "
                  "`return std::pair{y, t};` (f_jvp) or `return std::pair{y, residuals};` (f_fwd)");
  } else {
    static_assert(sizeof(P) == 0,
                  "strata: custom_jvp's f_jvp and custom_vjp's f_fwd return a pair: "
                  "`return std::pair{y, t};` (f_jvp) or `return std::pair{y, residuals};` (f_fwd)");
  }
  (void)rule;
}

/// The rule of st::custom_jvp: f and f_jvp(xs..., ts...) -> (f(xs...), tangent).
template <class F, class Jvp>
struct JvpRule {
  F f;               ///< the function
  Jvp jvp;           ///< its jvp rule
  std::string name;  ///< its name in errors

  /// The tangent of y = f(xs) for the Forward<T> arguments xs; `y` is f's value.
  template <Diffable T, class... Fs>
  T tangent(const T& y, const Fs&... xs) const {
    const auto out =
        jvp(xs.primal()..., (xs.tangent() ? *xs.tangent() : zeros_like(xs.primal()))...);
    require_pair<decltype(out)>("f_jvp");
    T t = as_level<T>(std::get<1>(out), "custom_jvp");
    require_rule_value(name, "the tangent f_jvp returned", -1, y.shape(), y.dtype(), t.shape(),
                       t.dtype());
    return t;
  }

  /// For a Reverse<T> node on the primals ps: the value (by `primal`), the joint pullback (the
  /// transpose of the linear map t -> f_jvp(ps, t).second, a vjp over t) and what it keeps.
  template <Diffable T, class Primal, class... Ps>
  auto record(const Primal& primal, const Ps&... ps) const {
    T y = primal();
    std::vector<Tensor> saved{stored(ps)...};
    using R = Reverse<T>;
    auto pullback = [jvp = jvp, name = name, y_shape = y.shape(), y_dtype = y.dtype(),
                     primals = std::make_tuple(ps...)](const T& ct) {
      auto tangent_map = [&](const auto&... ts) {
        return std::apply(
            [&](const auto&... p) {
              const auto out = jvp(lift<R>(p)..., ts...);
              require_pair<decltype(out)>("f_jvp");
              R t = as_level<R>(std::get<1>(out), "custom_jvp");
              require_rule_value(name, "the tangent f_jvp returned", -1, y_shape, y_dtype,
                                 t.shape(), t.dtype());
              return t;
            },
            primals);
      };
      auto pb = std::apply(
          [&](const auto&... p) { return vjp(tangent_map, zeros_like(p)...).second; }, primals);
      return values_of<T>(pb(ct), "custom_jvp");
    };
    return std::make_tuple(std::move(y), typename Tape<T>::JointPullback(std::move(pullback)),
                           std::move(saved));
  }

  /// The same rule for a batch: f and f_jvp vmapped over axis 0 of every argument.
  auto batched() const {
    return JvpRule<decltype(vmap(f)), decltype(vmap(jvp))>{vmap(f), vmap(jvp), name};
  }
};

/// The rule of st::custom_vjp: f, f_fwd(xs...) -> (f(xs...), residuals) and
/// f_bwd(residuals, ct) -> the cotangents (one per argument).
template <class F, class Fwd, class Bwd>
struct VjpRule {
  F f;               ///< the function
  Fwd fwd;           ///< its forward pass, returning the residuals too
  Bwd bwd;           ///< its backward pass
  std::string name;  ///< its name in errors

  /// The tangent of y = f(xs) for the Forward<T> arguments xs: J t, where J^T u = bwd(res, u)
  /// is linear in u, is the gradient over u of sum_i <bwd(res, u)_i, t_i>.
  template <Diffable T, class... Fs>
  T tangent(const T& y, const Fs&... xs) const {
    const auto out = fwd(xs.primal()...);
    require_pair<decltype(out)>("f_fwd");
    const ArgSpecs args{{xs.shape()...}, {xs.dtype()...}, name};
    const std::vector<std::optional<T>> ts{xs.tangent()...};
    auto inner = [&](const auto& u) {
      using U = std::remove_cvref_t<decltype(u)>;
      const std::vector<U> cts = rule_cotangents<U>(bwd(lift_tree<U>(std::get<1>(out)), u), args);
      std::optional<U> acc;
      for (std::size_t i = 0; i < ts.size(); ++i) {
        if (!ts[i]) continue;
        U term = sum(cts[i] * lift<U>(*ts[i]));
        acc = acc ? *acc + term : term;
      }
      return *acc;
    };
    return grad(inner, zeros_like(y));
  }

  /// For a Reverse<T> node on the primals ps: the value (f_fwd's own where no level below
  /// carries derivatives, else `primal`, so that inner levels use the rule too), the joint
  /// pullback f_bwd(residuals, ct), and the residuals' plain values.
  template <Diffable T, class Primal, class... Ps>
  auto record(const Primal& primal, const Ps&... ps) const {
    auto out = fwd(ps...);
    require_pair<decltype(out)>("f_fwd");
    T y = has_derivative_level<T>() ? primal() : as_level<T>(std::get<0>(out), "custom_vjp");
    std::vector<Tensor> saved;
    collect_stored(std::get<1>(out), saved);
    auto pullback = [bwd = bwd, res = std::get<1>(std::move(out)),
                     args = ArgSpecs{{ps.shape()...}, {ps.dtype()...}, name}](const T& ct) {
      return rule_cotangents<T>(bwd(res, ct), args);
    };
    return std::make_tuple(std::move(y), typename Tape<T>::JointPullback(std::move(pullback)),
                           std::move(saved));
  }

  /// The same rule for a batch: f, f_fwd and f_bwd vmapped over axis 0 of everything.
  auto batched() const {
    return VjpRule<decltype(vmap(f)), decltype(vmap(fwd)), decltype(vmap(bwd))>{vmap(f), vmap(fwd),
                                                                                vmap(bwd), name};
  }
};

/// The rule of st::checkpoint: f differentiated through its own ops, but under reverse mode
/// only its inputs are kept, and its intermediates are recomputed by the backward pass.
template <class F>
struct CheckpointRule {
  F f;               ///< the function
  std::string name;  ///< its name in errors

  /// Forward mode keeps no tape: f runs on the dual values themselves.
  static constexpr bool runs_forward_levels = true;

  /// For a Reverse<T> node on the primals ps: f's value on T (no intermediates recorded at
  /// this level), and a pullback that records f again and pulls the cotangent back.
  template <Diffable T, class Primal, class... Ps>
  auto record(const Primal& primal, const Ps&... ps) const {
    T y = primal();
    std::vector<Tensor> saved{stored(ps)...};
    auto pullback = [f = f, name = name, primals = std::make_tuple(ps...)](const T& ct) {
      using Sel = all_argnums_t<sizeof...(Ps)>;
      auto [args, out] = std::apply(
          [&](const auto&... p) { return strata::detail::record<Sel>(f, name, p...); }, primals);
      // Only the tape and the node are needed from here: dropping the recomputed value
      // keeps one activation less alive during the backward pass.
      const Reverse<T> node(T{}, out.tape(), out.id());
      out = Reverse<T>();
      return values_of<T>(gradients<T>(Sel{}, args, node, ct), "checkpoint");
    };
    return std::make_tuple(std::move(y), typename Tape<T>::JointPullback(std::move(pullback)),
                           std::move(saved));
  }

  /// The same rule for a batch: f vmapped over axis 0 of every argument.
  auto batched() const { return CheckpointRule<decltype(vmap(f))>{vmap(f), name}; }
};

}  // namespace detail

/// A function differentiated by a rule object (detail::JvpRule, VjpRule, CheckpointRule)
/// instead of through its ops, under every transform: st::custom_jvp, st::custom_vjp and
/// st::checkpoint make these. Call it like the function: its arguments are tensors (or
/// values of any transform level; lower levels become constants), its result one tensor.
template <class Rule>
class Custom {
 public:
  /// The function of `rule`.
  explicit Custom(Rule rule) : rule_(std::move(rule)) {}

  /// The function on the arguments, at the highest level among them.
  template <class X0, class... X>
  auto operator()(const X0& x0, const X&... xs) const {
    using L = typename detail::highest_level<X0, X...>::type;
    return call<L>(lift<L>(x0), lift<L>(xs)...);
  }

  /// The function at the level L, every argument of level L.
  template <Diffable L, class... Ls>
  L call(const Ls&... xs) const {
    if constexpr (detail::is_forward_level<L> && !runs_forward_levels()) {
      using T = typename inner_level<L>::type;
      const uint64_t tag = detail::common_tag({xs.tag()...});
      T y = call<T>(xs.primal()...);
      if (!(xs.tangent() || ...)) return L(y);
      T t = rule_.template tangent<T>(y, xs...);
      return L(std::move(y), std::move(t), tag);
    } else if constexpr (detail::is_reverse_level<L>) {
      using T = typename inner_level<L>::type;
      auto tape = detail::common_tape<T>(std::array<const L*, sizeof...(Ls)>{&xs...}, rule_.name);
      if (!tape) return L(call<T>(xs.primal()...));
      auto [y, pullback, saved] =
          rule_.template record<T>([&] { return call<T>(xs.primal()...); }, xs.primal()...);
      const int64_t id = tape->add_joint({(xs.is_constant() ? int64_t{-1} : xs.id())...},
                                         std::move(pullback), saved);
      return L(std::move(y), tape, id);
    } else if constexpr (detail::is_batched_level<L>) {
      using T = typename inner_level<L>::type;
      const uint64_t tag = detail::common_batch_tag<T>({&xs...}, rule_.name);
      int64_t n = 0;
      ((n = xs.batched() ? xs.batch_size() : n), ...);
      if (n == 0) return L(call<T>(xs.value()...));
      const Custom<decltype(rule_.batched())> mapped(rule_.batched());
      return L(mapped.template call<T>(xs.as_batch(n)...), true, tag);
    } else {
      return detail::as_level<L>(detail::call_function<L>(rule_.f, xs...), rule_.name);
    }
  }

 private:
  static constexpr bool runs_forward_levels() {
    if constexpr (requires { Rule::runs_forward_levels; }) {
      return Rule::runs_forward_levels;
    } else {
      return false;
    }
  }
  Rule rule_;
};

/// f with a custom forward-mode rule, as jax.custom_jvp: the result computes f(xs...), and
/// its derivative along tangents ts... is the second of f_jvp(xs..., ts...), which returns
/// the pair (f(xs...), tangent of the result) and must be linear in ts. Reverse mode
/// transposes that linear map, so the one rule serves grad, vjp, jvp, jacfwd, jacrev,
/// hessian and vmap; written as a generic lambda it is differentiated in turn (second
/// order). `name` names the function in errors: a tangent of the wrong shape or dtype is a
/// ShapeError / DTypeError. Example, a softplus whose derivative is finite at x = 1000:
/// `auto softplus = st::custom_jvp([](const auto& x) { return st::log1p(st::exp(-st::abs(x)))
/// + st::relu(x); }, [](const auto& x, const auto& t) { return std::pair{..., st::sigmoid(x) * t};
/// });`
template <class F, class Jvp>
auto custom_jvp(F f, Jvp f_jvp, std::string name = "custom_jvp function") {
  return Custom<detail::JvpRule<F, Jvp>>({std::move(f), std::move(f_jvp), std::move(name)});
}

/// f with a custom reverse-mode rule, as jax.custom_vjp: f_fwd(xs...) returns the pair
/// (f(xs...), residuals), residuals a tensor or a tree of tensors; f_bwd(residuals, ct)
/// returns the cotangent of each argument (one value for one argument, a tuple, pair or
/// vector of them for several), each of its argument's shape and dtype. Valid under every
/// transform: forward mode transposes f_bwd (linear in ct). `name` names the function in
/// errors: a cotangent of the wrong shape or dtype is a ShapeError / DTypeError, the wrong
/// number of them a ValueError. Example, an identity that clips gradients to [-1, 1]:
/// `st::custom_vjp([](const auto& x) { return x; }, [](const auto& x) { return std::pair{x,
/// x}; }, [](const auto&, const auto& g) { return st::clamp(g, -1.0, 1.0); })`.
template <class F, class Fwd, class Bwd>
auto custom_vjp(F f, Fwd f_fwd, Bwd f_bwd, std::string name = "custom_vjp function") {
  return Custom<detail::VjpRule<F, Fwd, Bwd>>(
      {std::move(f), std::move(f_fwd), std::move(f_bwd), std::move(name)});
}

/// f rematerialised, as jax.checkpoint: the same values and derivatives, but reverse mode
/// keeps only f's (float) arguments on the tape, and the backward pass records f again to
/// pull a cotangent through it. Memory for time: checkpoint each layer of a deep network
/// and a gradient keeps one layer's intermediates at a time. Forward mode and vmap run f as
/// it is. Example: `auto layer = st::checkpoint([&](const auto& h) { return st::tanh(st::matmul(h,
/// w)); });`
template <class F>
auto checkpoint(F f, std::string name = "checkpoint function") {
  return Custom<detail::CheckpointRule<F>>({std::move(f), std::move(name)});
}

}  // namespace strata
