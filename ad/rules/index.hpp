// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the indexing primitives, both linear: index_select (a gather
/// along one axis) and index_add (its transpose, a scatter-add).
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"

namespace strata::rules {

/// The primitive `index_select(x, axis, idx)`.
struct IndexSelect {
  int64_t axis;                         ///< the gathered axis
  Tensor idx;                           ///< the positions (a 1-D integer tensor)
  static constexpr bool linear = true;  ///< its jvp is the gather of the tangent

  /// "index_select", for errors.
  std::string_view name() const { return "index_select"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::index_select(x, axis, idx);
  }
  /// The transpose: the cotangent scatter-added into zeros of x's shape; keeps the indices
  /// and the shape, and makes the zeros when it runs.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[in = x.shape(), axis = axis, idx = idx](const T& ct) {
              const T zero = detail::filled<T>(0.0, in, ct.dtype(), ct.device());
              return Prims<T>::index_add(zero, axis, idx, ct);
            },
            {idx}};
  }
  /// The batching rule: the axis shifts past the batch axis.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::index_select(x.value(), axis, idx));
    return batching::with_example_axis(x, axis, "index_select", [&] {
      return batching::batched(
          Prims<T>::index_select(x.value(), batching::shift(x, axis, "index_select"), idx));
    });
  }
};

/// The primitive `index_add(x, axis, idx, src)`: x with src's slices added at idx.
struct IndexAdd {
  int64_t axis;                         ///< the axis added along
  Tensor idx;                           ///< the positions (a 1-D integer tensor)
  static constexpr bool linear = true;  ///< linear in (x, src): its jvp is index_add of tangents

  /// "index_add", for errors.
  std::string_view name() const { return "index_add"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x, const T& src) const {
    return Prims<T>::index_add(x, axis, idx, src);
  }
  /// The transposes: x's is the cotangent itself, src's the gather of the cotangent.
  template <Diffable T>
  Pullback<T> pullback(int which, const T&, const T&, const T&) const {
    if (which == 0) return {[](const T& ct) { return ct; }, {idx}};
    return {[axis = axis, idx = idx](const T& ct) { return Prims<T>::index_select(ct, axis, idx); },
            {idx}};
  }
  /// The batching rule: both operands batched, the axis shifted past the batch axis.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x, const Batched<T>& src) const {
    if (!x.batched() && !src.batched()) {
      return Batched<T>(Prims<T>::index_add(x.value(), axis, idx, src.value()));
    }
    const int64_t n = batching::batch_of<T>({&x, &src});
    return batching::with_example_axis(x, axis, "index_add", [&] {
      return batching::batched(Prims<T>::index_add(
          x.as_batch(n), batching::batch_axis(x, axis, "index_add"), idx, src.as_batch(n)));
    });
  }
};

}  // namespace strata::rules
