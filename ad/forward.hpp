// SPDX-License-Identifier: MIT
#pragma once
/// Forward<T>: forward-mode dual numbers over any Diffable T.
///
/// A value is a primal and an optional tangent. No tangent means a constant:
/// no zeros are ever materialised for it. Each jvp call tags its values, and
/// combining tangents of two different calls is an error rather than a silent
/// sum (the classic perturbation confusion).
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "ad/level.hpp"

namespace strata {

/// A forward-mode dual value over the level T: a primal and an optional tangent (none: a
/// constant). st::jvp, st::jacfwd and st::hessian make these; a user's generic lambda
/// receives them and applies ops as on a Tensor. Shape, dtype and device are the primal's.
template <Diffable T>
class Forward : public Ops<Forward<T>> {
 public:
  /// An empty constant (a default-constructed primal).
  Forward() = default;
  /// A constant (no tangent).
  explicit Forward(T primal) : primal_(std::move(primal)) {}
  /// A value carrying `tangent` for the jvp call `tag`.
  Forward(T primal, std::optional<T> tangent, uint64_t tag)
      : primal_(std::move(primal)), tangent_(std::move(tangent)), tag_(tangent_ ? tag : 0) {}

  /// The value.
  const T& primal() const { return primal_; }
  /// The derivative along the jvp's direction; nullopt for a constant.
  const std::optional<T>& tangent() const { return tangent_; }
  /// The jvp call the tangent belongs to (0 for a constant).
  uint64_t tag() const { return tag_; }
  /// True when there is no tangent.
  bool is_constant() const { return !tangent_; }
  /// The primal's shape.
  Shape shape() const { return primal_.shape(); }
  /// The primal's number of dimensions.
  int64_t ndim() const { return primal_.shape().ndim(); }
  /// The primal's number of elements.
  int64_t numel() const { return checked_numel(primal_.shape(), "numel"); }
  /// The primal's dtype (the tangent has the same).
  DType dtype() const { return primal_.dtype(); }
  /// The primal's device.
  Device device() const { return primal_.device(); }

  /// A fresh tag for one jvp call (a counter: no state beyond uniqueness).
  static uint64_t new_tag() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  T primal_;
  std::optional<T> tangent_;
  uint64_t tag_ = 0;
};

/// Forward<T> wraps the level T.
template <Diffable T>
struct inner_level<Forward<T>> {
  using type = T;  ///< T
};

namespace detail {
/// The shared tag of the operands that carry tangents; throws when two calls mix.
uint64_t common_tag(std::initializer_list<uint64_t> tags);
}  // namespace detail

/// The Diffable primitives of Forward<T> (every one from detail::RulePrims, ad/level.hpp):
/// each computes the primal with the rule on T and the tangent with its jvp; constants stay
/// constants. Throws ValueError when tangents of two different jvp calls meet.
template <Diffable T>
struct Prims<Forward<T>> : detail::RulePrims<Prims<Forward<T>>, Forward<T>>,
                           detail::DualHooks<Prims<Forward<T>>, Forward<T>> {
  using F = Forward<T>;  ///< the level these primitives act on
  using P = Prims<T>;    ///< the primitives of the level below

  /// The primitive of rule `r` on the operands xs: the primal by the rule on T; the tangent
  /// by the rule applied to the tangents for a linear rule, else the sum of its jvp terms.
  template <class Rule, class... Xs>
  static F apply(const Rule& r, const Xs&... xs) {
    const uint64_t tag = detail::common_tag({xs.tag()...});
    T y = r(xs.primal()...);
    if (!(xs.tangent() || ...) || !rules::differentiable(r, xs.primal()...)) return F(std::move(y));
    if constexpr (Rule::linear) {
      return F(std::move(y), r(tangent_or_zeros(xs)...), tag);
    } else {
      std::optional<T> t;
      int which = 0;
      auto term = [&](const F& x) {
        if (x.tangent()) {
          T ti = r.jvp(which, xs.primal()..., y, *x.tangent());
          t = t ? P::binary(BinaryOp::add, *t, ti) : std::move(ti);
        }
        ++which;
      };
      (term(xs), ...);
      return F(std::move(y), std::move(t), tag);
    }
  }
  /// apply() for a rule with Rule::outputs results (an eigen-decomposition's values and
  /// vectors): the primals by the rule on T, the tangents by the rule on the tangents for a
  /// linear rule, else the sums of its jvp terms (each an array of one tangent per output).
  /// An output that is not floating (LU's pivots) is a constant.
  template <class Rule, class... Xs>
  static std::array<F, Rule::outputs> apply_multi(const Rule& r, const Xs&... xs) {
    constexpr std::size_t K = Rule::outputs;
    const uint64_t tag = detail::common_tag({xs.tag()...});
    std::array<T, K> ys = r(xs.primal()...);
    std::array<std::optional<T>, K> ts;
    if ((xs.tangent() || ...) && rules::differentiable(r, xs.primal()...)) {
      if constexpr (Rule::linear) {
        std::array<T, K> t = r(tangent_or_zeros(xs)...);
        for (std::size_t k = 0; k < K; ++k) ts[k] = std::move(t[k]);
      } else {
        int which = 0;
        auto term = [&](const F& x) {
          if (x.tangent()) {
            std::array<T, K> ti = r.jvp(which, xs.primal()..., ys, *x.tangent());
            for (std::size_t k = 0; k < K; ++k) {
              ts[k] = ts[k] ? P::binary(BinaryOp::add, *ts[k], ti[k]) : std::move(ti[k]);
            }
          }
          ++which;
        };
        (term(xs), ...);
      }
    }
    std::array<F, K> out;
    for (std::size_t k = 0; k < K; ++k) {
      const bool floating = is_floating(ys[k].dtype());
      out[k] = floating ? F(std::move(ys[k]), std::move(ts[k]), tag) : F(std::move(ys[k]));
    }
    return out;
  }
  /// apply() for a rule whose operands come as one list (concat), linear.
  template <class Rule>
  static F apply_list(const Rule& r, const std::vector<F>& xs) {
    std::vector<T> ys, ts;
    bool any = false;
    uint64_t tag = 0;
    for (const F& x : xs) {
      ys.push_back(x.primal());
      tag = detail::common_tag({tag, x.tag()});
      any = any || x.tangent();
    }
    T y = r(ys);
    if (!any) return F(std::move(y));
    for (const F& x : xs) ts.push_back(tangent_or_zeros(x));
    return F(std::move(y), r(ts), tag);
  }

 private:
  /// x's tangent, or zeros for a constant.
  static T tangent_or_zeros(const F& x) {
    return x.tangent() ? *x.tangent() : zeros_like(x.primal());
  }
};

}  // namespace strata
