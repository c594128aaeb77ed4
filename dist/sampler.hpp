// SPDX-License-Identifier: MIT
#pragma once
/// Each rank's part of every batch (PyTorch's DistributedSampler, by batch): step k's global
/// batch is exactly the batch st::nn::BatchIterator gives at step k for the same data,
/// global batch size and seed, and rank r gets its r-th contiguous part (sizes differing by
/// at most one, as numpy.array_split). So a data-parallel run and a one-process run on the
/// same global batches see the same samples, and the order depends only on the seed.
///
///   st::dist::ShardedBatches batches(x, y, /*global_batch=*/256, /*seed=*/1);
///   while (auto b = batches.next()) step(b->x, b->y);   // this rank's 256 / world_size rows
#include <cstdint>
#include <optional>

#include "nn/data.hpp"

namespace strata::dist {

/// This rank's rows of each global mini-batch of (inputs, targets) along axis 0.
class ShardedBatches {
 public:
  /// As st::nn::BatchIterator(inputs, targets, global_batch, seed, shuffle, drop_last) (and
  /// its errors), split over world ranks; rank and world default (-1) to the process
  /// group's (DistError before st::dist::init). ValueError unless 0 <= rank < world.
  ShardedBatches(Tensor inputs, Tensor targets, int64_t global_batch, uint64_t seed,
                 bool shuffle = true, bool drop_last = false, int rank = -1, int world = -1);

  /// This rank's part of the next global batch, or nullopt at an epoch's end (the next call
  /// starts the next epoch). A part may be empty when a batch has fewer rows than ranks.
  std::optional<nn::Batch> next();
  /// Global batches per epoch.
  int64_t num_batches() const { return order_.num_batches(); }
  /// Epochs completed so far.
  int64_t epoch() const { return order_.epoch(); }
  /// The rows of a global batch of `n` that rank `rank` of `world` takes: [first, last).
  static std::pair<int64_t, int64_t> part(int64_t n, int rank, int world);

 private:
  Tensor inputs_, targets_;
  nn::BatchIterator order_;  // over the sample positions: it decides every global batch
  int rank_, world_;
};

}  // namespace strata::dist
