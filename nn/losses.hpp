// SPDX-License-Identifier: MIT
#pragma once
/// Losses, each a template over Diffable types (so differentiable to any
/// order), returning the mean over the batch as a 0-d tensor, and accuracy.
#include <cstdint>
#include <optional>
#include <string_view>

#include "diff/ops.hpp"

namespace strata::nn {

namespace detail {
void check_same_shape(const Shape& a, const Shape& b, std::string_view op);
/// The flat positions i * classes + labels[i] in logits [..., classes] seen as [n, classes],
/// as i64, after checking labels: integer, of logits' shape without the class axis, every value
/// in [0, classes); with ignore_index, the positions of the other labels only.
Tensor label_positions(const Shape& logits, const Tensor& labels, std::string_view op,
                       std::optional<int64_t> ignore_index = std::nullopt);
double accuracy(const Tensor& logits, const Tensor& labels);
}  // namespace detail

/// Mean squared error, mean((pred - target)^2). The shapes must be equal
/// (no broadcasting: [n, 1] against [n] is a ShapeError, not an [n, n] loss).
template <Diffable P, Diffable Y>
common_level_t<P, Y> mse(const P& pred, const Y& target) {
  detail::check_same_shape(pred.shape(), target.shape(), "mse");
  const auto d = pred - target;
  return mean(d * d);
}

/// Softmax cross-entropy from logits [n, classes] and integer labels [n] (i32 or i64, each in
/// [0, classes)): mean over i of -log_softmax(logits)[i, labels[i]]. Logits may have more
/// leading axes, [..., classes] with labels [...] (a language model's [B, T, V] with [B, T]):
/// the class axis is the last, as in nanoGPT's logits.view(-1, V) (PyTorch's own
/// cross_entropy takes classes on axis 1). The label entries are picked with st::take
/// (index_select) on the flattened log-probabilities, never by a one-hot product; log_softmax
/// shifts by the row max, so any logits are safe. Throws ShapeError for rank < 2 or labels of
/// another shape, DTypeError for float labels, IndexError for a label out of range, ValueError
/// for an empty batch.
template <Diffable T>
T cross_entropy(const T& logits, const Tensor& labels) {
  const Tensor positions = detail::label_positions(logits.shape(), labels, "cross_entropy");
  const T logp = reshape(log_softmax(logits, -1), {-1});
  return -mean(take(logp, positions, 0));
}
/// cross_entropy skipping the positions whose label is `ignore_index` (PyTorch's ignore_index,
/// there -100 by default: padding in a batch of sequences): the mean is over the other
/// positions only, and ignored positions get zero gradient. Ignored labels need not be valid
/// classes. When every label is ignored the mean over nothing is NaN, as in PyTorch.
/// Example: `st::nn::cross_entropy(logits, targets, /*ignore_index=*/-100)` for logits
/// [B, T, V] and targets [B, T].
template <Diffable T>
T cross_entropy(const T& logits, const Tensor& labels, int64_t ignore_index) {
  const Tensor positions =
      detail::label_positions(logits.shape(), labels, "cross_entropy", ignore_index);
  const T logp = reshape(log_softmax(logits, -1), {-1});
  return -mean(take(logp, positions, 0));
}

/// Binary cross-entropy from logits x and targets t in [0, 1] of the same
/// shape: mean(softplus(x) - x t), which equals -t log(sigmoid(x)) - (1 - t)
/// log(1 - sigmoid(x)) without overflow or log(0) for any x. Summed as
/// (max(x, 0) - x t) + log1p(e^-|x|), exact first, so a confident right answer
/// keeps its digits (f32 x = 10, t = 1: 4.5400e-5, not softplus(10) - 10's 4.58e-5).
template <Diffable T, Diffable Y>
common_level_t<T, Y> binary_cross_entropy(const T& logits, const Y& targets) {
  detail::check_same_shape(logits.shape(), targets.shape(), "binary_cross_entropy");
  return mean((maximum(logits, 0) - logits * targets) + log1p(exp(-abs(logits))));
}

/// The fraction of rows of logits [n, classes] whose argmax equals the label (in [0, 1]).
template <Diffable T>
double accuracy(const T& logits, const Tensor& labels) {
  return detail::accuracy(plain(logits), labels);
}

}  // namespace strata::nn
