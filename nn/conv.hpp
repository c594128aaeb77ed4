// SPDX-License-Identifier: MIT
#pragma once
/// The convolution and pooling layers in the functional style of nn/layers.hpp: Conv holds
/// its configuration and makes its parameters with init(seed); MaxPool holds none.
///
///   st::nn::Conv conv(1, 32, {3, 3}, {.padding = {1}}, true, st::f32, "conv1.");
///   st::nn::Params p = conv.init(seed);
///   auto h = st::relu(conv(p, x));               // x [N, 1, 28, 28] -> [N, 32, 28, 28]
///   auto y = st::nn::MaxPool({2, 2})(h);         // [N, 32, 14, 14]
#include <cstdint>
#include <string>

#include "diff/conv.hpp"
#include "diff/pool.hpp"
#include "nn/layers.hpp"
#include "nn/params.hpp"

namespace strata::nn {

// --- Conv -------------------------------------------------------------------
/// A convolution (torch.nn.Conv1d/2d/3d; the number of spatial axes is kernel.size()):
/// "weight" [out, in / groups, *kernel] and "bias" [out]; x [N, in, *S] (or [in, *S]) ->
/// [N, out, *O] through st::conv with the options given (stride, padding, dilation, groups).
class Conv {
 public:
  /// in and out channels (> 0, divisible by options.groups) and the kernel's size per spatial
  /// axis (each > 0): ValueError otherwise, naming the value. Parameter names are
  /// prefix + "weight" and prefix + "bias".
  Conv(int64_t in_channels, int64_t out_channels, Shape kernel, ConvOptions options = {},
       bool bias = true, DType dtype = f32, std::string prefix = "");

  /// PyTorch's default initialisation: weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
  /// fan_in = in / groups * prod(kernel), each from its own stream of seed.
  Params init(uint64_t seed) const;

  /// st::conv(x, weight, bias, options) with the parameters in p, at any level of T and X.
  /// Throws ValueError for a missing parameter, ShapeError for a wrong parameter or input
  /// shape. Example: `auto h = conv(params, x);`
  template <Diffable T, Diffable X>
  common_level_t<T, X> operator()(const ParamsOf<T>& p, const X& x) const {
    const T& w = parameter(p, weight_name_, "Conv");
    detail::check_param_shape(w.shape(), weight_shape(), weight_name_, "Conv");
    if (!bias_) return conv(x, w, options_);
    const T& b = parameter(p, bias_name_, "Conv");
    detail::check_param_shape(b.shape(), {out_}, bias_name_, "Conv");
    return conv(x, w, b, options_);
  }

  /// The input channels.
  int64_t in_channels() const { return in_; }
  /// The output channels.
  int64_t out_channels() const { return out_; }
  /// The kernel's size per spatial axis.
  const Shape& kernel() const { return kernel_; }
  /// The options given to st::conv.
  const ConvOptions& options() const { return options_; }
  /// The weight's shape, [out, in / groups, *kernel].
  Shape weight_shape() const;
  /// The weight's parameter name (prefix + "weight").
  const std::string& weight_name() const { return weight_name_; }
  /// The bias's parameter name (prefix + "bias").
  const std::string& bias_name() const { return bias_name_; }

 private:
  int64_t in_, out_;
  Shape kernel_;
  ConvOptions options_;
  bool bias_;
  DType dtype_;
  std::string weight_name_, bias_name_;
};

// --- MaxPool ----------------------------------------------------------------
/// Max pooling (torch.nn.MaxPool1d/2d/3d) over the trailing kernel.size() axes through
/// st::max_pool; the stride defaults to the kernel. Holds no parameters.
class MaxPool {
 public:
  /// The kernel per pooled axis and the options (stride, padding, dilation, ceil_mode); the
  /// shapes are checked when applied, against the input.
  explicit MaxPool(Shape kernel, PoolOptions options = {});
  /// st::max_pool(x, kernel, options). Example: `auto y = st::nn::MaxPool({2, 2})(h);`
  template <Diffable T>
  T operator()(const T& x) const {
    return max_pool(x, kernel_, options_);
  }
  /// The kernel per pooled axis.
  const Shape& kernel() const { return kernel_; }
  /// The options given to st::max_pool.
  const PoolOptions& options() const { return options_; }

 private:
  Shape kernel_;
  PoolOptions options_;
};

}  // namespace strata::nn
