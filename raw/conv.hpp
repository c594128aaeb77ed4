// SPDX-License-Identifier: MIT
#pragma once
/// Accelerated convolution kernels: oneDNN's direct convolutions, for f32 tensors on the CPU.
///
/// st::conv is a composite (diff/conv.hpp: pad, the windows view, the im2col copy, matmul),
/// and that composite is what every device, dtype and transform level runs. Where these
/// kernels exist (has_conv_kernels), diff/conv.hpp runs the plain-tensor forward pass and the
/// first reverse pass above it through them instead: the im2col matrix is never written (for
/// a ResNet stem, 59 MB per call). They compute the same functions as the composite's
/// forward pass and its two pullbacks, each with its own summation order. Like every kernel
/// they cut their work from the shapes only (batch pieces, the weight gradient's partial sums
/// added in piece order), so the bits do not depend on the thread count.
#include <cstdint>

#include "core/window.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::raw {

/// Whether conv_forward, conv_input_grad and conv_weight_grad run for x and w: both f32 on the
/// CPU with 1 to 3 spatial axes and no empty axis, and the build has oneDNN.
bool has_conv_kernels(const RawTensor& x, const RawTensor& w);

/// y [N, C_out, O...] = conv(x, w) for x [N, C, S...] and w [C_out, C / groups, K...], the
/// output sizes O = (S + 2 padding - dilation (K - 1) - 1) / stride + 1 (floor).
RawTensor conv_forward(const RawTensor& x, const RawTensor& w, const ConvGeometry& g);
/// The gradient of sum(conv(x, w) * gy) with respect to x, of shape x_shape.
RawTensor conv_input_grad(const RawTensor& gy, const RawTensor& w, const Shape& x_shape,
                          const ConvGeometry& g);
/// The gradient of sum(conv(x, w) * gy) with respect to w, of shape w_shape.
RawTensor conv_weight_grad(const RawTensor& x, const RawTensor& gy, const Shape& w_shape,
                           const ConvGeometry& g);

}  // namespace strata::raw
