// SPDX-License-Identifier: MIT
#pragma once
/// The recorder: the sink (raw/trace.hpp) that turns a thread's raw calls into a trace
/// (jit/plan.hpp) while st::jit traces a function.
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jit/plan.hpp"

namespace strata::tracing {

/// Records, on this thread, every raw call made while it lives (nested: throws ValueError if
/// a sink is already recording). st::jit's only entry point to tracing.
class Recorder final : public raw::trace::Sink {
 public:
  /// Starts recording a function whose input leaves are `inputs`.
  explicit Recorder(std::span<const RawTensor> inputs);
  /// Stops recording.
  ~Recorder() override;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// The trace, with the function's result leaves `outputs`; recording stops.
  Trace finish(std::span<const RawTensor> outputs);

  /// Registers x as read by op (ValueError when something unrecorded wrote it since).
  void read(std::string_view op, const RawTensor& x) override { ref(op, x); }
  /// Appends a call that has run.
  void append(std::string_view op, raw::trace::Effect effect, std::vector<RawTensor> in,
              std::span<const RawTensor> out, raw::trace::Kernel kernel,
              raw::trace::Elementwise ew) override;
  /// Whether x's storage holds a value computed from the inputs.
  bool traced(const RawTensor& x) const override;
  /// Notes a host read of a tensor the function did not make (a captured one): the plan is
  /// current only while that tensor keeps the version read (Plan::current).
  void host_read(const RawTensor& x) override;

 private:
  /// The source an operand reads, as a reference (registers a captured tensor on first
  /// sight; with `check`, ValueError when something unrecorded wrote it since).
  TraceRef ref(std::string_view op, const RawTensor& x, bool check = true);

  Trace trace_;
  std::unordered_map<const Storage*, int32_t> source_of_;
  std::vector<bool> traced_;  ///< per source: depends on an input
};

}  // namespace strata::tracing
