// SPDX-License-Identifier: MIT
// The shape work of the poolings (diff/pool.hpp): PyTorch's output sizes
// (aten/src/ATen/native/Pool.h, pooling_output_shape) and avg_pool's divisors
// (AvgPoolKernel.cpp), checked and computed once.
#include "diff/pool.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace strata::detail {

namespace {
/// a / b rounded toward negative infinity (b > 0).
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace

PoolPlan pool_plan(const Shape& x, const Shape& kernel, const PoolOptions& o, bool dilated,
                   std::string_view op) {
  const int64_t k = kernel.ndim(), r = x.ndim(), lead = r - k;
  if (k == 0 || r <= k) {
    fail<ShapeError>(op, "kernel ", kernel, " for an input of shape ", x, ": the kernel has one ",
                     "entry per pooled axis (at least one) and the input a channel axis or more "
                     "before them ([N, C, *spatial] or [C, *spatial])");
  }
  const Shape stride = o.stride.ndim() == 0 ? kernel : per_axis(o.stride, k, 1, "stride", op);
  const Shape padding = per_axis(o.padding, k, 0, "padding", op);
  const Shape dilation = per_axis(o.dilation, k, 1, "dilation", op);
  if (!dilated && dilation != Shape(std::size_t(k), 1)) {
    fail<ValueError>(op, "dilation ", dilation,
                     " is max_pool's option (PyTorch's avg_pool has "
                     "none)");
  }
  if (o.divisor_override && *o.divisor_override == 0) {
    fail<ValueError>(op, "divisor_override must not be 0");
  }
  PoolPlan p;
  p.window = Window{kernel, stride, dilation};
  p.pads = Pads(std::size_t(lead), {0, 0});
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = x[lead + i], kern = kernel[i], st = stride[i], d = dilation[i];
    const int64_t pad = padding[i];
    if (kern < 1 || st < 1 || d < 1 || s < 1) {
      fail<ValueError>(op, "kernel ", kernel, ", stride ", stride, ", dilation ", dilation,
                       " and the pooled sizes of the input ", x, " must be >= 1");
    }
    if (pad < 0 || pad > kern / 2) {
      fail<ValueError>(op, "padding ", padding, " must be between 0 and half the kernel ", kernel,
                       " on every axis (as in PyTorch)");
    }
    if (kern > (int64_t{1} << 40) || d > (int64_t{1} << 20) || st > (int64_t{1} << 40) ||
        s > (int64_t{1} << 50)) {
      fail<ValueError>(op, "kernel ", kernel, ", stride ", stride, " or dilation ", dilation,
                       " too large for the input ", x);
    }
    const int64_t extent = d * (kern - 1) + 1;
    int64_t out = floor_div(s + 2 * pad - extent + (o.ceil_mode ? st - 1 : 0), st) + 1;
    // PyTorch's rule: the last window starts inside the input or its left padding.
    if (o.ceil_mode && (out - 1) * st >= s + pad) --out;
    if (out < 1) {
      fail<ShapeError>(op, "the output size along axis ", lead + i, " is ", out, " (input ", x,
                       ", kernel ", kernel, ", stride ", stride, ", padding ", padding,
                       ", dilation ", dilation, "); use a smaller kernel or more padding");
    }
    // Right padding: the padding, or in ceil_mode what the last window needs beyond it.
    const int64_t right = std::max(pad, (out - 1) * st + extent - s - pad);
    p.pads.emplace_back(pad, right);
    p.padded = p.padded || pad > 0 || right > 0;
    p.out.push_back(out);
    p.axes.push_back(r + i);
  }
  return p;
}

Tensor pool_divisors(const Shape& x, const Shape& kernel, const PoolOptions& o, const PoolPlan& p) {
  const int64_t k = kernel.ndim(), lead = x.ndim() - k;
  // Per axis, the divisor's factor at each output position (the divisor is their product).
  std::vector<std::vector<double>> factor(static_cast<std::size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = x[lead + i], st = p.window.stride[i], pad = p.pads[lead + i].first;
    for (int64_t j = 0; j < p.out[i]; ++j) {
      int64_t lo = j * st - pad, hi = std::min(lo + kernel[i], s + pad);
      const int64_t with_pad = hi - lo;
      lo = std::max<int64_t>(lo, 0);
      hi = std::min(hi, s);
      factor[std::size_t(i)].push_back(double(o.count_include_pad ? with_pad : hi - lo));
    }
  }
  const int64_t n = checked_numel(p.out, "avg_pool");
  std::vector<double> d(std::size_t(n), 1.0);
  for (int64_t flat = 0; flat < n; ++flat) {
    if (o.divisor_override) {
      d[std::size_t(flat)] = double(*o.divisor_override);
      continue;
    }
    int64_t rem = flat;
    for (int64_t i = k; i-- > 0;) {
      d[std::size_t(flat)] *= factor[std::size_t(i)][std::size_t(rem % p.out[i])];
      rem /= p.out[i];
    }
    // A window wholly outside the input sums to 0, as in PyTorch (never 0 / 0).
    if (d[std::size_t(flat)] == 0) d[std::size_t(flat)] = 1;
  }
  return from_vector(d, p.out);
}

Tensor adaptive_matrix(int64_t size, int64_t out, DType dtype, Device device) {
  std::vector<double> m(std::size_t(size * out), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t lo = o * size / out, hi = ((o + 1) * size + out - 1) / out;
    for (int64_t l = lo; l < hi; ++l) m[std::size_t(l * out + o)] = 1.0 / double(hi - lo);
  }
  return from_vector(m, {size, out}).to(dtype).to(device);
}

void check_adaptive(const Shape& x, const Shape& output_size) {
  const int64_t k = output_size.ndim(), r = x.ndim();
  if (k == 0 || r <= k) {
    fail<ShapeError>("adaptive_avg_pool", "output_size ", output_size, " for an input of shape ", x,
                     ": one size per pooled axis (at least one), and the input a channel axis "
                     "or more before them ([N, C, *spatial] or [C, *spatial])");
  }
  for (int64_t i = 0; i < k; ++i) {
    if (output_size[i] < 1 || x[r - k + i] < 1 || output_size[i] > (int64_t{1} << 31) ||
        x[r - k + i] > (int64_t{1} << 31)) {
      fail<ValueError>("adaptive_avg_pool", "output_size ", output_size,
                       " and the pooled sizes of the input ", x, " must be in [1, 2^31]");
    }
  }
}

}  // namespace strata::detail
