// SPDX-License-Identifier: MIT
// Compiling a trace into a plan and running it (jit/plan.hpp).
#include "jit/plan.hpp"

#include <algorithm>
#include <exception>
#include <sstream>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "jit/fuse.hpp"
#include "raw/ops.hpp"

namespace strata::tracing {

using strata::detail::fail;
using Kind = TraceSource::Kind;

namespace {

/// Rethrows the active exception as the same st::Error subclass, its message prefixed with
/// the step that raised it.
[[noreturn]] void rethrow_in_step(std::size_t i, const std::string& op) {
  const std::string where = "jit: step " + std::to_string(i) + " (" + op + ") of the plan: ";
  try {
    throw;
  } catch (const ShapeError& e) {
    throw ShapeError(where + e.what());
  } catch (const IndexError& e) {
    throw IndexError(where + e.what());
  } catch (const DTypeError& e) {
    throw DTypeError(where + e.what());
  } catch (const DeviceError& e) {
    throw DeviceError(where + e.what());
  } catch (const LinAlgError& e) {
    throw LinAlgError(where + e.what());
  } catch (const ValueError& e) {
    throw ValueError(where + e.what());
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
}

/// "f32[2, 3]".
std::string describe(const TraceRef& r) {
  std::ostringstream os;
  os << r.dtype << r.layout.shape;
  return os.str();
}

/// The bytes one read or write of r moves.
std::size_t bytes_of(const TraceRef& r) {
  return std::size_t(r.layout.numel()) * dtype_size(r.dtype);
}

}  // namespace

Plan::Plan(Trace trace) : trace_(std::move(trace)) {
  for (const auto& [held, version] : trace_.host_reads) {
    const std::shared_ptr<Storage> storage = held.lock();
    if (storage && storage->version() != version) {
      fail<ValueError>("jit",
                       "the function reads a captured tensor's value on the host (item(), "
                       "to_vector()) and then writes that tensor in place: a plan would "
                       "replay the value read at tracing. Pass the value as a non-tensor "
                       "argument, or keep it in a C++ variable");
    }
  }
  const std::size_t n = trace_.steps.size(), sources = trace_.sources.size();
  // Sources written in place: their value changes during a call, so nothing reading them folds.
  std::vector<bool> written(sources, false);
  for (const TraceStep& s : trace_.steps) {
    if (s.effect == raw::trace::Effect::pure) continue;
    const std::size_t k = s.effect == raw::trace::Effect::writes_first ? 1 : s.in.size();
    for (std::size_t j = 0; j < std::min(k, s.in.size()); ++j) {
      if (s.in[j].source >= 0) written[std::size_t(s.in[j].source)] = true;
    }
  }
  merge_repeats(written);
  // Dead steps: pure steps none of whose results is read by a later step that stays, or
  // returned.
  std::vector<bool> needed(sources, false);
  for (const TraceRef& r : trace_.outputs) needed[std::size_t(r.source)] = true;
  fate_.assign(n, Fate::dropped);
  for (std::size_t i = n; i-- > 0;) {
    const TraceStep& s = trace_.steps[i];
    bool keep = s.effect != raw::trace::Effect::pure;
    for (const TraceRef& r : s.out) keep = keep || (r.source >= 0 && needed[std::size_t(r.source)]);
    if (!keep) continue;
    fate_[i] = Fate::run;
    for (const TraceRef& r : s.in) {
      if (r.source >= 0) needed[std::size_t(r.source)] = true;
    }
  }
  // Constants: pure steps that read only constants and whose results nothing writes are
  // computed once, at tracing; their results are kept.
  constant_.assign(sources, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (fate_[i] != Fate::run || trace_.steps[i].effect != raw::trace::Effect::pure) continue;
    const TraceStep& s = trace_.steps[i];
    bool fold = std::all_of(s.in.begin(), s.in.end(), [&](const TraceRef& r) {
      return r.source < 0 || constant_[std::size_t(r.source)];
    });
    for (const TraceRef& r : s.out)
      fold = fold && (r.source < 0 || !written[std::size_t(r.source)]);
    if (!fold) continue;
    fate_[i] = Fate::folded;
    for (const TraceRef& r : s.out) {
      if (r.source >= 0) constant_[std::size_t(r.source)] = true;
    }
  }
  merge_constants();
  move_pads(written);
  // Frees: each result of a run step is released after its last reader (never a result of
  // the function). The plan keeps the storages of captured tensors and constants only.
  std::vector<std::size_t> last(sources, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (fate_[i] != Fate::run) continue;
    for (const TraceRef& r : trace_.steps[i].out) {
      if (r.source >= 0) last[std::size_t(r.source)] = i;
    }
    for (const TraceRef& r : trace_.steps[i].in) {
      if (r.source >= 0) last[std::size_t(r.source)] = i;
    }
  }
  for (const TraceRef& r : trace_.outputs) last[std::size_t(r.source)] = n;
  std::vector<std::vector<int32_t>> release(n);  // per step: the sources freed after it
  for (std::size_t s = 0; s < sources; ++s) {
    TraceSource& src = trace_.sources[s];
    if (src.kind == Kind::step && !constant_[s]) {
      if (last[s] < n) release[last[s]].push_back(int32_t(s));
      src.storage.reset();
    } else if (src.kind == Kind::input) {
      src.storage.reset();  // a call's own inputs take its place
    }
  }
  // Elementwise chains run as fused groups (jit/fuse.hpp).
  std::vector<bool> run(n);
  for (std::size_t i = 0; i < n; ++i) run[i] = fate_[i] == Fate::run;
  groups_ = fuse(trace_, run, last);
  group_at_.assign(n, -1);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (std::size_t i : groups_[g].steps) group_at_[i] = int32_t(g);
    counts_.fused += groups_[g].steps.size();
  }
  counts_.groups = groups_.size();
  // What run() visits: the steps it runs (a fused group once, at its first step), each with
  // the sources freed after it, and a store slot for each source a call holds.
  slot_.assign(sources, -1);
  auto give_slot = [&](int32_t s) {
    if (s >= 0 && slot_[std::size_t(s)] < 0) slot_[std::size_t(s)] = slots_++;
  };
  for (int32_t s : trace_.input_source) give_slot(s);
  // The captured tensors and the constants a call reads (most constants are read only by
  // other folded steps: binding those on every call was most of a long chain's setup).
  // A fused group keeps the constants it reads itself (FusedGroup::fixed).
  std::vector<bool> read(sources, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (fate_[i] != Fate::run || group_at_[i] >= 0) continue;
    for (const TraceRef& r : trace_.steps[i].in) {
      if (r.source >= 0) read[std::size_t(r.source)] = true;
    }
  }
  for (FusedGroup& g : groups_) {
    g.fixed.assign(g.inputs.size(), Held());
    for (std::size_t k = 0; k < g.inputs.size(); ++k) {
      const std::size_t src = std::size_t(g.inputs[k].source);
      if (constant_[src]) {
        g.fixed[k] = Held(trace_.sources[src].storage, 0);
      } else {
        read[src] = true;
      }
    }
  }
  for (const TraceRef& r : trace_.outputs) read[std::size_t(r.source)] = true;
  for (std::size_t s = 0; s < sources; ++s) {
    const bool captured = trace_.sources[s].kind == Kind::captured;
    if (captured || (constant_[s] && read[s])) {
      give_slot(int32_t(s));
      bound_.push_back(int32_t(s));
    }
    if (constant_[s] && !read[s]) trace_.sources[s].storage.reset();  // no call reads it
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (fate_[i] != Fate::run) continue;
    const int32_t g = group_at_[i];
    if (g >= 0 && groups_[std::size_t(g)].steps.front() != i) {
      // A later step of a group: what it frees is freed once the group has run.
      for (int32_t s : release[i]) visits_.back().release.push_back(s);
      continue;
    }
    if (g >= 0) {
      for (int32_t s : groups_[std::size_t(g)].outputs) give_slot(s);
    } else {
      for (const TraceRef& r : trace_.steps[i].out) give_slot(r.source);
    }
    visits_.push_back({i, release[i]});
  }
  for (Visit& v : visits_) {
    std::erase_if(v.release, [&](int32_t s) { return slot_[std::size_t(s)] < 0; });
  }
  counts_.recorded = n;
  for (Fate f : fate_) {
    counts_.run += f == Fate::run;
    counts_.folded += f == Fate::folded;
  }
}

Plan::~Plan() = default;

bool Plan::current() const {
  for (const auto& [held, version] : trace_.host_reads) {
    const std::shared_ptr<Storage> storage = held.lock();
    if (!storage || storage->version() != version) return false;
    // Held by nothing but this lock and the plan's own sources: the program dropped it (a
    // variable assigned a new tensor), and f would read another tensor now.
    long plan_holds = 1;
    for (const TraceSource& src : trace_.sources) plan_holds += src.storage == storage;
    if (storage.use_count() <= plan_holds) return false;
  }
  return true;
}

std::vector<RawTensor> Plan::run(std::span<const RawTensor> inputs) const {
  if (inputs.size() != trace_.input_source.size()) {
    fail<ValueError>("jit", "the plan takes ", trace_.input_source.size(), " input tensors, got ",
                     inputs.size());
  }
  std::vector<Held> store(static_cast<std::size_t>(slots_));
  auto at = [&](int32_t source) -> Held& { return store[std::size_t(slot_[std::size_t(source)])]; };
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    at(trace_.input_source[k]) = {inputs[k].storage(), 0};
  }
  for (int32_t s : bound_) {
    const TraceSource& src = trace_.sources[std::size_t(s)];
    if (src.kind == Kind::captured && src.storage.use_count() == 1) {
      // Only this plan holds it: the program replaced the tensor it captured (a variable
      // assigned a new tensor), and the plan would compute with the old one.
      fail<ValueError>("jit",
                       "a tensor the jitted function captured is no longer held by the "
                       "program (was the variable assigned a new tensor?); update "
                       "captured tensors in place (add_, copy_, an optimiser's step) or "
                       "pass them as arguments");
    }
    at(s) = {src.storage, 0};
  }
  std::vector<RawTensor> in, out;
  for (const Visit& v : visits_) {
    const std::size_t i = v.step;
    const TraceStep& step = trace_.steps[i];
    if (group_at_[i] >= 0) {
      try {
        run_fused(groups_[std::size_t(group_at_[i])], store, slot_);
      } catch (const Error&) {
        rethrow_in_step(i, "fused " + step.op);
      }
      for (int32_t s : v.release) at(s) = {};
      continue;
    }
    in.clear();
    for (const TraceRef& r : step.in) {
      in.push_back(r.source < 0 ? RawTensor() : at(r.source).read(r));
    }
    out.assign(step.out.size(), RawTensor());
    try {
      step.kernel(in, out);
    } catch (const Error&) {
      rethrow_in_step(i, step.op);
    }
    for (std::size_t k = 0; k < step.out.size(); ++k) {
      const TraceRef& r = step.out[k];
      if (r.source < 0) continue;
      if (out[k].layout().shape != r.layout.shape || out[k].layout().strides != r.layout.strides ||
          out[k].offset() != r.layout.offset || out[k].dtype() != r.dtype) {
        fail<ValueError>("jit", "step ", i, " (", step.op, ") gave ", out[k].dtype(),
                         out[k].shape(), " where the trace had ", describe(r),
                         "; the plan no longer fits (retrace with new inputs)");
      }
      at(r.source) = {out[k].storage(), 0};
    }
    for (int32_t s : v.release) at(s) = {};
  }
  std::vector<RawTensor> results;
  results.reserve(trace_.outputs.size());
  for (const TraceRef& r : trace_.outputs) {
    RawTensor y = at(r.source).read(r);
    // A constant is the plan's own: each call returns a fresh copy, as eager calls would.
    if (constant_[std::size_t(r.source)]) {
      RawTensor copy = raw::empty(r.layout.shape, r.dtype, y.device());
      raw::copy_(copy, y);
      y = copy;
    }
    results.push_back(std::move(y));
  }
  return results;
}

std::string Plan::explain() const {
  std::ostringstream os;
  std::size_t inputs = 0, captured = 0;
  for (const TraceSource& s : trace_.sources) {
    inputs += s.kind == Kind::input;
    captured += s.kind == Kind::captured;
  }
  os << "plan: " << counts_.recorded << " steps traced, " << counts_.run << " run per call ("
     << counts_.fused << " of them in " << counts_.groups << " fused groups), " << counts_.folded
     << " folded into constants, " << counts_.recorded - counts_.run - counts_.folded
     << " dropped (" << counts_.merged << " repeats of an earlier step); " << counts_.shared
     << " constants read as an equal earlier one; " << inputs << " input storages, " << captured
     << " captured\n";
  std::size_t read = 0, wrote = 0;
  for (std::size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep& s = trace_.steps[i];
    const char* fate = fate_[i] == Fate::run      ? "run"
                       : fate_[i] == Fate::folded ? "folded"
                                                  : "dropped";
    os << "  #" << i << ' ' << fate;
    if (group_at_[i] >= 0) os << " fused:" << group_at_[i];
    os << ' ' << s.op << '(';
    for (std::size_t k = 0; k < s.in.size(); ++k) {
      os << (k ? ", " : "") << (s.in[k].source < 0 ? std::string("-") : describe(s.in[k]));
      if (fate_[i] == Fate::run && s.in[k].source >= 0) read += bytes_of(s.in[k]);
    }
    os << ')';
    if (s.effect == raw::trace::Effect::writes_first) os << " writes its first operand";
    if (s.effect == raw::trace::Effect::effect) os << " effect";
    for (std::size_t k = 0; k < s.out.size(); ++k) {
      os << (k ? ", " : " -> ") << describe(s.out[k]);
      if (fate_[i] == Fate::run) wrote += bytes_of(s.out[k]);
    }
    os << '\n';
  }
  os << "per call: reads " << read << " bytes, writes " << wrote << " bytes\n";
  return os.str();
}

}  // namespace strata::tracing
