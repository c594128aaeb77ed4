// SPDX-License-Identifier: MIT
// The shape work of the convolutions (diff/conv.hpp): every check
// and every derived shape in one place, so the templates only apply primitives.
#include "diff/conv.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace strata::detail {

namespace {

/// The product of dims [from, to) of s.
int64_t product(const Shape& s, int64_t from, int64_t to) {
  int64_t n = 1;
  for (int64_t i = from; i < to; ++i) n *= s[i];
  return n;
}

/// The per-axis options of a convolution over k axes, checked.
struct AxisOptions {
  Shape stride, padding, dilation, output_padding;
};
AxisOptions axis_options(const ConvOptions& o, int64_t k, std::string_view op) {
  AxisOptions a{per_axis(o.stride, k, 1, "stride", op), per_axis(o.padding, k, 0, "padding", op),
                per_axis(o.dilation, k, 1, "dilation", op),
                per_axis(o.output_padding, k, 0, "output_padding", op)};
  for (int64_t i = 0; i < k; ++i) {
    if (a.stride[i] < 1 || a.dilation[i] < 1) {
      fail<ValueError>(op, "stride ", a.stride, " and dilation ", a.dilation,
                       " must be >= 1 on every axis");
    }
    if (a.padding[i] < 0 || a.output_padding[i] < 0) {
      fail<ValueError>(op, "padding ", a.padding, " and output_padding ", a.output_padding,
                       " must be >= 0 on every axis");
    }
  }
  if (o.groups < 1) fail<ValueError>(op, "groups = ", o.groups, " must be >= 1");
  return a;
}

/// The checks both convolutions share: ranks (x [N, C, *S], w of rank k + 2), a non-empty
/// kernel and spatial extent, and channel counts divisible by groups.
void check_ranks(const Shape& x, const Shape& w, int64_t groups, std::string_view op,
                 std::string_view weight_layout) {
  const int64_t r = w.ndim();
  if (r < 3 || x.ndim() != r) {
    fail<ShapeError>(op, "input of shape ", x, " and weight of shape ", w, ": the weight is ",
                     weight_layout, " and the input [N, C, *spatial] with as many spatial axes");
  }
  for (int64_t i = 2; i < r; ++i) {
    if (w[i] < 1 || x[i] < 1) {
      fail<ShapeError>(op, "input of shape ", x, " and weight of shape ", w,
                       ": every spatial and kernel size must be >= 1");
    }
  }
  if (x[1] % groups != 0) {
    fail<ShapeError>(op, "input of shape ", x, " has ", x[1],
                     " channels, not divisible by groups = ", groups);
  }
}

/// [0, 1, 2, then 3 + k .. 3 + 2k, then 3 .. 3 + k]: swaps two runs of k axes after three.
Shape swap_runs(int64_t k) {
  Shape p{0, 1, 2};
  for (int64_t i = 0; i < k; ++i) p.push_back(3 + k + i);
  for (int64_t i = 0; i < k; ++i) p.push_back(3 + i);
  return p;
}

}  // namespace

bool conv_unbatched(const Shape& x, const Shape& w, std::string_view op) {
  if (w.ndim() >= 3 && x.ndim() == w.ndim() - 1) return true;
  if (w.ndim() >= 3 && x.ndim() == w.ndim()) return false;
  fail<ShapeError>(op, "input of shape ", x, " and weight of shape ", w,
                   ": the weight has rank k + 2 for k spatial axes (k >= 1) and the input is "
                   "[N, C, *spatial] (rank k + 2) or [C, *spatial] (rank k + 1)");
}

void check_conv_bias(const Shape& b, int64_t c, std::string_view op) {
  if (b != Shape{c}) {
    fail<ShapeError>(op, "bias of shape ", b, " for ", c, " output channels: it is [", c, "]");
  }
}

ConvPlan conv_plan(const Shape& x, const Shape& w, const ConvOptions& o) {
  const std::string_view op = "conv";
  const int64_t r = w.ndim(), k = r - 2;
  const AxisOptions a = axis_options(o, std::max<int64_t>(k, 1), op);
  check_ranks(x, w, o.groups, op, "[C_out, C_in / groups, *kernel]");
  const int64_t g = o.groups, n = x[0], c = x[1], cout = w[0];
  if (w[1] * g != c || cout % g != 0) {
    fail<ShapeError>(op, "input of shape ", x, " has ", c, " channels and weight of shape ", w,
                     " with groups = ", g, " takes ", w[1] * g,
                     " (the weight is [C_out, C_in / groups, *kernel], C_out divisible by groups)");
  }
  for (int64_t i = 0; i < k; ++i) {
    if (a.output_padding[i] != 0) {
      fail<ValueError>(op, "output_padding ", a.output_padding, " is conv_transpose's option");
    }
  }
  ConvPlan p;
  p.groups = g;
  p.cout = cout;
  p.window = Window{Shape(w.begin() + 2, w.end()), a.stride, a.dilation};
  p.pads = {{0, 0}, {0, 0}};
  Shape o_sizes;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = x[2 + i], pad = a.padding[i], kern = w[2 + i], d = a.dilation[i];
    int64_t padded = 0, extent = 0;
    const bool huge = __builtin_add_overflow(s, 2 * pad, &padded) || pad > (INT64_MAX >> 2) ||
                      __builtin_mul_overflow(d, kern - 1, &extent) ||
                      __builtin_add_overflow(extent, 1, &extent);
    if (huge)
      fail<ValueError>(op, "padding ", a.padding, " or dilation ", a.dilation, " overflows");
    if (extent > padded) {
      fail<ShapeError>(op, "the kernel spans ", extent, " positions along spatial axis ", i,
                       " (kernel ", kern, ", dilation ", d, ") but the padded input has ", padded,
                       " (input ", x, ", padding ", pad,
                       "); use more padding, a smaller kernel or a smaller dilation");
    }
    o_sizes.push_back((padded - extent) / a.stride[i] + 1);
    p.pads.emplace_back(pad, pad);
    p.padded = p.padded || pad > 0;
  }
  const int64_t kn = product(w, 2, r), l = product(o_sizes, 0, k);
  p.grouped = Shape{n, g, c / g};
  for (int64_t d : o_sizes) p.grouped.push_back(d);
  for (int64_t d : p.window.kernel) p.grouped.push_back(d);
  p.cols_order = swap_runs(k);
  p.cols = Shape{n, g, c / g * kn, l};
  p.wmat = Shape{g, cout / g, c / g * kn};
  p.out = Shape{n, cout};
  for (int64_t d : o_sizes) p.out.push_back(d);
  return p;
}

ConvPlan conv_transpose_plan(const Shape& x, const Shape& w, const ConvOptions& o) {
  const std::string_view op = "conv_transpose";
  const int64_t r = w.ndim(), k = r - 2;
  const AxisOptions a = axis_options(o, std::max<int64_t>(k, 1), op);
  check_ranks(x, w, o.groups, op, "[C_in, C_out / groups, *kernel]");
  const int64_t g = o.groups, n = x[0], cin = x[1];
  if (w[0] != cin) {
    fail<ShapeError>(op, "input of shape ", x, " has ", cin, " channels but weight of shape ", w,
                     " takes ", w[0], " (the weight is [C_in, C_out / groups, *kernel])");
  }
  const int64_t cout = w[1] * g;
  ConvPlan p;
  p.groups = g;
  p.cout = cout;
  p.window = Window{Shape(w.begin() + 2, w.end()), a.stride, a.dilation};
  p.pads = {{0, 0}, {0, 0}};
  p.out = Shape{n, cout};
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = x[2 + i], kern = w[2 + i], st = a.stride[i], d = a.dilation[i];
    const int64_t pad = a.padding[i], extra = a.output_padding[i];
    if (extra >= st && extra >= d) {
      fail<ValueError>(op, "output_padding ", a.output_padding, " must be smaller than the stride ",
                       a.stride, " or the dilation ", a.dilation, " on every axis");
    }
    int64_t full = 0, extent = 0;
    const bool huge = __builtin_mul_overflow(s - 1, st, &full) ||
                      __builtin_mul_overflow(d, kern - 1, &extent) ||
                      __builtin_add_overflow(full, extent + 1, &full) || pad > (INT64_MAX >> 2);
    if (huge) fail<ValueError>(op, "the output size along spatial axis ", i, " overflows");
    const int64_t size = full + extra - 2 * pad;
    if (size < 1) {
      fail<ShapeError>(op, "the output size along spatial axis ", i, " is ", size, " = (", s,
                       " - 1) * stride ", st, " - 2 * padding ", pad, " + dilation ", d,
                       " * (kernel ", kern, " - 1) + output_padding ", extra, " + 1 (input ", x,
                       "); use less padding");
    }
    p.spatial.push_back(full);
    // fold fills [0, full); the result is [pad, pad + size) of it, zeros past its end.
    const int64_t past = std::max<int64_t>(0, pad + size - full);
    p.pads.emplace_back(0, past);
    p.padded = p.padded || past > 0;
    p.crop_start.push_back(pad);
    p.out.push_back(size);
  }
  const int64_t kn = product(w, 2, r), l = product(x, 2, r);
  p.wmat = Shape{g, cin / g, cout / g * kn};
  p.xmat = Shape{n, g, cin / g, l};
  p.unfolded = Shape{n, g, cout / g};
  for (int64_t d : p.window.kernel) p.unfolded.push_back(d);
  for (int64_t i = 0; i < k; ++i) p.unfolded.push_back(x[2 + i]);
  p.cols_order = swap_runs(k);
  p.windows = Shape{n, cout};
  for (int64_t i = 0; i < k; ++i) p.windows.push_back(x[2 + i]);
  for (int64_t d : p.window.kernel) p.windows.push_back(d);
  return p;
}

ConvGeometry conv_geometry(const ConvOptions& o, int64_t k) {
  return {o.groups, per_axis(o.stride, k, 1, "stride", "conv"),
          per_axis(o.padding, k, 0, "padding", "conv"),
          per_axis(o.dilation, k, 1, "dilation", "conv")};
}

ConvOptions conv_options(const ConvGeometry& g) {
  return {.stride = g.stride, .padding = g.padding, .dilation = g.dilation, .groups = g.groups};
}

Shape input_grad_output_padding(const Shape& x_shape, const Shape& gy_shape, const Shape& w_shape,
                                const ConvGeometry& g) {
  Shape extra;
  for (int64_t i = 0; i < g.stride.ndim(); ++i) {
    const int64_t reach = (gy_shape[2 + i] - 1) * g.stride[i] - 2 * g.padding[i] +
                          g.dilation[i] * (w_shape[2 + i] - 1) + 1;
    extra.push_back(x_shape[2 + i] - reach);
  }
  return extra;
}

}  // namespace strata::detail
