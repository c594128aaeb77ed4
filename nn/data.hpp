// SPDX-License-Identifier: MIT
#pragma once
/// A seeded mini-batch iterator over (inputs, targets) whose first axis is
/// the sample axis. Each epoch visits every sample once, in an order shuffled
/// from (seed, epoch): the same seed gives the same batches on every run.
///
///   st::nn::BatchIterator batches(x, y, /*batch_size=*/64, /*seed=*/0);
///   for (int epoch = 0; epoch < 10; ++epoch)
///     while (auto b = batches.next()) step(b->x, b->y);   // next() is empty at an epoch's end
#include <cstdint>
#include <optional>
#include <vector>

#include "diff/tensor.hpp"

namespace strata::nn {

/// One mini-batch: the selected rows of the inputs and of the targets.
struct Batch {
  Tensor x;  ///< inputs[indices]
  Tensor y;  ///< targets[indices]
};

/// Mini-batches of (inputs, targets) along axis 0, reshuffled each epoch from (seed, epoch).
class BatchIterator {
 public:
  /// inputs and targets must have the same (nonzero) length along axis 0 (ShapeError,
  /// ValueError otherwise); batch_size > 0 (ValueError). Without shuffle, samples come in order.
  /// With drop_last, a final batch smaller than batch_size is skipped.
  BatchIterator(Tensor inputs, Tensor targets, int64_t batch_size, uint64_t seed,
                bool shuffle = true, bool drop_last = false);

  /// The next batch of the current epoch, or nullopt when the epoch is over
  /// (the following call starts the next epoch with a new order).
  std::optional<Batch> next();

  /// The number of samples (the inputs' length along axis 0).
  int64_t num_samples() const { return n_; }
  /// Batches per epoch.
  int64_t num_batches() const;
  /// Epochs completed so far.
  int64_t epoch() const { return epoch_; }
  /// The sample order of the current epoch.
  const std::vector<int64_t>& order() const { return order_; }

 private:
  void start_epoch();
  Tensor inputs_, targets_;
  int64_t n_, batch_size_;
  uint64_t seed_;
  bool shuffle_, drop_last_;
  int64_t epoch_ = 0, pos_ = 0;
  std::vector<int64_t> order_;
};

/// A random permutation of 0..n-1 from seed (Fisher-Yates on Philox draws); ValueError
/// for a negative n or one whose positions do not fit in memory.
std::vector<int64_t> permutation(int64_t n, uint64_t seed);

}  // namespace strata::nn
