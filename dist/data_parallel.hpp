// SPDX-License-Identifier: MIT
#pragma once
/// Data-parallel training (PyTorch's DistributedDataParallel): every rank holds the whole
/// model, computes gradients on its own part of each batch, and the gradients are averaged
/// over the ranks before the optimiser step, so every rank takes the same step.
///
///   st::nn::Params params = model.init(seed);
///   st::dist::DataParallel ddp(params);            // rank 0's parameters everywhere
///   auto [loss, grads] = ddp.value_and_grad(loss_fn, params, x, y);  // grads: the average
///   opt.step(params, grads);                       // any optimiser
///
/// The gradients travel in buckets of about 25 MB, filled in reverse parameter order; a
/// bucket's all-reduce starts as soon as the backward pass has finished every gradient in it
/// (st::value_and_grad_with_hook), so communication overlaps the rest of the pass.
/// docs/DISTRIBUTED.md describes the design and what was measured.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ad/hooks.hpp"
#include "dist/process_group.hpp"

namespace strata::dist {

/// DataParallel's settings.
struct DataParallelOptions {
  /// The largest bucket in bytes (a parameter larger than this gets a bucket of its own);
  /// PyTorch's default, 25 MiB. Must be positive.
  int64_t bucket_bytes = int64_t{25} << 20;
  /// The rank whose parameters every rank starts from.
  int root = 0;
};

/// One bucket of the last synchronised step, as DataParallel::last_step reports it.
struct BucketTrace {
  std::vector<std::size_t> leaves;  ///< its parameters (indices in tree order), as filled
  int64_t bytes = 0;                ///< its size
  /// How many gradients of the whole model were not yet final when its all-reduce started
  /// (more than zero: it started while the backward pass was still running).
  int64_t leaves_pending_at_launch = 0;
  /// Its all-reduce had started but not completed when the backward pass ended.
  bool in_flight_at_backward_end = false;
  double launch_s = 0;  ///< when the communication thread started its all-reduce
  double done_s = 0;    ///< when it saw it complete (seconds from the step's start)
};

/// The last synchronised step: its buckets in launch order (bucket 0 holds the last
/// parameters) and when the backward pass and the step ended (seconds from its start).
struct StepTrace {
  std::vector<BucketTrace> buckets;  ///< in the order their all-reduces started
  double backward_end_s = 0;         ///< the backward pass returned
  double end_s = 0;                  ///< every bucket was reduced and averaged
  /// The share of the time some all-reduce was running that lay before the end of the
  /// backward pass: 1 when communication hid entirely behind backward, 0 when none did.
  double hidden_fraction() const;
};

namespace detail {

/// What DataParallel knows of one parameter.
struct LeafInfo {
  Shape shape;    ///< its shape
  DType dtype{};  ///< its dtype
  Device device;  ///< its device
};

/// The buckets and their all-reduces: DataParallel's untemplated part (dist/data_parallel.cpp).
class Reducer {
 public:
  /// Buckets for these parameters (in tree order).
  Reducer(std::vector<LeafInfo> leaves, const DataParallelOptions& options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Rank `root`'s values of the parameters written into them on every rank.
  void broadcast_parameters(const std::vector<Tensor>& params, int root) const;
  /// ValueError unless params match the parameters the buckets were made for.
  void check(const std::vector<Tensor>& params) const;
  /// Starts a synchronised step: new bucket buffers, every gradient pending.
  void begin_step();
  /// Gradient k is final: into its bucket (plus what no_sync steps accumulated); starts the
  /// all-reduces of the buckets now complete, in bucket order.
  void leaf_ready(std::size_t k, const Tensor& grad);
  /// The backward pass has returned.
  void backward_done();
  /// Waits for every bucket, averages, and returns the gradients in tree order.
  std::vector<Tensor> finish();
  /// Adds the local gradients of a no_sync step to those the next synchronised step sends.
  void accumulate(const std::vector<Tensor>& grads);
  /// The trace of the last synchronised step.
  const StepTrace& trace() const { return trace_; }
  /// The number of buckets.
  std::size_t num_buckets() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
  StepTrace trace_;
};

/// The tensors of a tree of plain tensors, in tree::map's order.
template <class P>
std::vector<Tensor> flatten(const P& tree) {
  std::vector<Tensor> out;
  tree::map(
      [&](const Tensor& t) {
        out.push_back(t);
        return 0;
      },
      tree);
  return out;
}

}  // namespace detail

/// Ends DataParallel::no_sync's scope when destroyed.
class NoSync {
 public:
  /// Holds `depth` one higher until destroyed.
  explicit NoSync(int& depth) : depth_(depth) { ++depth_; }
  ~NoSync() { --depth_; }
  NoSync(const NoSync&) = delete;
  NoSync& operator=(const NoSync&) = delete;

 private:
  int& depth_;
};

/// Data-parallel gradients for parameters P: any tree of plain tensors (st::nn::Params, a
/// vector, ...). Every rank constructs one with parameters of the same structure, shapes
/// and dtypes.
template <class P>
class DataParallel {
 public:
  /// Buckets for params, and rank options.root's values of them written into params on every
  /// rank (a collective: every rank constructs its DataParallel at the same point). Throws
  /// DistError when the ranks' parameters differ in shape or dtype.
  explicit DataParallel(P& params, DataParallelOptions options = {})
      : reducer_(leaf_infos(params), options) {
    reducer_.broadcast_parameters(detail::flatten(params), options.root);
  }

  /// (this rank's loss, the gradients averaged over every rank) of loss(params, batch...),
  /// differentiated with respect to params only; loss is a generic lambda returning one
  /// element, as for st::value_and_grad. With a local loss that is the mean over this rank's
  /// part of the batch, and equal parts, the result is the gradient of the mean over the
  /// whole batch. Inside no_sync(), nothing is communicated: the local gradients come back
  /// and are also kept, and the next synchronised call averages their sum with its own.
  /// A collective: every rank calls it the same number of times.
  template <class F, class... Batch>
  auto value_and_grad(F loss, const P& params, const Batch&... batch) {
    const std::vector<Tensor> leaves = detail::flatten(params);
    reducer_.check(leaves);
    if (no_sync_depth_ > 0) {
      auto result = strata::value_and_grad(std::move(loss), argnums<0>, params, batch...);
      reducer_.accumulate(detail::flatten(result.second));
      return result;
    }
    reducer_.begin_step();
    auto on_final = [this](std::size_t k, const Tensor& g) { reducer_.leaf_ready(k, g); };
    auto [value, local] =
        value_and_grad_with_hook(std::move(loss), on_final, argnums<0>, params, batch...);
    reducer_.backward_done();
    const std::vector<Tensor> averaged = reducer_.finish();
    std::size_t k = 0;
    auto grads = tree::map([&](const Tensor&) { return averaged[k++]; }, params);
    return std::pair{value, std::move(grads)};
  }

  /// Gradient accumulation: until the returned guard is destroyed, value_and_grad
  /// communicates nothing (PyTorch's no_sync). `{ auto quiet = ddp.no_sync(); ... }`
  [[nodiscard]] NoSync no_sync() { return NoSync(no_sync_depth_); }
  /// What the buckets did in the last synchronised step (order, overlap, times).
  const StepTrace& last_step() const { return reducer_.trace(); }
  /// The number of buckets.
  std::size_t num_buckets() const { return reducer_.num_buckets(); }

 private:
  static std::vector<detail::LeafInfo> leaf_infos(const P& params) {
    std::vector<detail::LeafInfo> out;
    for (const Tensor& t : detail::flatten(params))
      out.push_back({t.shape(), t.dtype(), t.device()});
    return out;
  }
  detail::Reducer reducer_;
  int no_sync_depth_ = 0;
};

}  // namespace strata::dist
