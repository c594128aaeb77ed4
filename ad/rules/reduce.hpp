// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the reductions: sum (linear) and max.
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"

namespace strata::rules {

/// sum's transpose: the cotangent broadcast back over the reduced axes.
template <Diffable T>
T unreduce(const T& ct, const Shape& in_shape, const Shape& axes, bool keepdims) {
  T c = ct;
  if (!keepdims) {
    Shape kept = in_shape;
    for (int64_t a : axes) kept[std::size_t(normalize_axis(a, in_shape, "sum"))] = 1;
    c = Prims<T>::reshape(c, kept);
  }
  return Prims<T>::expand(c, in_shape);
}

/// max's weights: 1 / (number of maxima) at each maximum, 0 elsewhere (a constant).
template <Diffable T>
T max_weights(const T& x, const T& y, const Shape& axes, bool keepdims) {
  if (detail::mapped(x) || detail::mapped(y)) {
    // A batch of examples (st::vmap) has no plain value: the same weights, computed as
    // constants of T (comparisons keep the batch axes).
    const T xc = detail::detach(x);
    const T yk = unreduce(detail::detach(y), x.shape(), axes, keepdims);
    const T hit = Prims<T>::cast(detail::constant_binary(BinaryOp::eq, xc, yk), x.dtype());
    const T count = unreduce(Prims<T>::sum(hit, axes, true), x.shape(), axes, true);
    return Prims<T>::binary(BinaryOp::div, hit, count);
  }
  const Tensor& px = plain(x);
  const Tensor yk = unreduce(plain(y), px.shape(), axes, keepdims);
  const Tensor hit = cast(px == yk, px.dtype());
  const Tensor count = unreduce(Prims<Tensor>::sum(hit, axes, true), px.shape(), axes, true);
  return Prims<T>::constant(hit / count);
}

/// The primitive `sum(x, axes, keepdims)`, linear.
struct Sum {
  Shape axes;                           ///< the reduced axes
  bool keepdims;                        ///< whether they stay as size 1
  static constexpr bool linear = true;  ///< its jvp is the sum of the tangent

  /// "sum", for errors.
  std::string_view name() const { return "sum"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::sum(x, axes, keepdims);
  }
  /// The transpose: the cotangent broadcast back over the reduced axes.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[in = x.shape(), axes = axes, keepdims = keepdims](const T& ct) {
              return unreduce(ct, in, axes, keepdims);
            },
            {}};
  }
  /// The batching rule: the axes shift past the batch axis.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    return Batched<T>(Prims<T>::sum(x.value(), batching::shifted(x, axes, "sum"), keepdims),
                      x.batched());
  }
};

/// The primitive `max(x, axes, keepdims)`: the derivative flows to the maxima, split evenly
/// between ties (as JAX does).
struct Max {
  Shape axes;                            ///< the reduced axes
  bool keepdims;                         ///< whether they stay as size 1
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// "max", for errors.
  std::string_view name() const { return "max"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::max(x, axes, keepdims);
  }
  /// The jvp: the weighted sum of the tangent over the reduced axes.
  template <Diffable T>
  T jvp(int, const T& x, const T& y, const T& t) const {
    const T w = max_weights(x, y, axes, keepdims);
    return Prims<T>::sum(Prims<T>::binary(BinaryOp::mul, t, w), axes, keepdims);
  }
  /// The vjp: the cotangent broadcast back and weighted; keeps the weights (a new constant).
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T& y) const {
    return {[w = max_weights(x, y, axes, keepdims), in = x.shape(), axes = axes,
             keepdims = keepdims](const T& ct) {
              return Prims<T>::binary(BinaryOp::mul, unreduce(ct, in, axes, keepdims), w);
            },
            {}};
  }
  /// The batching rule: the axes shift past the batch axis.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    return Batched<T>(Prims<T>::max(x.value(), batching::shifted(x, axes, "max"), keepdims),
                      x.batched());
  }
};

}  // namespace strata::rules
