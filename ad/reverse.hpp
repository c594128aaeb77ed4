// SPDX-License-Identifier: MIT
#pragma once
/// Reverse<T>: reverse-mode values over any Diffable T.
///
/// A value is a primal, the tape of the transform call it belongs to, and
/// its node on that tape. No tape means a constant. Each primitive computes
/// its primal on T and records the pullbacks of its rule (ad/rules.hpp), in
/// T ops, on the tape; values of two different tapes never mix.
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "ad/tape.hpp"

namespace strata {

/// A reverse-mode value over the level T: a primal, the tape of the transform call that
/// records it and its node there (no tape: a constant). st::grad, st::vjp, st::jacrev and
/// st::hessian make these; a user's generic lambda receives them and applies ops as on a
/// Tensor. Shape, dtype and device are the primal's.
template <Diffable T>
class Reverse : public Ops<Reverse<T>> {
 public:
  /// An empty constant (a default-constructed primal).
  Reverse() = default;
  /// A constant (no tape).
  explicit Reverse(T primal) : primal_(std::move(primal)) {}
  /// Node `id` of `tape` (a constant when tape is null).
  Reverse(T primal, std::shared_ptr<Tape<T>> tape, int64_t id)
      : primal_(std::move(primal)), tape_(std::move(tape)), id_(tape_ ? id : -1) {}

  /// The value.
  const T& primal() const { return primal_; }
  /// The tape this value is recorded on (null for a constant).
  const std::shared_ptr<Tape<T>>& tape() const { return tape_; }
  /// The node on the tape (-1 for a constant).
  int64_t id() const { return id_; }
  /// True when no tape records this value.
  bool is_constant() const { return !tape_; }
  /// The primal's shape.
  Shape shape() const { return primal_.shape(); }
  /// The primal's number of dimensions.
  int64_t ndim() const { return primal_.shape().ndim(); }
  /// The primal's number of elements.
  int64_t numel() const { return checked_numel(primal_.shape(), "numel"); }
  /// The primal's dtype.
  DType dtype() const { return primal_.dtype(); }
  /// The primal's device.
  Device device() const { return primal_.device(); }

 private:
  T primal_;
  std::shared_ptr<Tape<T>> tape_;
  int64_t id_ = -1;
};

/// Reverse<T> wraps the level T.
template <Diffable T>
struct inner_level<Reverse<T>> {
  using type = T;  ///< T
};

namespace detail {
/// Throws the "two different transform calls" error.
[[noreturn]] void mixed_transform_calls(std::string_view op);
}  // namespace detail

/// The Diffable primitives of Reverse<T>: each computes the primal with Prims<T> and records
/// the pullbacks of its vjp rule (ad/rules.hpp) on the operands' tape.
template <Diffable T>
struct Prims<Reverse<T>> {
  using R = Reverse<T>;  ///< the level these primitives act on
  using P = Prims<T>;    ///< the primitives of the level below

  /// @{
  /// The Diffable primitive of the same name (diff/diffable.hpp) on Reverse<T>: the primal by
  /// Prims<T>, plus a tape node whose pullbacks are its vjp rule; lift_inner(x) is x as a
  /// constant, constant(t) a plain tensor as a constant, plain(x) the plain value underneath.
  /// Throws ValueError when values of two different transform calls meet.
  /// mapped, stored, detach, constant_binary, constant_unary and select are the optional hooks of
  /// diff/operands.hpp (masks and constants of values batched by st::vmap, level by level).

  static R lift_inner(const T& x) { return R(x); }
  static R constant(const Tensor& t) { return R(P::constant(t)); }
  static const Tensor& plain(const R& x) { return P::plain(x.primal()); }

  // The hooks of values that may hold a batch of examples below (diff/operands.hpp): masks
  // and constants are computed on the primals, level by level, as constants.
  static bool mapped(const R& x) { return detail::mapped(x.primal()); }
  static const Tensor& stored(const R& x) { return detail::stored(x.primal()); }
  static R detach(const R& x) { return R(detail::detach(x.primal())); }
  static R constant_binary(BinaryOp op, const R& a, const R& b) {
    return R(detail::constant_binary(op, a.primal(), b.primal()));
  }
  static R constant_unary(UnaryOp op, const R& x) {
    return R(detail::constant_unary(op, x.primal()));
  }
  static R select(const R& cond, const R& a, const R& b) {
    return apply(rules::Select<T>{cond.primal()}, a, b);
  }

  static R unary(UnaryOp op, const R& x) { return apply(rules::Unary{op}, x); }
  static R binary(BinaryOp op, const R& a, const R& b) { return apply(rules::Binary{op}, a, b); }
  static R where(const Tensor& cond, const R& a, const R& b) {
    return apply(rules::Where{cond}, a, b);
  }
  static R sum(const R& x, const Shape& axes, bool keepdims) {
    return apply(rules::Sum{axes, keepdims}, x);
  }
  static R max(const R& x, const Shape& axes, bool keepdims) {
    return apply(rules::Max{axes, keepdims}, x);
  }
  static R permute(const R& x, const Shape& dims) { return apply(rules::Permute{dims}, x); }
  static R expand(const R& x, const Shape& shape) { return apply(rules::Expand{shape}, x); }
  static R reshape(const R& x, const Shape& shape) { return apply(rules::Reshape{shape}, x); }
  static R slice(const R& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
    return apply(rules::Slice{axis, start, stop, step}, x);
  }
  static R pad(const R& x, const Pads& pads) { return apply(rules::Pad{pads}, x); }
  static R cast(const R& x, DType dtype) { return apply(rules::Cast{dtype}, x); }
  static R concat(const std::vector<R>& xs, int64_t axis) {
    return apply_list(rules::Concat{axis}, xs);
  }
  static R matmul(const R& a, const R& b) { return apply(rules::Matmul{}, a, b); }
  static R index_select(const R& x, int64_t axis, const Tensor& idx) {
    return apply(rules::IndexSelect{axis, idx}, x);
  }
  static R index_add(const R& x, int64_t axis, const Tensor& idx, const R& src) {
    return apply(rules::IndexAdd{axis, idx}, x, src);
  }
  /// @}

 private:
  /// The primitive of rule `r` on the operands xs: the primal by the rule on T, and a tape
  /// node with the rule's pullback for each operand that is not a constant.
  template <class Rule, class... Xs>
  static R apply(const Rule& r, const Xs&... xs) {
    auto tape = common_tape(std::array<const R*, sizeof...(Xs)>{&xs...}, r.name());
    T y = r(xs.primal()...);
    if (!tape || !rules::differentiable(r, xs.primal()...)) return R(std::move(y));
    const int64_t id = tape->add_node();
    int which = 0;
    auto edge = [&](const R& x) {
      if (!x.is_constant()) add_edge(*tape, x, r.pullback(which, xs.primal()..., y));
      ++which;
    };
    (edge(xs), ...);
    return R(std::move(y), std::move(tape), id);
  }
  /// apply() for a rule whose operands come as one list (concat).
  template <class Rule>
  static R apply_list(const Rule& r, const std::vector<R>& xs) {
    std::vector<const R*> ptrs;
    std::vector<T> ys;
    for (const R& x : xs) ptrs.push_back(&x), ys.push_back(x.primal());
    auto tape = common_tape(ptrs, r.name());
    T y = r(ys);
    if (!tape) return R(std::move(y));
    std::vector<rules::Pullback<T>> pbs = r.pullbacks(ys, y);
    const int64_t id = tape->add_node();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (!xs[i].is_constant()) add_edge(*tape, xs[i], std::move(pbs[i]));
    }
    return R(std::move(y), std::move(tape), id);
  }
  /// Adds x's edge, with pullback pb, to the node `tape` records last.
  static void add_edge(Tape<T>& tape, const R& x, rules::Pullback<T> pb) {
    tape.add_edge(x.id(), std::move(pb.fn));
    for (const Tensor& t : pb.saved) tape.save(t);
  }
  /// The tape shared by the non-constant operands (null when all are constants): xs is any
  /// range of const R* (no vector is built per op).
  template <class Ptrs>
  static std::shared_ptr<Tape<T>> common_tape(const Ptrs& xs, std::string_view op) {
    const std::shared_ptr<Tape<T>>* tape = nullptr;
    for (const R* x : xs) {
      if (!x->tape()) continue;
      if (tape && *tape != x->tape()) detail::mixed_transform_calls(op);
      tape = &x->tape();
    }
    return tape ? *tape : nullptr;
  }
};

}  // namespace strata
