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

  static F lift_inner(const T& x) { return F(x); }
  static F constant(const Tensor& t) { return F(P::constant(t)); }
  static const Tensor& plain(const F& x) { return P::plain(x.primal()); }

  static F unary(UnaryOp op, const F& x) {
    T y = P::unary(op, x.primal());
    if (!x.tangent()) return F(y);
    return F(y, rules::unary(op, x.primal(), y, *x.tangent()), x.tag());
  }
  static F binary(BinaryOp op, const F& a, const F& b) {
    const uint64_t tag = detail::common_tag({a.tag(), b.tag()});
    T y = P::binary(op, a.primal(), b.primal());
    std::optional<T> t;
    if (a.tangent()) t = rules::binary(op, 0, a.primal(), b.primal(), y, *a.tangent());
    if (b.tangent()) {
      T tb = rules::binary(op, 1, a.primal(), b.primal(), y, *b.tangent());
      t = t ? P::binary(BinaryOp::add, *t, tb) : tb;
    }
    return F(y, t, tag);
  }
  static F where(const Tensor& cond, const F& a, const F& b) {
    const uint64_t tag = detail::common_tag({a.tag(), b.tag()});
    T y = P::where(cond, a.primal(), b.primal());
    if (!a.tangent() && !b.tangent()) return F(y);
    const T ta = a.tangent() ? *a.tangent() : zeros_like(a.primal());
    const T tb = b.tangent() ? *b.tangent() : zeros_like(b.primal());
    return F(y, P::where(cond, ta, tb), tag);
  }
  static F sum(const F& x, const Shape& axes, bool keepdims) {
    return map(x, [&](const T& v) { return P::sum(v, axes, keepdims); });
  }
  static F max(const F& x, const Shape& axes, bool keepdims) {
    T y = P::max(x.primal(), axes, keepdims);
    if (!x.tangent()) return F(y);
    const T w = rules::max_weights(x.primal(), y, axes, keepdims);
    return F(y, P::sum(P::binary(BinaryOp::mul, *x.tangent(), w), axes, keepdims), x.tag());
  }
  static F permute(const F& x, const Shape& dims) {
    return map(x, [&](const T& v) { return P::permute(v, dims); });
  }
  static F expand(const F& x, const Shape& shape) {
    return map(x, [&](const T& v) { return P::expand(v, shape); });
  }
  static F reshape(const F& x, const Shape& shape) {
    return map(x, [&](const T& v) { return P::reshape(v, shape); });
  }
  static F slice(const F& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
    return map(x, [&](const T& v) { return P::slice(v, axis, start, stop, step); });
  }
  static F pad(const F& x, const Pads& pads) {
    return map(x, [&](const T& v) { return P::pad(v, pads); });
  }
  static F cast(const F& x, DType dtype) {
    T y = P::cast(x.primal(), dtype);
    if (!x.tangent() || !is_floating(dtype)) return F(y);  // integers carry no derivative
    return F(y, P::cast(*x.tangent(), dtype), x.tag());
  }
  static F concat(const std::vector<F>& xs, int64_t axis) {
    std::vector<T> ys, ts;
    bool any = false;
    uint64_t tag = 0;
    for (const F& x : xs) {
      ys.push_back(x.primal());
      tag = detail::common_tag({tag, x.tag()});
      any = any || x.tangent();
    }
    T y = P::concat(ys, axis);
    if (!any) return F(y);
    for (const F& x : xs) ts.push_back(x.tangent() ? *x.tangent() : zeros_like(x.primal()));
    return F(y, P::concat(ts, axis), tag);
  }
  static F matmul(const F& a, const F& b) {
    const uint64_t tag = detail::common_tag({a.tag(), b.tag()});
    T y = P::matmul(a.primal(), b.primal());
    std::optional<T> t;
    if (a.tangent()) t = P::matmul(*a.tangent(), b.primal());
    if (b.tangent()) {
      T tb = P::matmul(a.primal(), *b.tangent());
      t = t ? P::binary(BinaryOp::add, *t, tb) : tb;
    }
    return F(y, t, tag);
  }
  static F index_select(const F& x, int64_t axis, const Tensor& idx) {
    return map(x, [&](const T& v) { return P::index_select(v, axis, idx); });
  }
  static F index_add(const F& x, int64_t axis, const Tensor& idx, const F& src) {
    const uint64_t tag = detail::common_tag({x.tag(), src.tag()});
    T y = P::index_add(x.primal(), axis, idx, src.primal());
    if (!x.tangent() && !src.tangent()) return F(y);
    const T tx = x.tangent() ? *x.tangent() : zeros_like(x.primal());
    const T ts = src.tangent() ? *src.tangent() : zeros_like(src.primal());
    return F(y, P::index_add(tx, axis, idx, ts), tag);
  }
  /// @}

 private:
  /// For linear primitives: the same map on primal and tangent.
  template <class Fn>
  static F map(const F& x, Fn&& fn) {
    T y = fn(x.primal());
    if (!x.tangent()) return F(y);
    return F(std::move(y), fn(*x.tangent()), x.tag());
  }
};

}  // namespace strata
