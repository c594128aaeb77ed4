// SPDX-License-Identifier: MIT
// DataParallel's reducer (dist/data_parallel.hpp): the buckets, their all-reduces, and the
// trace of the last step.
//
// Buckets are filled in reverse parameter order (the order a backward pass usually
// finishes gradients in), one dtype and device per bucket, up to bucket_bytes each. Their
// all-reduces start strictly in bucket order, each as soon as its last gradient is final
// and every earlier bucket has started, so that every rank issues them in the same order
// whatever order its gradients complete in (as PyTorch's reducer does). Each step gets
// fresh bucket buffers: the gradients it returns are views of them, and stay valid.
#include <algorithm>
#include <limits>
#include <string>

#include "dist/data_parallel.hpp"
#include "dist/internal/group.hpp"
#include "raw/ops.hpp"

namespace strata::dist {

double StepTrace::hidden_fraction() const {
  // The union of the all-reduces' intervals, and its part before the backward pass ended.
  std::vector<std::pair<double, double>> spans;
  for (const auto& b : buckets) spans.emplace_back(b.launch_s, b.done_s);
  std::sort(spans.begin(), spans.end());
  double busy = 0, hidden = 0, start = 0, end = -1;
  auto close = [&] {
    if (end < start) return;
    busy += end - start;
    hidden += std::max(0.0, std::min(end, backward_end_s) - start);
  };
  for (const auto& [a, b] : spans) {
    if (a > end) {
      close();
      start = a;
      end = b;
    } else {
      end = std::max(end, b);
    }
  }
  close();
  return busy > 0 ? hidden / busy : 1.0;
}

namespace detail {

using strata::detail::fail;

struct Reducer::State {
  struct Bucket {
    std::vector<std::size_t> leaves;  // in fill order
    DType dtype{};
    Device device;
    int64_t numel = 0;
    RawTensor buffer;            // this step's
    int64_t pending = 0;         // gradients not yet in it
    std::shared_ptr<Task> task;  // its all-reduce, once started
    int64_t pending_at_launch = 0;
  };
  std::vector<LeafInfo> leaves;
  std::vector<std::size_t> bucket_of;  // per leaf
  std::vector<int64_t> offset_of;      // per leaf, in elements within its bucket
  std::vector<int> seen;               // per leaf: its gradient arrived this step
  std::vector<Tensor> accumulated;     // per leaf, from no_sync steps (undefined: none)
  std::vector<Bucket> buckets;
  std::size_t next_launch = 0;
  int64_t leaves_pending = 0;
  Clock::time_point step_start;
  Clock::time_point backward_end;
};

Reducer::Reducer(std::vector<LeafInfo> leaves, const DataParallelOptions& options)
    : s_(std::make_unique<State>()) {
  if (options.bucket_bytes <= 0) {
    fail<ValueError>("st::dist::DataParallel", "bucket_bytes must be positive, got ",
                     options.bucket_bytes);
  }
  group("DataParallel");  // DistError before init()
  State& s = *s_;
  s.leaves = std::move(leaves);
  const std::size_t n = s.leaves.size();
  s.bucket_of.assign(n, 0);
  s.offset_of.assign(n, 0);
  s.accumulated.assign(n, Tensor());
  for (std::size_t i = n; i-- > 0;) {
    const LeafInfo& leaf = s.leaves[i];
    if (!is_floating(leaf.dtype)) {
      fail<DTypeError>("st::dist::DataParallel", "parameter ", i, " is ", dtype_name(leaf.dtype),
                       ": parameters must be f32 or f64");
    }
    const int64_t numel = checked_numel(leaf.shape, "st::dist::DataParallel");
    const int64_t bytes = numel * int64_t(dtype_size(leaf.dtype));
    const bool fits =
        !s.buckets.empty() && s.buckets.back().dtype == leaf.dtype &&
        s.buckets.back().device == leaf.device &&
        (s.buckets.back().numel * int64_t(dtype_size(leaf.dtype)) + bytes <= options.bucket_bytes);
    if (!fits) {
      s.buckets.emplace_back();
      s.buckets.back().dtype = leaf.dtype;
      s.buckets.back().device = leaf.device;
    }
    auto& b = s.buckets.back();
    s.bucket_of[i] = s.buckets.size() - 1;
    s.offset_of[i] = b.numel;
    b.leaves.push_back(i);
    b.numel += numel;
    if (b.numel > std::numeric_limits<int>::max()) {
      fail<ValueError>("st::dist::DataParallel", "a bucket of ", b.numel,
                       " elements exceeds one collective's limit; lower bucket_bytes");
    }
  }
}

Reducer::~Reducer() = default;

std::size_t Reducer::num_buckets() const { return s_->buckets.size(); }

void Reducer::broadcast_parameters(const std::vector<Tensor>& params, int root) const {
  check(params);
  std::vector<Work> works;
  for (const Tensor& p : params) works.push_back(broadcast_async(p, root));
  for (std::size_t i = 0; i < params.size(); ++i) {
    Tensor received = works[i].wait();
    Tensor p = params[i];  // shares the parameter's storage: copy_ writes through
    p.copy_(received);
  }
}

void Reducer::check(const std::vector<Tensor>& params) const {
  const State& s = *s_;
  if (params.size() != s.leaves.size()) {
    fail<ValueError>("st::dist::DataParallel", "parameters with ", params.size(),
                     " tensors, but it was made for ", s.leaves.size());
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const LeafInfo& l = s.leaves[i];
    if (params[i].shape() != l.shape || params[i].dtype() != l.dtype ||
        params[i].device() != l.device) {
      fail<ValueError>("st::dist::DataParallel", "parameter ", i, " is ",
                       dtype_name(params[i].dtype()), params[i].shape(), " on ", params[i].device(),
                       ", but it was made for ", dtype_name(l.dtype), l.shape, " on ", l.device);
    }
  }
}

void Reducer::begin_step() {
  State& s = *s_;
  // A step that threw half-way leaves tasks behind; the engine keeps their buffers.
  for (auto& b : s.buckets) {
    b.buffer = raw::empty({b.numel}, b.dtype, b.device, "st::dist::DataParallel");
    b.pending = int64_t(b.leaves.size());
    b.task.reset();
  }
  s.seen.assign(s.leaves.size(), 0);
  s.next_launch = 0;
  s.leaves_pending = int64_t(s.leaves.size());
  s.step_start = Clock::now();
}

void Reducer::leaf_ready(std::size_t k, const Tensor& grad) {
  State& s = *s_;
  if (k >= s.leaves.size() || s.seen[k]) {
    fail<ValueError>("st::dist::DataParallel", "gradient ", k, " reported twice or unknown");
  }
  s.seen[k] = 1;
  auto& b = s.buckets[s.bucket_of[k]];
  const int64_t numel = checked_numel(s.leaves[k].shape, "st::dist::DataParallel");
  const RawTensor view =
      raw::reshape(b.buffer.slice(0, s.offset_of[k], s.offset_of[k] + numel), s.leaves[k].shape);
  raw::copy_(view, grad.raw());
  if (s.accumulated[k].defined()) raw::binary_(BinaryOp::add, view, s.accumulated[k].raw());
  --b.pending;
  --s.leaves_pending;
  while (s.next_launch < s.buckets.size() && s.buckets[s.next_launch].pending == 0) {
    auto& ready = s.buckets[s.next_launch];
    ready.pending_at_launch = s.leaves_pending;
    ready.task = all_reduce_into(ready.buffer, Reduction::sum,
                                 "DataParallel bucket " + std::to_string(s.next_launch));
    ++s.next_launch;
  }
}

void Reducer::backward_done() {
  State& s = *s_;
  s.backward_end = Clock::now();
  trace_ = StepTrace{};
  Engine& engine = *group("DataParallel").engine;
  for (auto& b : s.buckets) {
    BucketTrace t;
    t.leaves = b.leaves;
    t.bytes = b.numel * int64_t(dtype_size(b.dtype));
    t.leaves_pending_at_launch = b.pending_at_launch;
    t.in_flight_at_backward_end = b.task && !engine.done(*b.task);
    trace_.buckets.push_back(std::move(t));
  }
  if (s.next_launch != s.buckets.size()) {
    fail<ValueError>("st::dist::DataParallel", "the backward pass ended with ",
                     s.buckets.size() - s.next_launch, " bucket(s) not started (", s.leaves_pending,
                     " gradient(s) never reported)");
  }
}

std::vector<Tensor> Reducer::finish() {
  State& s = *s_;
  Group& g = group("DataParallel");
  auto seconds = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - s.step_start).count();
  };
  for (std::size_t i = 0; i < s.buckets.size(); ++i) {
    auto& b = s.buckets[i];
    g.engine->wait(*b.task);
    if (b.numel > 0) {
      raw::binary_(BinaryOp::div, b.buffer,
                   raw::full(b.buffer.shape(), double(g.world), b.dtype, b.device));
    }
    trace_.buckets[i].launch_s = seconds(b.task->started);
    trace_.buckets[i].done_s = seconds(b.task->finished);
  }
  std::vector<Tensor> grads(s.leaves.size());
  for (std::size_t k = 0; k < s.leaves.size(); ++k) {
    const auto& b = s.buckets[s.bucket_of[k]];
    const int64_t numel = checked_numel(s.leaves[k].shape, "st::dist::DataParallel");
    grads[k] = Tensor(
        raw::reshape(b.buffer.slice(0, s.offset_of[k], s.offset_of[k] + numel), s.leaves[k].shape));
    s.accumulated[k] = Tensor();
  }
  trace_.backward_end_s = seconds(s.backward_end);
  trace_.end_s = seconds(Clock::now());
  return grads;
}

void Reducer::accumulate(const std::vector<Tensor>& grads) {
  State& s = *s_;
  for (std::size_t k = 0; k < grads.size(); ++k) {
    s.accumulated[k] = s.accumulated[k].defined() ? s.accumulated[k] + grads[k] : grads[k];
  }
}

}  // namespace detail
}  // namespace strata::dist
