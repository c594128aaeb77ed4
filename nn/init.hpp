// SPDX-License-Identifier: MIT
#pragma once
/// Initialisers: seeded random tensors for parameters, each the same on every
/// device and thread count (Philox underneath). fan_in / fan_out follow
/// PyTorch's torch.nn.init: for a weight of shape [out, in, k...], fan_in is
/// in * prod(k) and fan_out is out * prod(k); a 1-D tensor has fan_in =
/// fan_out = its length.
#include <cstdint>
#include <utility>

#include "diff/tensor.hpp"

/// Seeded parameter initialisers (torch.nn.init's).
namespace strata::nn::init {

/// Uniform on [lo, hi) (torch.nn.init.uniform_); ValueError unless lo <= hi.
Tensor uniform(const Shape& shape, double lo, double hi, uint64_t seed, DType dtype = f32);
/// Normal with the given mean and standard deviation >= 0 (torch.nn.init.normal_).
Tensor normal(const Shape& shape, double mean, double stddev, uint64_t seed, DType dtype = f32);

/// (fan_in, fan_out) of a weight shape (rank >= 1).
std::pair<int64_t, int64_t> fans(const Shape& shape);

/// Glorot & Bengio: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform(const Shape& shape, uint64_t seed, DType dtype = f32, double gain = 1.0);
/// Glorot & Bengio: N(0, gain^2 * 2 / (fan_in + fan_out)).
Tensor xavier_normal(const Shape& shape, uint64_t seed, DType dtype = f32, double gain = 1.0);
/// He et al. (fan_in mode): U(-b, b), b = gain * sqrt(3 / fan_in); gain sqrt(2) suits ReLU.
Tensor kaiming_uniform(const Shape& shape, uint64_t seed, DType dtype = f32,
                       double gain = 1.4142135623730951);
/// He et al. (fan_in mode): N(0, gain^2 / fan_in).
Tensor kaiming_normal(const Shape& shape, uint64_t seed, DType dtype = f32,
                      double gain = 1.4142135623730951);

}  // namespace strata::nn::init
