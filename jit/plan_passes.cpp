// SPDX-License-Identifier: MIT
// The plan's graph passes (jit/plan.hpp) that rewrite its trace: repeats merged, equal
// constants shared, pads moved next to their readers.
#include <bit>
#include <map>
#include <string>
#include <utility>

#include "jit/fuse.hpp"
#include "jit/plan.hpp"

namespace strata::tracing {

void Plan::merge_constants() {
  // Every `x * 0.5` folds a scalar of its own: a recurrence traced whole has thousands, each
  // in a storage of its own that a call reads from cold memory. Run steps read one storage per
  // distinct small constant instead (equal bytes: equal under any layout and dtype a reader
  // may use; constants are never written).
  constexpr std::size_t kSmall = 256;
  std::vector<int32_t> canonical(trace_.sources.size(), -1);
  std::map<std::string, int32_t> first;  // a constant's bytes -> the first source holding them
  for (std::size_t s = 0; s < trace_.sources.size(); ++s) {
    const std::shared_ptr<Storage>& st = trace_.sources[s].storage;
    if (!constant_[s] || !st || !st->device().is_cpu() || st->bytes() > kSmall) continue;
    std::string bytes(static_cast<const char*>(st->data()), st->bytes());
    canonical[s] = first.try_emplace(std::move(bytes), int32_t(s)).first->second;
    counts_.shared += canonical[s] != int32_t(s);
  }
  for (std::size_t i = 0; i < trace_.steps.size(); ++i) {
    if (fate_[i] != Fate::run) continue;
    for (TraceRef& r : trace_.steps[i].in) {
      if (r.source >= 0 && canonical[std::size_t(r.source)] >= 0) {
        r.source = canonical[std::size_t(r.source)];
      }
    }
  }
}

void Plan::merge_repeats(const std::vector<bool>& written) {
  // The same elementwise op on the same operands (each one source read through the same
  // layout and dtype, never written in place) gives the same bits in the same layout, so
  // readers of the repeat can read the first. Results written in place or returned are never
  // merged: a write to one must not show in the other, and returned tensors stay distinct.
  const std::size_t sources = trace_.sources.size();
  std::vector<bool> returned(sources, false);
  for (const TraceRef& r : trace_.outputs) returned[std::size_t(r.source)] = true;
  std::vector<int32_t> reads(sources);  // per source: the source its readers read
  for (std::size_t s = 0; s < sources; ++s) reads[s] = int32_t(s);
  std::map<std::vector<int64_t>, int32_t> first;  // an op and its operands -> its result
  auto add_ref = [](std::vector<int64_t>& key, const TraceRef& r) {
    key.push_back(r.source);
    key.push_back(int64_t(r.dtype));
    key.push_back(r.layout.offset);
    key.push_back(r.layout.shape.ndim());
    for (std::size_t d = 0; d < r.layout.shape.size(); ++d) {
      key.push_back(r.layout.shape[d]);
      key.push_back(r.layout.strides[d]);
    }
  };
  for (TraceStep& s : trace_.steps) {
    for (TraceRef& r : s.in) {
      if (r.source >= 0) r.source = reads[std::size_t(r.source)];
    }
    if (s.effect != raw::trace::Effect::pure || s.ew.kind == raw::trace::Elementwise::Kind::none ||
        s.out.size() != 1 || s.out[0].source < 0) {
      continue;
    }
    const int32_t result = s.out[0].source;
    bool mergeable = !written[std::size_t(result)] && !returned[std::size_t(result)];
    for (const TraceRef& r : s.in) {
      mergeable = mergeable && r.source >= 0 && !written[std::size_t(r.source)];
    }
    if (!mergeable) continue;
    std::vector<int64_t> key{int64_t(s.ew.kind), int64_t(s.ew.op)};
    if (s.ew.kind == raw::trace::Elementwise::Kind::pad) {
      key.push_back(int64_t(s.ew.before.size()));  // so no two paddings' keys run together
      key.insert(key.end(), s.ew.before.begin(), s.ew.before.end());
      key.push_back(std::bit_cast<int64_t>(s.ew.value));
    }
    for (const TraceRef& r : s.in) add_ref(key, r);
    add_ref(key, TraceRef{-1, s.out[0].layout, s.out[0].dtype});
    auto [it, fresh] = first.try_emplace(std::move(key), result);
    if (!fresh) {
      reads[std::size_t(result)] = it->second;
      ++counts_.merged;
    }
  }
}

void Plan::move_pads(const std::vector<bool>& written) {
  const std::size_t n = trace_.steps.size();
  std::vector<bool> run(n);
  for (std::size_t i = 0; i < n; ++i) run[i] = fate_[i] == Fate::run;
  std::vector<TraceStep> steps;
  std::vector<Fate> fate;
  steps.reserve(n);
  fate.reserve(n);
  for (std::size_t i : pads_to_readers(trace_, run, written)) {
    steps.push_back(std::move(trace_.steps[i]));
    fate.push_back(fate_[i]);
  }
  trace_.steps = std::move(steps);
  fate_ = std::move(fate);
}

}  // namespace strata::tracing
