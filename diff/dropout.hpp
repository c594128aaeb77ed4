// SPDX-License-Identifier: MIT
#pragma once
/// Random masks from a st::Key (core/key.hpp), and inverted dropout. Element i of a mask is
/// decided by Philox of i under the key, so a mask is reproducible from its key and shape and
/// the same for any thread count and on every device.
#include <cstdint>

#include "core/key.hpp"
#include "diff/arithmetic.hpp"

namespace strata {

/// A bool tensor of `shape` whose elements are true with probability p, independently
/// (jax.random.bernoulli): element i is true when the uniform [0, 1) draw i of key (st::rand
/// with seed key.bits(), in f64) is below p. Throws ValueError for p outside [0, 1].
/// Example: `st::Tensor keep = st::bernoulli(key, 0.9, {64, 128});`
Tensor bernoulli(Key key, double p, const Shape& shape, Device device = default_device());

namespace detail {
/// The multiplier of inverted dropout: 0 where bernoulli(key, p, shape) is true, 1 / (1 - p)
/// elsewhere, in `dtype`. Checks p in [0, 1) (ValueError naming dropout).
Tensor dropout_scale(Key key, double p, const Shape& shape, DType dtype, Device device);
}  // namespace detail

/// Inverted dropout (torch.nn.functional.dropout in training): each element of x is zeroed with
/// probability p and the others are scaled by 1 / (1 - p), so the expected value is x. The
/// elements zeroed are exactly where st::bernoulli(key, p, x.shape()) is true; the same key
/// gives the same mask, so a training step is reproducible. p = 0 returns x. The mask is a
/// constant: the derivative is the same mask times 1 / (1 - p). Under st::vmap every example
/// gets the same mask (as jax.random with an unmapped key); give examples their own masks by
/// applying dropout to the whole batch. Integer inputs give f32. Throws ValueError for p
/// outside [0, 1) (p = 1 would drop everything: leave the layer out instead).
/// Example: `h = st::dropout(h, 0.1, st::fold_in(key, step));`
template <Diffable T>
T dropout(const T& x, double p, Key key) {
  const T f = detail::float_input(x);
  const Tensor scale = detail::dropout_scale(key, p, f.shape(), f.dtype(), f.device());
  if (p == 0) return f;
  return f * scale;
}

}  // namespace strata
