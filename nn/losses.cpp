// SPDX-License-Identifier: MIT
#include "nn/losses.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "raw/ops.hpp"
#include "raw/trace.hpp"

namespace strata::nn::detail {

using strata::detail::fail;

void check_same_shape(const Shape& a, const Shape& b, std::string_view op) {
  if (a != b) {
    fail<ShapeError>(op, "prediction shape ", a, " and target shape ", b,
                     " differ (reshape one of them; losses do not broadcast)");
  }
}

namespace {
/// n (rows) and classes of logits [..., classes] with labels [...] of an integer dtype; rank 2
/// only unless `any_rank`.
std::pair<int64_t, int64_t> check_labels(const Shape& logits, const Tensor& labels,
                                         std::string_view op, bool any_rank) {
  if (logits.ndim() < 2 || (!any_rank && logits.ndim() != 2)) {
    fail<ShapeError>(op, "logits must be [batch, classes]", any_rank ? " or [..., classes]" : "",
                     ", got shape ", logits);
  }
  if (!labels.defined()) fail<ValueError>(op, "undefined labels tensor");
  if (labels.dtype() != i32 && labels.dtype() != i64) {
    fail<DTypeError>(op, "labels have dtype ", dtype_name(labels.dtype()),
                     ", need integer class indices (i32 or i64)");
  }
  Shape rows = logits;
  rows.erase(std::size_t(logits.ndim() - 1));
  if (labels.shape() != rows) {
    fail<ShapeError>(op, "labels of shape ", labels.shape(), " do not match logits of shape ",
                     logits, " (need ", rows, ": one label per row, the class axis last)");
  }
  int64_t n = 1;
  for (int64_t d : rows) n *= d;
  return {n, logits[std::size_t(logits.ndim() - 1)]};
}
}  // namespace

Tensor label_positions(const Shape& logits, const Tensor& labels, std::string_view op,
                       std::optional<int64_t> ignore_index) {
  const auto [n, classes] = check_labels(logits, labels, op, true);
  if (n == 0) fail<ValueError>(op, "empty batch (the mean over 0 rows is undefined)");
  if (!ignore_index) {
    // Row i's label at i * classes + label, as tensor ops (a jit plan replays them); the range
    // check reads the labels, so it runs as an effect (on every replay of a plan too).
    raw::trace::effect(op, {labels.raw()}, [op = std::string(op), classes = classes](auto in) {
      const std::vector<int64_t> given = Tensor(in[0]).to_vector<int64_t>();
      for (std::size_t i = 0; i < given.size(); ++i) {
        if (given[i] < 0 || given[i] >= classes) {
          fail<IndexError>(op, "label ", given[i], " at position ", i, " is out of range [0, ",
                           classes, ")");
        }
      }
    });
    const RawTensor rows =
        raw::arange(0, double(n) * double(classes), double(classes), i64, labels.device());
    const RawTensor given = raw::reshape(raw::cast(labels.raw(), i64), {n});
    return Tensor(raw::binary(BinaryOp::add, given, rows));
  }
  // Which rows count depends on the labels' values: read on the host (an error under st::jit).
  const std::vector<int64_t> given = labels.to_vector<int64_t>();
  std::vector<int64_t> pos;
  pos.reserve(given.size());
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (given[i] == *ignore_index) continue;
    if (given[i] < 0 || given[i] >= classes) {
      fail<IndexError>(op, "label ", given[i], " at position ", i, " is out of range [0, ", classes,
                       ") and is not ignore_index = ", *ignore_index);
    }
    pos.push_back(given[i] + int64_t(i) * classes);
  }
  return Tensor(raw::from_host(pos.data(), {int64_t(pos.size())}, DType::i64, labels.device()));
}

double accuracy(const Tensor& logits, const Tensor& labels) {
  const auto [n, classes] = check_labels(logits.shape(), labels, "accuracy", false);
  if (n == 0) fail<ValueError>("accuracy", "empty batch");
  (void)classes;
  const std::vector<int64_t> pred = argmax(logits, 1).to_vector<int64_t>();
  const std::vector<int64_t> want = labels.to_vector<int64_t>();
  int64_t hits = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) hits += pred[i] == want[i];
  return double(hits) / double(n);
}

}  // namespace strata::nn::detail
