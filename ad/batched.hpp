// SPDX-License-Identifier: MIT
#pragma once
/// Batched<T>: a value of T with an optional batch axis, and the batching
/// rule of every primitive (JAX's BatchTracer, DESIGN §8).
///
/// A batched value stores B examples stacked on a leading axis of its
/// physical value; shape() is the shape of one example, so the composite ops
/// and the jvp/vjp rules above it see the per-example shapes they were
/// written for. An unbatched value is the same for every example and is
/// stored once. Each primitive below is its rule's batching rule
/// (ad/rules/*.hpp): one call of the primitive on T for the whole batch; the batch axis is shifted
/// past the per-example axes an op names, and an unbatched operand is broadcast (a zero-stride
/// view) only where an op needs every operand batched.
///
/// jacfwd runs its function once on Forward<Batched<T>>: the primal is
/// unbatched, the tangent carries every basis vector at once, and the n
/// matrix-vector products of n jvps become one matrix-matrix product.
#include <array>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ad/level.hpp"

namespace strata {

/// A value of the level T for a batch of examples at once, with an optional leading batch
/// axis (none: the same for every example). jacfwd and jacrev run the user's function on
/// these, so n basis directions cost one batched pass. shape() is one example's shape.
template <Diffable T>
class Batched : public Ops<Batched<T>> {
 public:
  /// An empty unbatched value.
  Batched() = default;
  /// An unbatched value: the same for every example.
  explicit Batched(T value) : value_(std::move(value)) {}
  /// `value` with its leading axis the batch axis when `batched`.
  Batched(T value, bool batched) : value_(std::move(value)), batched_(batched) {}
  /// `value` with its leading axis the batch axis of the st::vmap call `tag` when `batched`.
  Batched(T value, bool batched, uint64_t tag)
      : value_(std::move(value)), batched_(batched), tag_(batched ? tag : 0) {}

  /// The identity basis: `value` is [B, ...shape] and its B examples, each flattened, are the
  /// rows of the B x B identity (jacfwd's tangents, jacrev's cotangents, when one leaf takes
  /// every basis vector). rules::Matmul takes a product with it as a copy of the other operand.
  static Batched identity(T value, uint64_t tag = 0) {
    Batched b(std::move(value), true, tag);
    b.identity_ = true;
    return b;
  }

  /// The physical value: [B, ...shape()] when batched, shape() when not.
  const T& value() const { return value_; }
  /// Whether value() has the leading batch axis.
  bool batched() const { return batched_; }
  /// The st::vmap call whose batch axis this is (0: jacfwd/jacrev's, or unbatched).
  uint64_t tag() const { return tag_; }
  /// Whether value() is known to be the identity basis (made by identity(), kept by reshape).
  bool is_identity() const { return identity_; }
  /// The number of examples (1 when unbatched).
  int64_t batch_size() const { return batched_ ? value_.shape()[0] : 1; }
  /// The value as [n, ...shape()]: an unbatched one is broadcast (a zero-stride view).
  T as_batch(int64_t n) const {
    return batched_ ? value_ : Prims<T>::expand(value_, detail::with_batch(n, value_.shape()));
  }
  /// The same value with its batch axis tagged as the vmap call `tag`'s.
  Batched retag(uint64_t tag) const {
    Batched b(value_, batched_, tag);
    b.identity_ = identity_;
    return b;
  }
  /// The shape of one example.
  Shape shape() const {
    if (!batched_) return value_.shape();
    const Shape s = value_.shape();
    return Shape(s.begin() + 1, s.end());
  }
  /// One example's number of dimensions.
  int64_t ndim() const { return shape().ndim(); }
  /// One example's number of elements.
  int64_t numel() const { return checked_numel(shape(), "numel"); }
  /// The dtype.
  DType dtype() const { return value_.dtype(); }
  /// The device.
  Device device() const { return value_.device(); }

 private:
  T value_;
  bool batched_ = false;
  uint64_t tag_ = 0;
  bool identity_ = false;
};

/// Batched<T> wraps the level T.
template <Diffable T>
struct inner_level<Batched<T>> {
  using type = T;  ///< T
};

namespace detail {
/// Throws: a batched value has no single plain value (an index tensor computed from
/// batched values; argmax of a batched value).
[[noreturn]] void batched_plain();
/// Throws: batched values of two different vmap (or jacfwd/jacrev) calls of one type met.
[[noreturn]] void mixed_batches(std::string_view op);
/// A fresh tag for one st::vmap call (never 0).
uint64_t new_batch_tag();

/// The batch tag shared by the batched operands (0 when none is batched); throws when two
/// calls' batches meet.
template <Diffable T>
uint64_t common_batch_tag(std::span<const Batched<T>* const> xs, std::string_view op) {
  std::optional<uint64_t> tag;
  for (const Batched<T>* x : xs) {
    if (!x->batched()) continue;
    if (tag && *tag != x->tag()) mixed_batches(op);
    tag = x->tag();
  }
  return tag.value_or(0);
}
/// common_batch_tag of a braced list of operands.
template <Diffable T>
uint64_t common_batch_tag(std::initializer_list<const Batched<T>*> xs, std::string_view op) {
  return common_batch_tag<T>(std::span<const Batched<T>* const>(xs.begin(), xs.size()), op);
}
}  // namespace detail

/// The Diffable primitives of Batched<T> (every one from detail::RulePrims, ad/level.hpp):
/// the batching rule of each primitive, one call of the primitive on T over the whole batch.
/// The per-example axes an op names shift past the batch axis, and an unbatched operand is
/// broadcast only where the op needs every operand batched. Results carry their operands'
/// vmap tag; batched operands of two different vmap calls throw ValueError.
template <Diffable T>
struct Prims<Batched<T>> : detail::RulePrims<Prims<Batched<T>>, Batched<T>> {
  using V = Batched<T>;  ///< the level these primitives act on
  using P = Prims<T>;    ///< the primitives of the level below

  /// The batching rule of `r` on the operands xs, stamped with the vmap tag they share.
  template <class Rule, class... Xs>
  static V apply(const Rule& r, const Xs&... xs) {
    const uint64_t tag = detail::common_batch_tag<T>({&xs...}, r.name());
    return r.batch(xs...).retag(tag);
  }
  /// apply() for a rule with Rule::outputs results: its batching rule gives every output.
  template <class Rule, class... Xs>
  static std::array<V, Rule::outputs> apply_multi(const Rule& r, const Xs&... xs) {
    const uint64_t tag = detail::common_batch_tag<T>({&xs...}, r.name());
    std::array<V, Rule::outputs> out = r.batch(xs...);
    for (V& v : out) v = v.retag(tag);
    return out;
  }
  /// apply() for a rule whose operands come as one list (concat).
  template <class Rule>
  static V apply_list(const Rule& r, const std::vector<V>& xs) {
    std::vector<const V*> ptrs;
    for (const V& x : xs) ptrs.push_back(&x);
    return r.batch(xs).retag(detail::common_batch_tag<T>(ptrs, r.name()));
  }

  /// @{
  /// The LevelHooks (diff/diffable.hpp) of Batched<T>: lift_inner(x) and constant(t) are
  /// unbatched; plain(x) throws ValueError for a batched x. Comparisons, masks and `where` of
  /// batched values stay batched (a comparison of two examples' values is that example's
  /// mask), computed level by level below.
  static V lift_inner(const T& x) { return V(x); }
  static V constant(const Tensor& t) { return V(P::constant(t)); }
  static const Tensor& plain(const V& x) {
    if (x.batched()) detail::batched_plain();
    return P::plain(x.value());
  }
  static bool mapped(const V& x) { return x.batched() || P::mapped(x.value()); }
  static const Tensor& stored(const V& x) { return P::stored(x.value()); }
  static V detach(const V& x) { return V(P::detach(x.value()), x.batched(), x.tag()); }
  static V constant_binary(BinaryOp op, const V& a, const V& b) {
    const uint64_t tag = detail::common_batch_tag<T>({&a, &b}, op_name(op));
    if (!a.batched() && !b.batched()) return V(P::constant_binary(op, a.value(), b.value()));
    const int64_t n = rules::batching::batch_of<T>({&a, &b});
    return V(P::constant_binary(op, a.as_batch(n), b.as_batch(n)), true, tag);
  }
  static V constant_unary(UnaryOp op, const V& x) {
    return V(P::constant_unary(op, x.value()), x.batched(), x.tag());
  }
  static V select(const V& cond, const V& a, const V& b) {
    const uint64_t tag = detail::common_batch_tag<T>({&cond, &a, &b}, "where");
    if (!cond.batched() && !a.batched() && !b.batched()) {
      return V(P::select(cond.value(), a.value(), b.value()));
    }
    const int64_t n = rules::batching::batch_of<T>({&cond, &a, &b});
    return V(P::select(cond.as_batch(n), a.as_batch(n), b.as_batch(n)), true, tag);
  }
  /// @}
};

}  // namespace strata
