// SPDX-License-Identifier: MIT
#pragma once
/// What a training loop does between the gradient and the optimiser step: clip the gradients'
/// global norm, and set the learning rate of the step (linear warm-up, then cosine decay).
///
///   st::nn::WarmupCosine schedule{.max_lr = 1e-3, .min_lr = 1e-4, .warmup = 100, .decay = 2000};
///   double norm = st::nn::clip_grad_norm(grads, 1.0);
///   opt.set_lr(schedule(step));
///   opt.step(params, grads);
#include <cstdint>

#include "nn/params.hpp"

namespace strata::nn {

/// Scales every gradient by max_norm / (norm + 1e-6) when the global 2-norm of all of them
/// (as one vector) exceeds max_norm, as torch.nn.utils.clip_grad_norm_; returns that norm,
/// measured before clipping. The map's tensors are replaced by scaled copies (never written
/// in place, so no tensor the caller shares is changed). The sum of squares is taken in
/// double, in name order: the same result for any thread count. Throws ValueError for a
/// max_norm that is negative or not finite; a non-finite norm is returned and nothing scaled.
/// Example: `double n = st::nn::clip_grad_norm(grads, 1.0);`
double clip_grad_norm(Params& grads, double max_norm);

/// The learning rate of step `step` (from 0) under linear warm-up then cosine decay, as
/// nanoGPT's get_lr: max_lr (step + 1) / (warmup + 1) for step < warmup; then
/// min_lr + (max_lr - min_lr) (1 + cos(pi r)) / 2 with r = (step - warmup) / (decay - warmup)
/// until step `decay`; min_lr after it.
struct WarmupCosine {
  double max_lr = 1e-3;  ///< the rate at the end of the warm-up
  double min_lr = 1e-4;  ///< the rate from step `decay` on
  int64_t warmup = 100;  ///< warm-up steps
  int64_t decay = 5000;  ///< the step at which the decay reaches min_lr (>= warmup)
  /// The rate at `step`. Throws ValueError for negative counts, decay < warmup or a step < 0.
  double operator()(int64_t step) const;
};

}  // namespace strata::nn
