// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the window primitives, both linear and each the other's transpose:
/// windows (the sliding-window view) and fold (col2im, the sum of the windows back into
/// place). Both act on trailing axes, so a batch axis in front is free.
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"

namespace strata::rules {

/// The trailing `k` dims of `shape`.
inline Shape trailing(const Shape& shape, int64_t k) {
  return Shape(shape.begin() + (shape.ndim() - k), shape.end());
}

/// The primitive `windows(x, w)`: [..., S...] -> [..., O..., K...].
struct Windows {
  Window window;                        ///< kernel, stride and dilation
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent

  /// "windows", for errors.
  std::string_view name() const { return "windows"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::windows(x, window);
  }
  /// The transpose: the cotangent's windows folded back onto x's spatial axes.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[w = window, spatial = trailing(x.shape(), window.kernel.ndim())](const T& ct) {
              return Prims<T>::fold(ct, w, spatial);
            },
            {}};
  }
  /// The batching rule: the windows cover trailing axes, so the batch axis goes along; an
  /// example must still have the windowed axes (checked on its own shape).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::windows(x.value(), window));
    (void)window_counts(x.shape(), window, "windows");
    return batching::batched(Prims<T>::windows(x.value(), window));
  }
};

/// The primitive `fold(y, w, spatial)`: [..., O..., K...] -> [..., spatial...].
struct Fold {
  Window window;                        ///< kernel, stride and dilation
  Shape spatial;                        ///< the folded axes' sizes
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent

  /// "fold", for errors.
  std::string_view name() const { return "fold"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& y) const {
    return Prims<T>::fold(y, window, spatial);
  }
  /// The transpose: the cotangent's windows.
  template <Diffable T>
  Pullback<T> pullback(int, const T&, const T&) const {
    return {[w = window](const T& ct) { return Prims<T>::windows(ct, w); }, {}};
  }
  /// The batching rule: the batch axis goes along, in front of the windows; an example must
  /// still be [..., O..., K...] (checked on its own shape).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& y) const {
    if (!y.batched()) return Batched<T>(Prims<T>::fold(y.value(), window, spatial));
    (void)fold_shape(y.shape(), window, spatial);
    return batching::batched(Prims<T>::fold(y.value(), window, spatial));
  }
};

}  // namespace strata::rules
