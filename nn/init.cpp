// SPDX-License-Identifier: MIT
#include "nn/init.hpp"

#include <cmath>

#include "core/error.hpp"
#include "diff/ops.hpp"
#include "nn/params.hpp"

namespace strata::nn {

int64_t num_parameters(const Params& params) {
  int64_t n = 0;
  for (const auto& [name, t] : params) n += t.numel();
  return n;
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  // SplitMix64 (Steele et al.) over seed, then over the stream index.
  auto mix = [](uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  return mix(mix(seed) ^ stream);
}

namespace detail {
void missing_parameter(std::string_view op, const std::string& name, std::string_view available) {
  strata::detail::fail<ValueError>(op, "no parameter named '", name,
                                   "' (the map holds: ", available.empty() ? "nothing" : available,
                                   ")");
}
}  // namespace detail

namespace init {
namespace {

void require_float_dtype(DType dtype, std::string_view op) {
  if (!is_floating(dtype)) {
    strata::detail::fail<DTypeError>(op, "needs a float dtype, got ", dtype_name(dtype));
  }
}

}  // namespace

Tensor uniform(const Shape& shape, double lo, double hi, uint64_t seed, DType dtype) {
  require_float_dtype(dtype, "init::uniform");
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    strata::detail::fail<ValueError>("init::uniform", "bounds [", lo, ", ", hi,
                                     ") must be finite with lo <= hi");
  }
  // Draw in f64 and round once, so f32 and f64 parameters share their values.
  return (rand(shape, seed, f64) * (hi - lo) + lo).to(dtype);
}

Tensor normal(const Shape& shape, double mean, double stddev, uint64_t seed, DType dtype) {
  require_float_dtype(dtype, "init::normal");
  if (!(stddev >= 0) || !std::isfinite(stddev) || !std::isfinite(mean)) {
    strata::detail::fail<ValueError>("init::normal", "mean ", mean, " and standard deviation ",
                                     stddev, " must be finite, the deviation >= 0");
  }
  return (randn(shape, seed, f64) * stddev + mean).to(dtype);
}

std::pair<int64_t, int64_t> fans(const Shape& shape) {
  if (shape.ndim() == 0) {
    strata::detail::fail<ShapeError>("init::fans", "needs a tensor of rank >= 1, got shape ",
                                     shape);
  }
  if (shape.ndim() == 1) return {shape[0], shape[0]};
  int64_t receptive = 1;
  for (std::size_t d = 2; d < shape.size(); ++d) receptive *= shape[d];
  return {shape[1] * receptive, shape[0] * receptive};
}

namespace {
double positive_fan(int64_t fan, std::string_view op, const Shape& shape) {
  if (fan <= 0) {
    strata::detail::fail<ValueError>(op, "shape ", shape, " has no inputs (fan 0)");
  }
  return double(fan);
}
}  // namespace

Tensor xavier_uniform(const Shape& shape, uint64_t seed, DType dtype, double gain) {
  const auto [in, out] = fans(shape);
  const double a = gain * std::sqrt(6.0 / positive_fan(in + out, "init::xavier_uniform", shape));
  return uniform(shape, -a, a, seed, dtype);
}

Tensor xavier_normal(const Shape& shape, uint64_t seed, DType dtype, double gain) {
  const auto [in, out] = fans(shape);
  const double s = gain * std::sqrt(2.0 / positive_fan(in + out, "init::xavier_normal", shape));
  return normal(shape, 0.0, s, seed, dtype);
}

Tensor kaiming_uniform(const Shape& shape, uint64_t seed, DType dtype, double gain) {
  const double b =
      gain * std::sqrt(3.0 / positive_fan(fans(shape).first, "init::kaiming_uniform", shape));
  return uniform(shape, -b, b, seed, dtype);
}

Tensor kaiming_normal(const Shape& shape, uint64_t seed, DType dtype, double gain) {
  const double s = gain / std::sqrt(positive_fan(fans(shape).first, "init::kaiming_normal", shape));
  return normal(shape, 0.0, s, seed, dtype);
}

}  // namespace init
}  // namespace strata::nn
