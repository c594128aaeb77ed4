// SPDX-License-Identifier: MIT
#pragma once
/// The geometry of sliding windows over a tensor's trailing axes: the windows
/// view (Layout::windows, st::windows) and its transpose, raw::fold (col2im).
/// Convolution and pooling are built on the two (diff/conv.hpp, diff/pool.hpp).
#include <string_view>

#include "core/shape.hpp"

namespace strata {

/// Sliding windows over the trailing kernel.size() axes of a tensor: along axis i, window o
/// starts at o * stride[i] and holds kernel[i] elements dilation[i] apart. The three have one
/// entry per windowed axis, each >= 1.
struct Window {
  Shape kernel{};    ///< elements per window along each axis
  Shape stride{};    ///< the step between the starts of neighbouring windows
  Shape dilation{};  ///< the step between the elements of one window
};

/// The geometry of a convolution over k spatial axes (each Shape has k entries), as
/// torch.nn.functional.conv{1,2,3}d's arguments: x [N, C, S...], w [C_out, C / groups, K...].
/// The convolution primitives carry it (ad/rules/conv.hpp, raw/conv.hpp).
struct ConvGeometry {
  int64_t groups = 1;  ///< channel groups
  Shape stride;        ///< step between output positions
  Shape padding;       ///< zeros before (and after) each spatial axis
  Shape dilation;      ///< spacing of the kernel's taps
};

/// The number of windows along each windowed axis of a tensor of shape `shape` (its trailing
/// w.kernel.size() axes, S): (S - dilation (kernel - 1) - 1) / stride + 1. Throws ShapeError
/// naming op when w's entries do not have one per axis or the tensor has fewer axes, or when
/// a window is longer than its axis (with the fix), ValueError for an entry < 1.
Shape window_counts(const Shape& shape, const Window& w, std::string_view op);

/// The shape raw::fold(y, w, spatial) gives: y's leading axes, then spatial. Checks that y is
/// [..., O..., K...] with K = w.kernel and O = window_counts over spatial; ShapeError naming
/// "fold" otherwise.
Shape fold_shape(const Shape& y, const Window& w, const Shape& spatial);

namespace detail {
/// The per-axis entries of a window option over k axes: `given` itself with k entries, its one
/// entry repeated (as PyTorch takes an int), or `fallback` on every axis when empty;
/// ShapeError naming op and `what` otherwise.
Shape per_axis(const Shape& given, int64_t k, int64_t fallback, std::string_view what,
               std::string_view op);
}  // namespace detail

}  // namespace strata
