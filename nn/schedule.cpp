// SPDX-License-Identifier: MIT
#include "nn/schedule.hpp"

#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "diff/ops.hpp"

namespace strata::nn {

using strata::detail::fail;

double clip_grad_norm(Params& grads, double max_norm) {
  if (!std::isfinite(max_norm) || max_norm < 0) {
    fail<ValueError>("clip_grad_norm", "max_norm = ", max_norm, " must be finite and >= 0");
  }
  double squares = 0;
  for (const auto& [name, g] : grads) {
    const Tensor f = g.dtype() == f64 ? g : g.to(f64);
    squares += sum(f * f).item<double>();
  }
  const double norm = std::sqrt(squares);
  if (!std::isfinite(norm)) return norm;
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1) {
    for (auto& [name, g] : grads) g = g * coef;
  }
  return norm;
}

double WarmupCosine::operator()(int64_t step) const {
  if (warmup < 0 || decay < warmup || step < 0) {
    fail<ValueError>("WarmupCosine",
                     "need 0 <= warmup <= decay and step >= 0, got warmup = ", warmup,
                     ", decay = ", decay, ", step = ", step);
  }
  if (step < warmup) return max_lr * double(step + 1) / double(warmup + 1);
  if (step >= decay) return min_lr;
  const double r = double(step - warmup) / double(decay - warmup);
  return min_lr + 0.5 * (1 + std::cos(std::numbers::pi * r)) * (max_lr - min_lr);
}

}  // namespace strata::nn
