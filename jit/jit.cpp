// SPDX-License-Identifier: MIT
// st::jit's counters, switch and signatures (jit/jit.hpp).
#include "jit/jit.hpp"

#include <cstdlib>
#include <cstring>

#include "jit/recorder.hpp"

namespace strata {

namespace {

/// The counters behind jit_stats(): updated under one mutex (a call, not an op, takes it).
std::mutex stats_mutex;
JitStats stats;

}  // namespace

JitStats jit_stats() {
  std::lock_guard lock(stats_mutex);
  return stats;
}

void reset_jit_stats() {
  std::lock_guard lock(stats_mutex);
  stats = JitStats{};
}

bool jit_enabled() {
  // Read on every call, so that a program (or a test) may switch it at run time.
  const char* v = std::getenv("STRATA_JIT");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

namespace detail {

void count_jit_call(int kind, const tracing::Plan* plan) {
  std::lock_guard lock(stats_mutex);
  ++stats.calls;
  if (kind == 0) ++stats.eager;
  if (kind == 1) ++stats.hits;
  if (kind == 2) {
    ++stats.traces;
    const tracing::Plan::Counts c = plan->counts();
    stats.steps_recorded = c.recorded;
    stats.steps_run = c.run;
    stats.steps_folded = c.folded;
    stats.steps_merged = c.merged;
    stats.constants_shared = c.shared;
  }
}

bool jit_tracing() { return raw::trace::active(); }

std::shared_ptr<const tracing::Plan> jit_trace(
    std::span<const RawTensor> leaves, const std::function<void(std::vector<RawTensor>&)>& run) {
  tracing::Trace trace;
  {
    tracing::Recorder recorder(leaves);
    std::vector<RawTensor> outs;
    run(outs);
    trace = recorder.finish(outs);
  }
  return std::make_shared<const tracing::Plan>(std::move(trace));
}

std::vector<RawTensor> jit_run(const tracing::Plan& plan, std::span<const RawTensor> leaves) {
  return plan.run(leaves);
}

std::string jit_explain(const tracing::Plan& plan) { return plan.explain(); }

bool jit_current(const tracing::Plan& plan) { return plan.current(); }

std::vector<JitLeaf> jit_signature(std::span<const RawTensor> leaves) {
  std::vector<JitLeaf> sig;
  sig.reserve(leaves.size());
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const RawTensor& x = leaves[k];
    if (!x.defined()) fail<ValueError>("jit", "argument tensor ", k, " is undefined");
    JitLeaf leaf{x.shape(), x.strides(), x.offset(), x.dtype(), x.device(), -1};
    for (std::size_t j = 0; j < k; ++j) {
      if (leaves[j].storage() == x.storage()) {
        leaf.alias = int32_t(j);
        break;
      }
    }
    sig.push_back(std::move(leaf));
  }
  return sig;
}

}  // namespace detail
}  // namespace strata
