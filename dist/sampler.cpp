// SPDX-License-Identifier: MIT
#include "dist/sampler.hpp"

#include "dist/process_group.hpp"
#include "raw/ops.hpp"

namespace strata::dist {

namespace {
// 0 .. n-1 for the n samples, after BatchIterator's own checks of the data (and its errors).
Tensor positions(const Tensor& inputs, const Tensor& targets, int64_t global_batch,
                 bool drop_last) {
  nn::BatchIterator(inputs, targets, global_batch, 0, /*shuffle=*/false, drop_last);
  return arange(0, double(inputs.shape()[0]), 1, i64, inputs.device());
}
}  // namespace

ShardedBatches::ShardedBatches(Tensor inputs, Tensor targets, int64_t global_batch, uint64_t seed,
                               bool shuffle, bool drop_last, int rank, int world)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      order_(positions(inputs_, targets_, global_batch, drop_last),
             positions(inputs_, targets_, global_batch, drop_last), global_batch, seed, shuffle,
             drop_last),
      rank_(rank < 0 ? dist::rank() : rank),
      world_(world < 0 ? dist::world_size() : world) {
  if (world_ < 1 || rank_ < 0 || rank_ >= world_) {
    strata::detail::fail<ValueError>("st::dist::ShardedBatches", "rank ", rank_, " of ", world_,
                                     " ranks");
  }
}

std::pair<int64_t, int64_t> ShardedBatches::part(int64_t n, int rank, int world) {
  const int64_t base = n / world, extra = n % world;
  const int64_t first = rank * base + std::min<int64_t>(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

std::optional<nn::Batch> ShardedBatches::next() {
  const std::optional<nn::Batch> global = order_.next();
  if (!global) return std::nullopt;
  const auto [first, last] = part(global->x.shape()[0], rank_, world_);
  const RawTensor idx = global->x.raw().slice(0, first, last);
  return nn::Batch{Tensor(raw::index_select(inputs_.raw(), 0, idx)),
                   Tensor(raw::index_select(targets_.raw(), 0, idx))};
}

}  // namespace strata::dist
