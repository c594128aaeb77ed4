// SPDX-License-Identifier: MIT
#include "nn/conv.hpp"

#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "nn/init.hpp"

namespace strata::nn {

using strata::detail::fail;

Conv::Conv(int64_t in_channels, int64_t out_channels, Shape kernel, ConvOptions options, bool bias,
           DType dtype, std::string prefix)
    : in_(in_channels),
      out_(out_channels),
      kernel_(std::move(kernel)),
      options_(std::move(options)),
      bias_(bias),
      dtype_(dtype),
      weight_name_(prefix + "weight"),
      bias_name_(prefix + "bias") {
  const int64_t g = options_.groups;
  if (g < 1 || in_ < 1 || out_ < 1 || in_ % g != 0 || out_ % g != 0) {
    fail<ValueError>("Conv", "in_channels = ", in_, " and out_channels = ", out_,
                     " must be positive multiples of groups = ", g, " (>= 1)");
  }
  if (kernel_.ndim() == 0) fail<ValueError>("Conv", "the kernel needs at least one axis");
  for (int64_t k : kernel_) {
    if (k < 1) fail<ValueError>("Conv", "kernel ", kernel_, " must be positive on every axis");
  }
  if (!is_floating(dtype)) {
    fail<DTypeError>("Conv", "parameters need a float dtype, got ", dtype_name(dtype));
  }
}

Shape Conv::weight_shape() const {
  Shape s{out_, in_ / options_.groups};
  for (int64_t k : kernel_) s.push_back(k);
  return s;
}

Params Conv::init(uint64_t seed) const {
  double fan_in = double(in_ / options_.groups);
  for (int64_t k : kernel_) fan_in *= double(k);
  const double bound = 1.0 / std::sqrt(fan_in);
  Params p;
  p.emplace(weight_name_,
            init::uniform(weight_shape(), -bound, bound, derive_seed(seed, 0), dtype_));
  if (bias_)
    p.emplace(bias_name_, init::uniform({out_}, -bound, bound, derive_seed(seed, 1), dtype_));
  return p;
}

MaxPool::MaxPool(Shape kernel, PoolOptions options)
    : kernel_(std::move(kernel)), options_(std::move(options)) {
  if (kernel_.ndim() == 0) fail<ValueError>("MaxPool", "the kernel needs at least one axis");
}

}  // namespace strata::nn
