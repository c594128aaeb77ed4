// SPDX-License-Identifier: MIT
#pragma once
/// Scaled dot-product attention as a composite (DESIGN §9): two matmuls and a softmax that
/// stays finite for masked rows, so it differentiates to any order and maps under st::vmap.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "diff/activations.hpp"
#include "diff/matrix.hpp"
#include "diff/movement.hpp"

namespace strata {

namespace detail {
/// Checks q [..., L, E], k [..., S, E], v [..., S, Ev] (batch dims broadcast), the mask (bool
/// or float, broadcasting to [..., L, S]) and the scale for `op`, the name errors give;
/// returns the scale to use (1 / sqrt(E) when none is given). attention.cpp.
double check_attention(std::string_view op, const Shape& q, const Shape& k, const Shape& v,
                       const Tensor& mask, std::optional<double> scale);
/// The batch dims of q, k and v broadcast together, then [L, S]: the scores' shape.
Shape attention_scores_shape(std::string_view op, const Shape& q, const Shape& k, const Shape& v);

/// softmax over the last axis, except that a row whose every score is -inf gives zeros (and
/// zero derivatives) instead of NaN: PyTorch's _safe_softmax, which its
/// scaled_dot_product_attention uses since 2.5.
template <Diffable T>
T masked_softmax(const T& s) {
  const T m = stop_gradient(max(s, {-1}, true));
  const T dead = m == -INFINITY;  // a constant: which rows have nothing to attend to
  const T e = exp(s - where(dead, 0.0, m));
  return e / where(dead, 1.0, sum(e, {-1}, true));
}
}  // namespace detail

/// The attention weights softmax(q k^T * scale + mask), [..., L, S], for q [..., L, E] and
/// k [..., S, E], with scaled_dot_product_attention's options and masking rules (below):
/// scaled_dot_product_attention(q, k, v, ...) is matmul(attention_weights(q, k, ...), v). A
/// layer that drops out attention weights (nanoGPT's attn_dropout, PyTorch's dropout_p)
/// applies st::dropout between the two; the weights are also what one plots. Throws as
/// scaled_dot_product_attention. Example: `st::attention_weights(q, k, /*causal=*/true)`.
template <Diffable Q, Diffable K>
common_level_t<Q, K> attention_weights(const Q& q, const K& k, bool causal = false,
                                       const Tensor& mask = Tensor(),
                                       std::optional<double> scale = std::nullopt) {
  const double sc =
      detail::check_attention("attention_weights", q.shape(), k.shape(), k.shape(), mask, scale);
  const auto s0 = matmul(q * sc, transpose(k, -1, -2));  // [..., L, S]
  const bool bool_mask = mask.defined() && mask.dtype() == bool_;
  if (!causal && !mask.defined()) return softmax(s0, -1);
  auto s = bool_mask || !mask.defined() ? s0 : s0 + mask;
  const int64_t r = s.shape().ndim();
  const int64_t l = s.shape()[r - 2], n = s.shape()[r - 1];
  Tensor allowed;
  if (causal) allowed = detail::band_mask(l, n, 0, true, s.device());
  if (bool_mask) allowed = allowed.defined() ? logical_and(allowed, mask) : mask;
  if (allowed.defined()) s = where(allowed, s, -INFINITY);
  return detail::masked_softmax(s);
}

/// Scaled dot-product attention, softmax(q k^T * scale + mask) v
/// (torch.nn.functional.scaled_dot_product_attention without dropout: see attention_weights
/// for dropping out the weights), for q [..., L, E], k [..., S, E], v [..., S, Ev] (batch dims
/// broadcast) -> [..., L, Ev].
/// - `causal`: query i attends to keys j <= i only (the lower triangle of [L, S] aligned at the
///   top left, as PyTorch's is_causal; rows past the last key see every key).
/// - `mask` (a constant, optional): bool, true where a query may attend to a key (as PyTorch's
///   attn_mask), or float, added to the scores (-inf masks); it broadcasts to [..., L, S].
///   Unlike PyTorch, causal and a mask may be combined: both apply.
/// - `scale`: multiplies q k^T; 1 / sqrt(E) by default.
///
/// The softmax is shifted by each row's max. A row with nothing to attend to (every score
/// masked to -inf) gives a zero output row with zero derivatives, as PyTorch >= 2.5 does
/// (earlier versions gave NaN). Throws ShapeError for rank < 2, q and k with different E, k and
/// v with different S, batch dims or a mask that do not broadcast; DTypeError for an integer
/// mask; ValueError for a non-finite scale. Example:
/// `st::scaled_dot_product_attention(q, k, v, /*causal=*/true)` for q, k, v [B, H, T, D].
template <Diffable Q, Diffable K, Diffable V>
common_level_t<common_level_t<Q, K>, V> scaled_dot_product_attention(
    const Q& q, const K& k, const V& v, bool causal = false, const Tensor& mask = Tensor(),
    std::optional<double> scale = std::nullopt) {
  detail::check_attention("scaled_dot_product_attention", q.shape(), k.shape(), v.shape(), mask,
                          scale);
  return matmul(attention_weights(q, k, causal, mask, scale), v);
}

}  // namespace strata
