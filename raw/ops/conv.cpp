// SPDX-License-Identifier: MIT
// The accelerated convolutions (raw/conv.hpp): shapes checked, operands made contiguous, then
// the CPU's oneDNN kernels (raw/cpu/conv_dnnl.cpp); each call recorded when a jit trace records.
#include "raw/conv.hpp"

#include "core/error.hpp"
#include "raw/cpu/conv_dnnl.hpp"
#include "raw/ops.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using detail::fail;
using trace::Effect;

namespace {

/// ValueError unless a and b (defined) have kernels here (has_conv_kernels).
void require_kernels(const RawTensor& a, const RawTensor& b, std::string_view op) {
  detail::require_defined(a, op);
  detail::require_defined(b, op);
  if (!has_conv_kernels(a, b)) {
    fail<ValueError>(op, "no accelerated convolution for operands ", a.shape(), " ", a.dtype(),
                     " on ", a.device(), " and ", b.shape(), " ", b.dtype(), " on ", b.device(),
                     " (has_conv_kernels is false: call st::conv)");
  }
}

/// The output shape [N, C_out, O...] of x [N, C, S...] and w [C_out, C / groups, K...], after
/// checking that they fit g (st::conv checks this first, so a failure here is a caller's bug).
Shape output_shape(const Shape& x, const Shape& w, const ConvGeometry& g, std::string_view op) {
  const int64_t k = x.ndim() - 2;
  const bool fits = k >= 1 && w.ndim() == x.ndim() && g.groups >= 1 && g.stride.ndim() == k &&
                    g.padding.ndim() == k && g.dilation.ndim() == k && x[1] % g.groups == 0 &&
                    w[0] % g.groups == 0 && w[1] * g.groups == x[1];
  Shape out;
  if (fits) out = Shape{x[0], w[0]};
  for (int64_t i = 0; fits && i < k; ++i) {
    const int64_t extent = g.dilation[i] * (w[2 + i] - 1) + 1;
    const int64_t padded = x[2 + i] + 2 * g.padding[i];
    if (g.stride[i] < 1 || g.dilation[i] < 1 || g.padding[i] < 0 || extent > padded) break;
    out.push_back((padded - extent) / g.stride[i] + 1);
  }
  if (!fits || out.ndim() != x.ndim()) {
    fail<ShapeError>(op, "input ", x, " and weight ", w, " do not fit groups ", g.groups,
                     ", stride ", g.stride, ", padding ", g.padding, ", dilation ", g.dilation,
                     " (st::conv checks these first)");
  }
  return out;
}

void require_shape(const RawTensor& t, const Shape& want, std::string_view what,
                   std::string_view op) {
  if (t.shape() != want) {
    fail<ShapeError>(op, what, " has shape ", t.shape(), ", the convolution's is ", want);
  }
}

/// The kernel of `pass` on a and b made contiguous, into a new tensor of shape out.
RawTensor run(detail::ConvPass pass, const Shape& out, const RawTensor& a, const RawTensor& b,
              const ConvGeometry& g) {
  RawTensor result = empty(out, DType::f32, Device::cpu(), "conv");
  detail::dnnl_conv(pass, result, contiguous(a), contiguous(b), g);
  return result;
}

}  // namespace

bool has_conv_kernels(const RawTensor& x, const RawTensor& w) {
  if (!x.defined() || !w.defined() || x.dtype() != DType::f32 || w.dtype() != DType::f32 ||
      !x.device().is_cpu() || !w.device().is_cpu() || x.ndim() < 3 || x.ndim() > 5 ||
      w.ndim() != x.ndim() || x.numel() == 0 || w.numel() == 0) {
    return false;
  }
  return detail::dnnl_conv_available();
}

RawTensor conv_forward(const RawTensor& x, const RawTensor& w, const ConvGeometry& g) {
  return trace::call(
      "conv_forward", Effect::pure,
      [g](const RawTensor& x, const RawTensor& w) {
        require_kernels(x, w, "conv_forward");
        const Shape out = output_shape(x.shape(), w.shape(), g, "conv_forward");
        return run(detail::ConvPass::forward, out, x, w, g);
      },
      x, w);
}

RawTensor conv_input_grad(const RawTensor& gy, const RawTensor& w, const Shape& x_shape,
                          const ConvGeometry& g) {
  return trace::call(
      "conv_input_grad", Effect::pure,
      [g, x_shape](const RawTensor& gy, const RawTensor& w) {
        require_kernels(gy, w, "conv_input_grad");
        require_shape(gy, output_shape(x_shape, w.shape(), g, "conv_input_grad"), "the gradient",
                      "conv_input_grad");
        return run(detail::ConvPass::input_grad, x_shape, gy, w, g);
      },
      gy, w);
}

RawTensor conv_weight_grad(const RawTensor& x, const RawTensor& gy, const Shape& w_shape,
                           const ConvGeometry& g) {
  return trace::call(
      "conv_weight_grad", Effect::pure,
      [g, w_shape](const RawTensor& x, const RawTensor& gy) {
        require_kernels(x, gy, "conv_weight_grad");
        require_shape(gy, output_shape(x.shape(), w_shape, g, "conv_weight_grad"), "the gradient",
                      "conv_weight_grad");
        return run(detail::ConvPass::weight_grad, w_shape, x, gy, g);
      },
      x, gy);
}

}  // namespace strata::raw
