// SPDX-License-Identifier: MIT
#pragma once
/// Shape and strides: small vectors of int64_t with no rank limit, and the
/// arithmetic every layer needs on them (element counts, axes, broadcasting).
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/small_vector.hpp"

namespace strata {

/// Sizes (or strides, in elements) of a tensor's dimensions; inline up to 8, any rank.
class Shape : public detail::SmallVec<int64_t, 8> {
  using Base = detail::SmallVec<int64_t, 8>;

 public:
  using Base::Base;
  /// The shape of a 0-d tensor (no dims).
  Shape() = default;
  /// The given dims: `st::Shape{2, 3}`.
  Shape(std::initializer_list<int64_t> dims) : Base(dims) {}
  /// The dims of a std::vector (implicit, so a vector passes wherever a Shape is taken).
  Shape(const std::vector<int64_t>& dims) : Base(dims.begin(), dims.end()) {}  // NOLINT: implicit
  /// The dims as a std::vector, for code that wants one.
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  /// The number of dims (rank).
  int64_t ndim() const { return static_cast<int64_t>(size()); }
};
/// Strides, in elements, one per dim (same representation as Shape).
using Strides = Shape;

/// "[2, 3]"
std::string to_string(const Shape& s);
/// Prints to_string(s): `std::cout << x.shape()` shows "[2, 3]".
std::ostream& operator<<(std::ostream& os, const Shape& s);

/// Product of the dims; throws ValueError (naming op) on a negative dim or int64 overflow.
int64_t checked_numel(const Shape& s, std::string_view op);
/// Row-major strides of a fresh tensor of this shape.
Strides contiguous_strides(const Shape& s);
/// Maps axis in [-ndim, ndim) to [0, ndim); throws IndexError naming op otherwise.
int64_t normalize_axis(int64_t axis, int64_t ndim, std::string_view op);
/// Same, for an axis of a tensor of this shape; the message names the shape.
int64_t normalize_axis(int64_t axis, const Shape& shape, std::string_view op);
/// The NumPy broadcast of two shapes; throws ShapeError naming op and the first bad axis.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op);

}  // namespace strata
