// SPDX-License-Identifier: MIT
#pragma once
/// Layout: how a tensor's elements are addressed in its storage. Element
/// (i0, i1, ...) lives at offset + sum(ik * strides[k]). Strides are in
/// elements and may be zero (broadcast) or negative (flipped views). Every
/// view operation only rewrites the layout; no data moves.
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/shape.hpp"
#include "core/window.hpp"

namespace strata {

/// Shape, strides and offset of a view into a storage buffer.
struct Layout {
  Shape shape;         ///< size of each dimension
  Strides strides;     ///< elements to step per dimension (zero: broadcast, negative: flipped)
  int64_t offset = 0;  ///< storage index of element (0, 0, ...)

  /// A fresh row-major layout of the given shape at offset 0.
  static Layout contiguous(const Shape& shape);

  /// The number of dimensions.
  int64_t ndim() const { return shape.ndim(); }
  /// The number of elements, the product of the shape.
  int64_t numel() const;
  /// True when the elements are one dense row-major run; size-1 dims and the offset are ignored.
  bool is_contiguous() const;
  /// Lowest and one-past-highest storage index touched (offset..offset when empty).
  /// Throws ValueError naming op when the shape's element count or an offset
  /// it reaches does not fit in int64.
  std::pair<int64_t, int64_t> span(std::string_view op = "layout") const;

  /// Reorders the axes: result axis i is axis dims[i] of this layout ("like numpy.transpose").
  Layout permute(const Shape& dims) const;
  /// Swaps two axes.
  Layout transpose(int64_t a, int64_t b) const;
  /// Broadcasts to a larger shape with zero strides (NumPy rules, new dims on the left).
  Layout expand(const Shape& target) const;
  /// Python slice start:stop:step on one axis (clamped like Python; step may be negative).
  Layout slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
               int64_t step = 1) const;
  /// Picks one position on an axis and removes the axis (negative counts from the end).
  Layout select(int64_t axis, int64_t index) const;
  /// Reverses one axis (a negative stride).
  Layout flip(int64_t axis) const;
  /// Removes a size-1 axis.
  Layout squeeze(int64_t axis) const;
  /// Inserts a size-1 axis at position axis in [-ndim-1, ndim].
  Layout unsqueeze(int64_t axis) const;
  /// The sliding windows over the trailing w.kernel.size() axes (st::windows):
  /// [..., S1..Sk] -> [..., O1..Ok, K1..Kk], element [..., o, k] at [..., o * stride + k *
  /// dilation]; windows that overlap share elements. Throws as window_counts (op "windows").
  Layout windows(const Window& w) const;
  /// The same elements under a new shape without moving data, when the strides allow it.
  std::optional<Layout> reshape_view(const Shape& new_shape) const;
};

/// Resolves one -1 entry in a requested shape and checks the element count matches numel.
Shape infer_reshape(const Shape& requested, int64_t numel, const Shape& from, std::string_view op);

}  // namespace strata
