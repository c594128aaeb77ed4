// SPDX-License-Identifier: MIT
#pragma once
/// Forward<T>: forward-mode dual numbers over any Diffable T.
///
/// A value is a primal and an optional tangent. No tangent means a constant:
/// no zeros are ever materialised for it. Each jvp call tags its values, and
/// combining tangents of two different calls is an error rather than a silent
/// sum (the classic perturbation confusion).
#include <atomic>
#include <cstdint>
#include <optional>

#include "ad/rules.hpp"

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

/// The Diffable primitives of Forward<T>: each computes the primal with Prims<T> and the
/// tangent with the primitive's jvp rule (ad/rules.hpp); constants stay constants.
template <Diffable T>
struct Prims<Forward<T>> {
  using F = Forward<T>;  ///< the level these primitives act on
  using P = Prims<T>;    ///< the primitives of the level below

  /// @{
  /// The Diffable primitive of the same name (diff/diffable.hpp) on Forward<T>: the primal by
  /// Prims<T>, the tangent by its jvp rule; lift_inner(x) is x as a constant, constant(t) a
  /// plain tensor as a constant, plain(x) the plain value underneath. Throws ValueError when
  /// tangents of two different jvp calls meet.
  /// mapped, stored, detach, constant_binary, constant_unary and select are the optional hooks of
  /// diff/operands.hpp (masks and constants of values batched by st::vmap, level by level).

  static F lift_inner(const T& x) { return F(x); }
  static F constant(const Tensor& t) { return F(P::constant(t)); }
  static const Tensor& plain(const F& x) { return P::plain(x.primal()); }

  // The hooks of values that may hold a batch of examples below (diff/operands.hpp): masks
  // and constants are computed on the primals, level by level, as constants.
  static bool mapped(const F& x) { return detail::mapped(x.primal()); }
  static const Tensor& stored(const F& x) { return detail::stored(x.primal()); }
  static F detach(const F& x) { return F(detail::detach(x.primal())); }
  static F constant_binary(BinaryOp op, const F& a, const F& b) {
    return F(detail::constant_binary(op, a.primal(), b.primal()));
  }
  static F constant_unary(UnaryOp op, const F& x) {
    return F(detail::constant_unary(op, x.primal()));
  }
  static F select(const F& cond, const F& a, const F& b) {
    return apply(rules::Select<T>{cond.primal()}, a, b);
  }

  static F unary(UnaryOp op, const F& x) { return apply(rules::Unary{op}, x); }
  static F binary(BinaryOp op, const F& a, const F& b) { return apply(rules::Binary{op}, a, b); }
  static F where(const Tensor& cond, const F& a, const F& b) {
    return apply(rules::Where{cond}, a, b);
  }
  static F sum(const F& x, const Shape& axes, bool keepdims) {
    return apply(rules::Sum{axes, keepdims}, x);
  }
  static F max(const F& x, const Shape& axes, bool keepdims) {
    return apply(rules::Max{axes, keepdims}, x);
  }
  static F permute(const F& x, const Shape& dims) { return apply(rules::Permute{dims}, x); }
  static F expand(const F& x, const Shape& shape) { return apply(rules::Expand{shape}, x); }
  static F reshape(const F& x, const Shape& shape) { return apply(rules::Reshape{shape}, x); }
  static F slice(const F& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
    return apply(rules::Slice{axis, start, stop, step}, x);
  }
  static F pad(const F& x, const Pads& pads) { return apply(rules::Pad{pads}, x); }
  static F cast(const F& x, DType dtype) { return apply(rules::Cast{dtype}, x); }
  static F concat(const std::vector<F>& xs, int64_t axis) {
    return apply_list(rules::Concat{axis}, xs);
  }
  static F matmul(const F& a, const F& b) { return apply(rules::Matmul{}, a, b); }
  static F index_select(const F& x, int64_t axis, const Tensor& idx) {
    return apply(rules::IndexSelect{axis, idx}, x);
  }
  static F index_add(const F& x, int64_t axis, const Tensor& idx, const F& src) {
    return apply(rules::IndexAdd{axis, idx}, x, src);
  }
  /// @}

 private:
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
  /// x's tangent, or zeros for a constant.
  static T tangent_or_zeros(const F& x) {
    return x.tangent() ? *x.tangent() : zeros_like(x.primal());
  }
};

}  // namespace strata
