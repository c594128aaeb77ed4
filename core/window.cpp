// SPDX-License-Identifier: MIT
#include "core/window.hpp"

#include <string>

#include "core/error.hpp"

namespace strata {

Shape window_counts(const Shape& shape, const Window& w, std::string_view op) {
  const int64_t k = w.kernel.ndim();
  if (k == 0 || w.stride.ndim() != k || w.dilation.ndim() != k) {
    detail::fail<ShapeError>(op, "kernel ", w.kernel, ", stride ", w.stride, " and dilation ",
                             w.dilation, " need one entry per windowed axis (at least one)");
  }
  if (shape.ndim() < k) {
    detail::fail<ShapeError>(op, "a kernel of ", k, " axes ", w.kernel, " for a tensor of shape ",
                             shape,
                             "; the windows cover its trailing axes, so it needs rank >= ", k);
  }
  for (int64_t i = 0; i < k; ++i) {
    if (w.kernel[i] < 1 || w.stride[i] < 1 || w.dilation[i] < 1) {
      detail::fail<ValueError>(op, "kernel ", w.kernel, ", stride ", w.stride, " and dilation ",
                               w.dilation, " must be positive on every axis");
    }
  }
  Shape counts;
  const int64_t lead = shape.ndim() - k;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = shape[lead + i];
    // The window's extent, d (K - 1) + 1; longer than any axis when it overflows.
    int64_t extent = 0;
    const bool huge = __builtin_mul_overflow(w.dilation[i], w.kernel[i] - 1, &extent) ||
                      __builtin_add_overflow(extent, 1, &extent);
    if (huge || extent > s) {
      detail::fail<ShapeError>(
          op, "a window spans ", huge ? std::string("more than 2^63") : std::to_string(extent),
          " elements along axis ", lead + i, " (kernel ", w.kernel[i], ", dilation ", w.dilation[i],
          ") but the tensor of shape ", shape, " has ", s,
          " there; pad the input or use a smaller kernel or dilation");
    }
    counts.push_back((s - extent) / w.stride[i] + 1);
  }
  return counts;
}

namespace detail {
Shape per_axis(const Shape& given, int64_t k, int64_t fallback, std::string_view what,
               std::string_view op) {
  if (given.ndim() == k) return given;
  if (given.ndim() == 0 || given.ndim() == 1) {
    return Shape(std::size_t(k), given.ndim() == 0 ? fallback : given[0]);
  }
  fail<ShapeError>(op, what, " ", given, " has ", given.ndim(), " entries for ", k,
                   " spatial axes: give one per axis, or one for all");
}
}  // namespace detail

Shape fold_shape(const Shape& y, const Window& w, const Shape& spatial) {
  const int64_t k = spatial.ndim();
  if (w.kernel.ndim() != k) {
    detail::fail<ShapeError>("fold", "kernel ", w.kernel, " for the spatial shape ", spatial,
                             " (needs one entry per spatial axis)");
  }
  const Shape counts = window_counts(spatial, w, "fold");
  if (y.ndim() < 2 * k) {
    detail::fail<ShapeError>("fold", "windows of shape ", y, " for ", k,
                             " spatial axes: fold takes [..., O1..Ok, K1..Kk], rank >= ", 2 * k);
  }
  const int64_t lead = y.ndim() - 2 * k;
  Shape want(y.begin(), y.begin() + lead), out(y.begin(), y.begin() + lead);
  for (int64_t d : counts) want.push_back(d);
  for (int64_t d : w.kernel) want.push_back(d);
  for (int64_t d : spatial) out.push_back(d);
  if (want != y) {
    detail::fail<ShapeError>("fold", "windows of shape ", y, " do not match spatial shape ",
                             spatial, " with kernel ", w.kernel, ", stride ", w.stride,
                             " and dilation ", w.dilation, ", whose windows have shape ", want);
  }
  return out;
}

}  // namespace strata
