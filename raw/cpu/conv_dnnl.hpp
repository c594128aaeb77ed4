// SPDX-License-Identifier: MIT
#pragma once
/// The CPU kernels of raw/conv.hpp: oneDNN's direct convolutions (raw/cpu/conv_dnnl.cpp).
#include "core/window.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// Which of the three convolutions dnnl_conv computes.
enum class ConvPass {
  forward,     ///< y = conv(x, w): a = x, b = w, out = y's shape
  input_grad,  ///< the gradient of x: a = gy, b = w, out = x's shape
  weight_grad  ///< the gradient of w: a = x, b = gy, out = w's shape
};

/// Whether this build has oneDNN's convolutions.
bool dnnl_conv_available();

/// One of the three convolutions of contiguous f32 CPU tensors whose shapes raw/ops/conv.cpp
/// has checked, written into out (contiguous, of the result's shape).
void dnnl_conv(ConvPass pass, const RawTensor& out, const RawTensor& a, const RawTensor& b,
               const ConvGeometry& g);

}  // namespace strata::detail
