// SPDX-License-Identifier: MIT
#pragma once
/// Pooling as composites (DESIGN §9): max_pool and avg_pool reduce the windows view over its
/// window axes (max of -inf padding; a sum divided by PyTorch's window counts), and
/// adaptive_avg_pool is one averaging matrix per spatial axis, applied by matmul. Each follows
/// torch.nn.functional's semantics (output sizes, ceil_mode, count_include_pad) over the
/// trailing kernel.size() axes of x, with any leading axes ([N, C, *S] or [C, *S]), and
/// differentiates to any order and maps under st::vmap.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "diff/matrix.hpp"
#include "diff/movement.hpp"
#include "diff/reductions.hpp"

namespace strata {

/// The options of st::max_pool and st::avg_pool (torch.nn.functional.max_pool*d's and
/// avg_pool*d's): per-axis entries as ConvOptions' (one per axis, one for all, or none).
/// Example: `st::max_pool(x, {2, 2}, {.stride = {1}, .ceil_mode = true})`.
struct PoolOptions {
  Shape stride{};                 ///< step between windows (default: the kernel)
  Shape padding{};                ///< before and after each axis, <= kernel / 2 (default 0)
  Shape dilation{};               ///< max_pool only: spacing of a window's taps (default 1)
  bool ceil_mode = false;         ///< round the output size up, as PyTorch does
  bool count_include_pad = true;  ///< avg_pool: padding counts in the divisor
  std::optional<int64_t> divisor_override{};  ///< avg_pool: divide every window by this instead
};

namespace detail {
/// A pooling's shapes, computed and checked once (diff/pool.cpp).
struct PoolPlan {
  Window window;        ///< kernel, stride and dilation over the trailing axes
  Pads pads;            ///< every axis: zeros on the leading ones, the padding (right: enough for
                        ///< the last window in ceil_mode) on the pooled ones
  Shape out;            ///< the pooled axes' sizes
  Shape axes;           ///< the window axes of the windows view (reduced)
  bool padded = false;  ///< whether pads has a nonzero entry
};
/// The plan of a pooling of x over the trailing kernel.size() axes; `dilated`: whether the op
/// takes a dilation (max_pool). Throws the errors max_pool and avg_pool document.
PoolPlan pool_plan(const Shape& x, const Shape& kernel, const PoolOptions& o, bool dilated,
                   std::string_view op);
/// avg_pool's divisors over the output positions [O...] (f64, PyTorch's counts).
Tensor pool_divisors(const Shape& x, const Shape& kernel, const PoolOptions& o, const PoolPlan& p);
/// adaptive_avg_pool's averaging matrix of one axis: [size, out], column o averaging the
/// positions [floor(o size / out), ceil((o + 1) size / out)).
Tensor adaptive_matrix(int64_t size, int64_t out, DType dtype, Device device);
/// The checks of adaptive_avg_pool: x has rank > output_size.ndim() >= 1, sizes >= 1.
void check_adaptive(const Shape& x, const Shape& output_size);
}  // namespace detail

/// Max pooling over the trailing kernel.size() axes of x (torch.nn.functional.max_pool1d/2d/3d
/// for x [N, C, *S] or [C, *S]): the max of each window, padding read as -inf, O = floor or
/// (ceil_mode) ceil of (S + 2 padding - dilation (K - 1) - 1) / stride, plus 1, the last window
/// starting inside the input or its left padding. Integer inputs give f32. The gradient of a
/// tie is split evenly (JAX's convention; PyTorch picks one). Throws ShapeError for x of rank
/// <= kernel.size() or an output size < 1, ValueError for padding > kernel / 2 or a size < 1.
/// Example: `st::max_pool(h, {2, 2})`.
template <Diffable T>
T max_pool(const T& x, const Shape& kernel, const PoolOptions& o = {}) {
  const detail::PoolPlan p = detail::pool_plan(x.shape(), kernel, o, true, "max_pool");
  const T f = detail::float_input(x);
  const T win = windows(p.padded ? pad(f, p.pads, -INFINITY) : f, p.window.kernel, p.window.stride,
                        p.window.dilation);
  return max(win, p.axes);
}

/// Average pooling over the trailing kernel.size() axes of x (torch.nn.functional.avg_pool1d/
/// 2d/3d): each window's sum divided by its size, PyTorch's way: with count_include_pad
/// (the default) the window's positions inside the padded input, else those inside x;
/// divisor_override replaces both. Output size as max_pool's (no dilation). Integer inputs give
/// f32. Throws as max_pool. Example: `st::avg_pool(h, {3}, {.stride = {2}, .padding = {1}})`.
template <Diffable T>
T avg_pool(const T& x, const Shape& kernel, const PoolOptions& o = {}) {
  const detail::PoolPlan p = detail::pool_plan(x.shape(), kernel, o, false, "avg_pool");
  const T f = detail::float_input(x);
  const T sums =
      sum(windows(p.padded ? pad(f, p.pads) : f, p.window.kernel, p.window.stride), p.axes);
  const Tensor d = detail::pool_divisors(x.shape(), kernel, o, p).to(f.dtype()).to(f.device());
  return sums / d;
}

/// Adaptive average pooling (torch.nn.functional.adaptive_avg_pool1d/2d/3d) of the trailing
/// output_size.size() axes of x to output_size: output position o of an axis of size L
/// averages [floor(o L / O), ceil((o + 1) L / O)). Applied one axis at a time as a product
/// with that axis's averaging matrix. Integer inputs give f32. Throws ShapeError for x of rank
/// <= output_size.size(), ValueError for a size < 1. Example: `st::adaptive_avg_pool(h, {1, 1})`.
template <Diffable T>
T adaptive_avg_pool(const T& x, const Shape& output_size) {
  detail::check_adaptive(x.shape(), output_size);
  T y = detail::float_input(x);
  const int64_t r = x.shape().ndim(), k = output_size.ndim();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t a = r - k + i, size = x.shape()[std::size_t(a)], out = output_size[i];
    if (size == out) continue;
    const Tensor m = detail::adaptive_matrix(size, out, y.dtype(), y.device());
    y = a == r - 1 ? matmul(y, m) : transpose(matmul(transpose(y, a, -1), m), a, -1);
  }
  return y;
}

}  // namespace strata
