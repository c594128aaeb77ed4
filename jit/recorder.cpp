// SPDX-License-Identifier: MIT
// The recorder (jit/recorder.hpp): how it names each tensor a recorded call reads or makes by
// the storage underneath.
#include "jit/recorder.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"

namespace strata::tracing {

using strata::detail::fail;

Recorder::Recorder(std::span<const RawTensor> inputs) {
  for (const RawTensor& x : inputs) {
    if (!x.defined()) fail<ValueError>("jit", "an input tensor is undefined");
    auto [it, fresh] = source_of_.try_emplace(x.storage().get(), int32_t(trace_.sources.size()));
    if (fresh) {
      trace_.sources.push_back({TraceSource::Kind::input, int32_t(trace_.input_source.size()),
                                x.storage(), x.version()});
      traced_.push_back(true);
    }
    trace_.input_source.push_back(it->second);
  }
  raw::trace::attach(*this);
}

Recorder::~Recorder() { raw::trace::detach(*this); }

TraceRef Recorder::ref(std::string_view op, const RawTensor& x, bool check) {
  const Storage* s = x.storage().get();
  auto [it, fresh] = source_of_.try_emplace(s, int32_t(trace_.sources.size()));
  if (fresh) {
    trace_.sources.push_back({TraceSource::Kind::captured, -1, x.storage(), x.version()});
    traced_.push_back(false);
  }
  const TraceSource& src = trace_.sources[std::size_t(it->second)];
  if (check && src.version != x.version()) {
    fail<ValueError>("jit", op, " reads a tensor of shape ", x.shape(),
                     " that was written in place by something jit does not record (a "
                     "collective, a write through data()); call it outside the jitted function");
  }
  return {it->second, x.layout(), x.dtype()};
}

bool Recorder::traced(const RawTensor& x) const {
  auto it = source_of_.find(x.storage().get());
  return it != source_of_.end() && traced_[std::size_t(it->second)];
}

void Recorder::append(std::string_view op, raw::trace::Effect effect, std::vector<RawTensor> in,
                      std::span<const RawTensor> out, raw::trace::Kernel kernel,
                      raw::trace::Elementwise ew) {
  TraceStep step{std::string(op), effect, {}, {}, std::move(kernel), ew, Device::cpu()};
  if (!out.empty() && out[0].defined()) step.device = out[0].device();
  bool depends = false;
  for (const RawTensor& x : in) {
    step.in.push_back(x.defined() ? ref(op, x, false) : TraceRef{});
    depends = depends || (x.defined() && traced(x));
  }
  const int32_t index = int32_t(trace_.steps.size());
  if (effect != raw::trace::Effect::pure) {
    // What it wrote now reads as written by this step; a written value depends on the
    // inputs when any operand did.
    const std::size_t written = effect == raw::trace::Effect::writes_first
                                    ? std::min<std::size_t>(1, in.size())
                                    : in.size();
    for (std::size_t k = 0; k < written; ++k) {
      const int32_t s = step.in[k].source;
      if (s < 0) continue;
      trace_.sources[std::size_t(s)].version = in[k].version();
      if (depends) traced_[std::size_t(s)] = true;
    }
  }
  for (const RawTensor& y : out) {
    if (!y.defined()) {
      step.out.push_back({});
      continue;
    }
    auto [it, fresh] = source_of_.try_emplace(y.storage().get(), int32_t(trace_.sources.size()));
    if (fresh) {
      trace_.sources.push_back({TraceSource::Kind::step, index, y.storage(), y.version()});
      traced_.push_back(depends);
    } else if (trace_.sources[std::size_t(it->second)].kind != TraceSource::Kind::step ||
               trace_.sources[std::size_t(it->second)].index != index) {
      // A result that is a view of an operand (reshape of a contiguous tensor, a cast to the
      // same dtype): replay gives the same view, so the step is not needed for it.
      step.out.push_back({-1, y.layout(), y.dtype()});
      continue;
    }
    step.out.push_back({it->second, y.layout(), y.dtype()});
  }
  trace_.steps.push_back(std::move(step));
}

void Recorder::host_read(const RawTensor& x) {
  auto it = source_of_.find(x.storage().get());
  const bool made_here = it != source_of_.end() && trace_.sources[std::size_t(it->second)].kind !=
                                                       TraceSource::Kind::captured;
  if (made_here) return;
  for (const auto& [held, version] : trace_.host_reads) {
    if (held.lock() == x.storage()) return;
  }
  trace_.host_reads.push_back({x.storage(), x.version()});
}

Trace Recorder::finish(std::span<const RawTensor> outputs) {
  raw::trace::detach(*this);
  for (const RawTensor& y : outputs) {
    if (!y.defined()) fail<ValueError>("jit", "the function returned an undefined tensor");
    const Storage* s = y.storage().get();
    auto [it, fresh] = source_of_.try_emplace(s, int32_t(trace_.sources.size()));
    if (fresh) {
      trace_.sources.push_back({TraceSource::Kind::captured, -1, y.storage(), y.version()});
      traced_.push_back(false);
    }
    trace_.outputs.push_back({it->second, y.layout(), y.dtype()});
  }
  return std::move(trace_);
}

}  // namespace strata::tracing
