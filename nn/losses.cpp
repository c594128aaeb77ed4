// SPDX-License-Identifier: MIT
#include "nn/losses.hpp"

#include <vector>

#include "core/error.hpp"
#include "raw/ops.hpp"

namespace strata::nn::detail {

using strata::detail::fail;

void check_same_shape(const Shape& a, const Shape& b, std::string_view op) {
  if (a != b) {
    fail<ShapeError>(op, "prediction shape ", a, " and target shape ", b,
                     " differ (reshape one of them; losses do not broadcast)");
  }
}

namespace {
/// n (rows) and classes of logits [n, classes] with labels [n] of an integer dtype.
std::pair<int64_t, int64_t> check_labels(const Shape& logits, const Tensor& labels,
                                         std::string_view op) {
  if (logits.ndim() != 2) {
    fail<ShapeError>(op, "logits must be [batch, classes], got shape ", logits);
  }
  if (!labels.defined()) fail<ValueError>(op, "undefined labels tensor");
  if (labels.dtype() != i32 && labels.dtype() != i64) {
    fail<DTypeError>(op, "labels have dtype ", dtype_name(labels.dtype()),
                     ", need integer class indices (i32 or i64)");
  }
  if (labels.shape() != Shape{logits[0]}) {
    fail<ShapeError>(op, "labels of shape ", labels.shape(), " do not match logits of shape ",
                     logits, " (need [", logits[0], "])");
  }
  return {logits[0], logits[1]};
}
}  // namespace

Tensor label_positions(const Shape& logits, const Tensor& labels, std::string_view op) {
  const auto [n, classes] = check_labels(logits, labels, op);
  if (n == 0) fail<ValueError>(op, "empty batch (the mean over 0 rows is undefined)");
  std::vector<int64_t> pos = labels.to_vector<int64_t>();
  for (std::size_t i = 0; i < pos.size(); ++i) {
    if (pos[i] < 0 || pos[i] >= classes) {
      fail<IndexError>(op, "label ", pos[i], " at position ", i, " is out of range [0, ", classes,
                       ")");
    }
    pos[i] += int64_t(i) * classes;
  }
  return Tensor(raw::from_host(pos.data(), {n}, DType::i64, labels.device()));
}

double accuracy(const Tensor& logits, const Tensor& labels) {
  const auto [n, classes] = check_labels(logits.shape(), labels, "accuracy");
  if (n == 0) fail<ValueError>("accuracy", "empty batch");
  (void)classes;
  const std::vector<int64_t> pred = argmax(logits, 1).to_vector<int64_t>();
  const std::vector<int64_t> want = labels.to_vector<int64_t>();
  int64_t hits = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) hits += pred[i] == want[i];
  return double(hits) / double(n);
}

}  // namespace strata::nn::detail
