// SPDX-License-Identifier: MIT
#pragma once
/// Batched<T>: a value of T with an optional batch axis, and the batching
/// rule of every primitive (JAX's BatchTracer, DESIGN §8).
///
/// A batched value stores B examples stacked on a leading axis of its
/// physical value; shape() is the shape of one example, so the composite ops
/// and the jvp/vjp rules above it see the per-example shapes they were
/// written for. An unbatched value is the same for every example and is
/// stored once. Each primitive below maps its batched operands to one call
/// of the primitive on T: the batch axis is shifted past the per-example
/// axes an op names, and an unbatched operand is broadcast (a zero-stride
/// view) only where an op needs every operand batched.
///
/// jacfwd runs its function once on Forward<Batched<T>>: the primal is
/// unbatched, the tangent carries every basis vector at once, and the n
/// matrix-vector products of n jvps become one matrix-matrix product.
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "diff/ops.hpp"

namespace strata {

namespace detail {
/// [n, ...shape]: a shape with a leading batch axis.
inline Shape with_batch(int64_t n, const Shape& shape) {
  Shape s{n};
  for (int64_t d : shape) s.push_back(d);
  return s;
}
}  // namespace detail

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

  static V unary(UnaryOp op, const V& x) { return V(P::unary(op, x.value()), x.batched()); }
  static V binary(BinaryOp op, const V& a, const V& b) {
    if (!a.batched() && !b.batched()) return V(P::binary(op, a.value(), b.value()));
    const int64_t n = batch_of({&a, &b});
    return batched(P::binary(op, a.as_batch(n), b.as_batch(n)));
  }
  static V where(const Tensor& cond, const V& a, const V& b) {
    if (!a.batched() && !b.batched()) return V(P::where(cond, a.value(), b.value()));
    const int64_t n = batch_of({&a, &b});
    const Tensor c = Prims<Tensor>::expand(cond, detail::with_batch(n, cond.shape()));
    return batched(P::where(c, a.as_batch(n), b.as_batch(n)));
  }
  static V sum(const V& x, const Shape& axes, bool keepdims) {
    return V(P::sum(x.value(), shifted(x, axes, "sum"), keepdims), x.batched());
  }
  static V max(const V& x, const Shape& axes, bool keepdims) {
    return V(P::max(x.value(), shifted(x, axes, "max"), keepdims), x.batched());
  }
  static V permute(const V& x, const Shape& dims) {
    if (!x.batched()) return V(P::permute(x.value(), dims));
    if (dims.ndim() != x.ndim()) {
      detail::fail<ShapeError>("permute", "dims ", dims, " do not match the shape ", x.shape());
    }
    Shape d{0};
    for (int64_t a : shifted(x, dims, "permute")) d.push_back(a);
    return batched(P::permute(x.value(), d));
  }
  static V expand(const V& x, const Shape& shape) {
    if (!x.batched()) return V(P::expand(x.value(), shape));
    // Leading axes the expansion adds go after the batch axis.
    const Shape in = x.shape();
    const int64_t lead = shape.ndim() - in.ndim();
    if (lead < 0) {
      detail::fail<ShapeError>("expand", "cannot broadcast shape ", in, " to ", shape,
                               " (fewer dims)");
    }
    Shape padded;
    for (int64_t i = 0; i < lead; ++i) padded.push_back(1);
    for (int64_t d : in) padded.push_back(d);
    const int64_t n = x.batch_size();
    return batched(P::expand(P::reshape(x.value(), detail::with_batch(n, padded)),
                             detail::with_batch(n, shape)));
  }
  static V reshape(const V& x, const Shape& shape) {
    if (!x.batched()) return V(P::reshape(x.value(), shape));
    return batched(P::reshape(x.value(), detail::with_batch(x.batch_size(), shape)));
  }
  static V slice(const V& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
    if (!x.batched()) return V(P::slice(x.value(), axis, start, stop, step));
    return batched(P::slice(x.value(), shift(x, axis, "slice"), start, stop, step));
  }
  static V pad(const V& x, const Pads& pads) {
    if (!x.batched()) return V(P::pad(x.value(), pads));
    Pads p{{0, 0}};
    p.insert(p.end(), pads.begin(), pads.end());
    return batched(P::pad(x.value(), p));
  }
  static V cast(const V& x, DType dtype) { return V(P::cast(x.value(), dtype), x.batched()); }
  static V concat(const std::vector<V>& xs, int64_t axis) {
    std::vector<const V*> ptrs;
    for (const V& x : xs) ptrs.push_back(&x);
    std::vector<T> vs;
    const int64_t n = batch_of(ptrs);
    for (const V& x : xs) vs.push_back(n > 0 ? x.as_batch(n) : x.value());
    if (n == 0) return V(P::concat(vs, axis));
    return batched(P::concat(vs, batch_axis(xs[0], axis, "concat")));
  }
  static V matmul(const V& a, const V& b) {
    if (!a.batched() && !b.batched()) return V(P::matmul(a.value(), b.value()));
    const Shape sa = a.shape(), sb = b.shape();
    if (sa.ndim() < 2 || sb.ndim() < 2) {
      detail::fail<ShapeError>("matmul", "operands need rank >= 2, got shapes ", sa, " and ", sb,
                               " (use the composite st::matmul for vectors)");
    }
    if (sa[sa.ndim() - 1] != sb[sb.ndim() - 2]) {
      detail::fail<ShapeError>("matmul", "shapes ", sa, " and ", sb, " do not fit (inner dims ",
                               sa[sa.ndim() - 1], " vs ", sb[sb.ndim() - 2], ")");
    }
    // A batch of products with one shared matrix is one product: the batch
    // axis folds into the rows of a (a batched, b an unbatched matrix) or
    // the columns of b (a an unbatched matrix, b batched). Empty operands
    // take the general path (a -1 in the folding reshape needs elements).
    const bool fold = a.value().numel() > 0 && b.value().numel() > 0;
    if (fold && !b.batched() && sb.ndim() == 2) {
      Shape out = a.value().shape();
      out[out.ndim() - 1] = sb[1];
      return batched(
          P::reshape(P::matmul(P::reshape(a.value(), {-1, sa[sa.ndim() - 1]}), b.value()), out));
    }
    if (fold && !a.batched() && sa.ndim() == 2) {
      // b: [B, L..., k, n] -> [k, B, L..., n] -> [k, B * L * n];
      // the product: [m, B * L * n] -> [m, B, L..., n] -> [B, L..., m, n].
      const Shape pb = b.value().shape();
      const int64_t r = pb.ndim();
      Shape to_front{r - 2};
      for (int64_t i = 0; i < r; ++i) {
        if (i != r - 2) to_front.push_back(i);
      }
      const T cols = P::reshape(P::permute(b.value(), to_front), {sb[sb.ndim() - 2], -1});
      Shape prod_shape{sa[0]};
      for (int64_t i = 0; i < r; ++i) {
        if (i != r - 2) prod_shape.push_back(pb[i]);
      }
      Shape back;  // [m, B, L..., n] -> [B, L..., m, n]
      for (int64_t i = 1; i < r - 1; ++i) back.push_back(i);
      back.push_back(0);
      back.push_back(r - 1);
      return batched(P::permute(P::reshape(P::matmul(a.value(), cols), prod_shape), back));
    }
    // General: every batched operand as [B, 1..., ...shape] of one rank, so
    // the batch axis lines up; an unbatched operand broadcasts from the right.
    const int64_t rank = std::max(sa.ndim(), sb.ndim());
    auto aligned = [rank](const V& x) {
      if (!x.batched()) return x.value();
      Shape s;
      for (int64_t i = x.ndim(); i < rank; ++i) s.push_back(1);
      for (int64_t d : x.shape()) s.push_back(d);
      return P::reshape(x.value(), detail::with_batch(x.batch_size(), s));
    };
    batch_of({&a, &b});
    return batched(P::matmul(aligned(a), aligned(b)));
  }
  static V index_select(const V& x, int64_t axis, const Tensor& idx) {
    if (!x.batched()) return V(P::index_select(x.value(), axis, idx));
    return batched(P::index_select(x.value(), shift(x, axis, "index_select"), idx));
  }
  static V index_add(const V& x, int64_t axis, const Tensor& idx, const V& src) {
    if (!x.batched() && !src.batched()) return V(P::index_add(x.value(), axis, idx, src.value()));
    const int64_t n = batch_of({&x, &src});
    return batched(
        P::index_add(x.as_batch(n), batch_axis(x, axis, "index_add"), idx, src.as_batch(n)));
  }
  /// @}

 private:
  static V batched(T v) { return V(std::move(v), true); }
  /// The common batch size of the batched operands (0 when none is batched).
  static int64_t batch_of(std::initializer_list<const V*> xs) {
    return batch_of(std::span<const V* const>(xs.begin(), xs.size()));
  }
  static int64_t batch_of(std::span<const V* const> xs) {
    int64_t n = 0;
    for (const V* x : xs) {
      if (!x->batched()) continue;
      if (n != 0 && x->batch_size() != n) {
        detail::fail<ShapeError>("batch", "batch sizes ", n, " and ", x->batch_size(),
                                 " do not match");
      }
      n = x->batch_size();
    }
    return n;
  }
  /// A per-example axis of x as a physical one.
  static int64_t shift(const V& x, int64_t axis, std::string_view op) {
    return x.batched() ? batch_axis(x, axis, op) : axis;
  }
  /// A per-example axis of x as an axis of x's batched form.
  static int64_t batch_axis(const V& x, int64_t axis, std::string_view op) {
    return normalize_axis(axis, x.ndim(), op) + 1;
  }
  static Shape shifted(const V& x, const Shape& axes, std::string_view op) {
    Shape s;
    for (int64_t a : axes) s.push_back(shift(x, a, op));
    return s;
  }
};

}  // namespace strata
