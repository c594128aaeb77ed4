// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the three convolution primitives: conv(x, w), its input's gradient
/// conv_input_grad(gy, w) and its weight's gradient conv_weight_grad(x, gy). Each is bilinear
/// and the transposes of each are the other two (as PyTorch's convolution_backward), so the
/// set is closed under differentiation to any order. Where a level below has no kernel for
/// them, diff/conv.hpp's composites run (detail::conv_prim and its two siblings).
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"
#include "diff/conv.hpp"

namespace strata::rules {

namespace conv_batching {

/// x [B, N, C, S...] (a batch of batched convolution operands) as [B N, C, S...].
template <Diffable T>
T merged(const Batched<T>& x) {
  const Shape s = x.value().shape();
  Shape m{s[0] * s[1]};
  for (int64_t i = 2; i < s.ndim(); ++i) m.push_back(s[i]);
  return reshape(x.value(), m);
}

/// y [B N, C, O...] back to a batch of B: [B, N, C, O...].
template <Diffable T>
Batched<T> split(const T& y, int64_t b) {
  Shape s{b, y.shape()[0] / b};
  for (int64_t i = 1; i < y.ndim(); ++i) s.push_back(y.shape()[i]);
  return batching::batched(reshape(y, s));
}

}  // namespace conv_batching

/// The primitive `conv(x, w)`: x [N, C, S...], w [C_out, C / groups, K...] -> [N, C_out, O...].
struct Conv {
  ConvGeometry geometry;                 ///< groups, stride, padding, dilation
  static constexpr bool linear = false;  ///< bilinear: its jvp is jvp() below

  /// "conv", for errors.
  std::string_view name() const { return "conv"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x, const T& w) const {
    return detail::conv_prim(x, w, geometry);
  }
  /// The jvp's term for operand `which`: the convolution with its tangent in its place.
  template <Diffable T>
  T jvp(int which, const T& x, const T& w, const T&, const T& t) const {
    return which == 0 ? detail::conv_prim(t, w, geometry) : detail::conv_prim(x, t, geometry);
  }
  /// The vjp for x (keeps w) or w (keeps x).
  template <Diffable T>
  Pullback<T> pullback(int which, const T& x, const T& w, const T&) const {
    if (which == 0) {
      return {[g = geometry, w, s = x.shape()](const T& ct) {
                return detail::conv_input_grad_prim(ct, w, s, g);
              },
              {detail::stored(w)}};
    }
    return {[g = geometry, x, s = w.shape()](const T& ct) {
              return detail::conv_weight_grad_prim(x, ct, s, g);
            },
            {detail::stored(x)}};
  }
  /// The batching rule: a batch of inputs for one weight is one convolution over B N
  /// examples; a batch of weights runs the composite on the batch.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x, const Batched<T>& w) const {
    if (!x.batched() && !w.batched())
      return Batched<T>(detail::conv_prim(x.value(), w.value(), geometry));
    if (!w.batched()) {
      return conv_batching::split(detail::conv_prim(conv_batching::merged(x), w.value(), geometry),
                                  x.batch_size());
    }
    return detail::conv_composite(
        x, w, detail::conv_plan(x.shape(), w.shape(), detail::conv_options(geometry)));
  }
};

/// The primitive `conv_input_grad(gy, w)`: gy [N, C_out, O...] -> [N, C, S...] (x_shape).
struct ConvInputGrad {
  ConvGeometry geometry;                 ///< groups, stride, padding, dilation
  Shape x_shape;                         ///< the convolution's input shape
  static constexpr bool linear = false;  ///< bilinear: its jvp is jvp() below

  /// "conv_input_grad", for errors.
  std::string_view name() const { return "conv_input_grad"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& gy, const T& w) const {
    return detail::conv_input_grad_prim(gy, w, x_shape, geometry);
  }
  /// The jvp's term for operand `which`.
  template <Diffable T>
  T jvp(int which, const T& gy, const T& w, const T&, const T& t) const {
    return which == 0 ? detail::conv_input_grad_prim(t, w, x_shape, geometry)
                      : detail::conv_input_grad_prim(gy, t, x_shape, geometry);
  }
  /// The vjp for gy (the convolution of the cotangent; keeps w) or w (the weight gradient of
  /// the cotangent as the input; keeps gy).
  template <Diffable T>
  Pullback<T> pullback(int which, const T& gy, const T& w, const T&) const {
    if (which == 0) {
      return {[g = geometry, w](const T& ct) { return detail::conv_prim(ct, w, g); },
              {detail::stored(w)}};
    }
    return {[g = geometry, gy, s = w.shape()](const T& ct) {
              return detail::conv_weight_grad_prim(ct, gy, s, g);
            },
            {detail::stored(gy)}};
  }
  /// The batching rule: as Conv's (a batch of gy for one weight is one call over B N).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& gy, const Batched<T>& w) const {
    if (!gy.batched() && !w.batched()) {
      return Batched<T>(detail::conv_input_grad_prim(gy.value(), w.value(), x_shape, geometry));
    }
    if (!w.batched()) {
      Shape merged_x = x_shape;
      merged_x[0] *= gy.batch_size();
      return conv_batching::split(
          detail::conv_input_grad_prim(conv_batching::merged(gy), w.value(), merged_x, geometry),
          gy.batch_size());
    }
    return detail::conv_input_grad_composite(gy, w, x_shape, geometry);
  }
};

/// The primitive `conv_weight_grad(x, gy)`: x [N, C, S...], gy [N, C_out, O...] -> w_shape.
struct ConvWeightGrad {
  ConvGeometry geometry;                 ///< groups, stride, padding, dilation
  Shape w_shape;                         ///< the convolution's weight shape
  static constexpr bool linear = false;  ///< bilinear: its jvp is jvp() below

  /// "conv_weight_grad", for errors.
  std::string_view name() const { return "conv_weight_grad"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x, const T& gy) const {
    return detail::conv_weight_grad_prim(x, gy, w_shape, geometry);
  }
  /// The jvp's term for operand `which`.
  template <Diffable T>
  T jvp(int which, const T& x, const T& gy, const T&, const T& t) const {
    return which == 0 ? detail::conv_weight_grad_prim(t, gy, w_shape, geometry)
                      : detail::conv_weight_grad_prim(x, t, w_shape, geometry);
  }
  /// The vjp for x (the input gradient of gy through the cotangent as a weight; keeps gy) or
  /// gy (the convolution of x with the cotangent; keeps x).
  template <Diffable T>
  Pullback<T> pullback(int which, const T& x, const T& gy, const T&) const {
    if (which == 0) {
      return {[g = geometry, gy, s = x.shape()](const T& ct) {
                return detail::conv_input_grad_prim(gy, ct, s, g);
              },
              {detail::stored(gy)}};
    }
    return {[g = geometry, x](const T& ct) { return detail::conv_prim(x, ct, g); },
            {detail::stored(x)}};
  }
  /// The batching rule: per-example weight gradients run the composite on the batch.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x, const Batched<T>& gy) const {
    if (!x.batched() && !gy.batched()) {
      return Batched<T>(detail::conv_weight_grad_prim(x.value(), gy.value(), w_shape, geometry));
    }
    return detail::conv_weight_grad_composite(x, gy, w_shape, geometry);
  }
};

}  // namespace strata::rules
