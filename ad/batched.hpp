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
#include <optional>
#include <vector>

#include "ad/rules.hpp"

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

  /// The physical value: [B, ...shape()] when batched, shape() when not.
  const T& value() const { return value_; }
  /// Whether value() has the leading batch axis.
  bool batched() const { return batched_; }
  /// The number of examples (1 when unbatched).
  int64_t batch_size() const { return batched_ ? value_.shape()[0] : 1; }
  /// The value as [n, ...shape()]: an unbatched one is broadcast (a zero-stride view).
  T as_batch(int64_t n) const {
    return batched_ ? value_ : Prims<T>::expand(value_, detail::with_batch(n, value_.shape()));
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
};

/// Batched<T> wraps the level T.
template <Diffable T>
struct inner_level<Batched<T>> {
  using type = T;  ///< T
};

namespace detail {
/// Throws: a batched value has no single plain value (a comparison or mask
/// inside jacfwd/jacrev may use primal values only).
[[noreturn]] void batched_plain();
}  // namespace detail

/// The Diffable primitives of Batched<T>: the batching rule of each primitive, one call of
/// the primitive on T over the whole batch.
template <Diffable T>
struct Prims<Batched<T>> {
  using V = Batched<T>;  ///< the level these primitives act on
  using P = Prims<T>;    ///< the primitives of the level below

  /// @{
  /// The Diffable primitive of the same name (diff/diffable.hpp) on Batched<T>: the per-example
  /// axes an op names shift past the batch axis, and an unbatched operand is broadcast only
  /// where the op needs every operand batched. plain(x) throws ValueError for a batched x (a
  /// comparison inside jacfwd/jacrev may use primal values only).

  static V lift_inner(const T& x) { return V(x); }
  static V constant(const Tensor& t) { return V(P::constant(t)); }
  static const Tensor& plain(const V& x) {
    if (x.batched()) detail::batched_plain();
    return P::plain(x.value());
  }

  static V unary(UnaryOp op, const V& x) { return rules::Unary{op}.batch(x); }
  static V binary(BinaryOp op, const V& a, const V& b) { return rules::Binary{op}.batch(a, b); }
  static V where(const Tensor& cond, const V& a, const V& b) {
    return rules::Where{cond}.batch(a, b);
  }
  static V sum(const V& x, const Shape& axes, bool keepdims) {
    return rules::Sum{axes, keepdims}.batch(x);
  }
  static V max(const V& x, const Shape& axes, bool keepdims) {
    return rules::Max{axes, keepdims}.batch(x);
  }
  static V permute(const V& x, const Shape& dims) { return rules::Permute{dims}.batch(x); }
  static V expand(const V& x, const Shape& shape) { return rules::Expand{shape}.batch(x); }
  static V reshape(const V& x, const Shape& shape) { return rules::Reshape{shape}.batch(x); }
  static V slice(const V& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
    return rules::Slice{axis, start, stop, step}.batch(x);
  }
  static V pad(const V& x, const Pads& pads) { return rules::Pad{pads}.batch(x); }
  static V cast(const V& x, DType dtype) { return rules::Cast{dtype}.batch(x); }
  static V concat(const std::vector<V>& xs, int64_t axis) { return rules::Concat{axis}.batch(xs); }
  static V matmul(const V& a, const V& b) { return rules::Matmul{}.batch(a, b); }
  static V index_select(const V& x, int64_t axis, const Tensor& idx) {
    return rules::IndexSelect{axis, idx}.batch(x);
  }
  static V index_add(const V& x, int64_t axis, const Tensor& idx, const V& src) {
    return rules::IndexAdd{axis, idx}.batch(x, src);
  }
  /// @}
};

}  // namespace strata
