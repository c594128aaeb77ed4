// SPDX-License-Identifier: MIT
#pragma once
/// The trace of a function's raw calls (jit/recorder.hpp records it through raw/trace.hpp's
/// hooks) and the plan compiled from it: what st::jit (jit/jit.hpp) runs.
///
/// A trace names every tensor by a source: an input of the function, a captured tensor (one it
/// read that none of its calls made: a parameter in its closure) or a result of a recorded
/// step; an operand is a source with the layout and dtype it was read through (views cost
/// nothing to replay). Compiling drops the steps nothing needs, computes once the steps
/// that depend on no input and no captured tensor (constants: a zeros(), an arange()), and
/// frees each intermediate after its last reader. Running the plan calls the remaining
/// steps' kernels in order, on the new inputs and the captured tensors' current values.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "raw/trace.hpp"

namespace strata::tracing {

/// One tensor of a trace as an operand reads it.
struct TraceRef {
  int32_t source = -1;       ///< index into Trace::sources
  Layout layout;             ///< how it was read (a view of the source's storage)
  DType dtype = DType::f32;  ///< the dtype it was read as
};

/// Where the storage of a traced tensor comes from.
struct TraceSource {
  /// The kinds of source.
  enum class Kind : uint8_t { input, captured, step };
  Kind kind = Kind::step;            ///< what made it
  int32_t index = -1;                ///< input number, or step number
  std::shared_ptr<Storage> storage;  ///< its storage at tracing (kept for captured ones)
  uint64_t version = 0;              ///< the version the next reader must see
};

/// One recorded call.
struct TraceStep {
  std::string op;                                        ///< the primitive's name
  raw::trace::Effect effect = raw::trace::Effect::pure;  ///< what it does besides returning results
  std::vector<TraceRef> in;                              ///< its operands
  std::vector<TraceRef> out;   ///< its results (sources it made, or views of them)
  raw::trace::Kernel kernel;   ///< runs it again
  raw::trace::Elementwise ew;  ///< which elementwise primitive (for the fuser)
  Device device;               ///< where its results are
};

/// A recorded trace: st::jit builds the plan from it.
struct Trace {
  std::vector<TraceSource> sources;   ///< every storage the function touched
  std::vector<TraceStep> steps;       ///< the recorded calls, in order
  std::vector<int32_t> input_source;  ///< the source of each input leaf
  std::vector<TraceRef> outputs;      ///< the function's result leaves
  /// Captured tensors whose values the function read on the host (item()), with the version
  /// read: what it did with those values is fixed into the trace.
  /// (Weak: a tensor the program dropped makes the plan stale, as one it wrote.)
  std::vector<std::pair<std::weak_ptr<Storage>, uint64_t>> host_reads;
};

struct FusedGroup;  // jit/fuse.hpp

/// A trace compiled for replay. run() may be called from several
/// threads at once.
class Plan {
 public:
  /// The plan of `trace` (dead steps dropped, constants folded, frees placed).
  explicit Plan(Trace trace);
  /// Frees the plan (out of line: FusedGroup is complete there).
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  /// Runs the plan on inputs (one per input leaf, with the traced leaves' layouts) and returns
  /// the result leaves. An error of a step names the step and its primitive.
  std::vector<RawTensor> run(std::span<const RawTensor> inputs) const;
  /// A listing of the steps (run, folded or dropped), their operands and results, and the
  /// bytes a call reads and writes.
  std::string explain() const;
  /// False once a captured tensor the function read on the host (item()) was written or
  /// dropped by the program: the values fixed into the plan are stale and st::jit traces again.
  bool current() const;
  /// Steps recorded, run by each call, and folded into constants.
  struct Counts {
    std::size_t recorded = 0;  ///< steps in the trace
    std::size_t run = 0;       ///< steps each call runs
    std::size_t folded = 0;    ///< steps computed once, at tracing
    std::size_t fused = 0;     ///< of the steps run, those in fused groups (jit/fuse.hpp)
    std::size_t groups = 0;    ///< fused groups
    std::size_t merged = 0;    ///< steps that repeated an earlier one (dropped: CSE)
    std::size_t shared = 0;    ///< folded constants read as an equal earlier one instead
  };
  /// How many steps the plan has of each kind.
  Counts counts() const { return counts_; }

 private:
  /// What compiling decided for a step.
  enum class Fate : uint8_t { run, folded, dropped };

  /// Common subexpressions: makes the readers of an elementwise step that repeats an earlier
  /// one read the earlier result instead (the step is then dead). `written`: per source,
  /// whether a step writes it in place.
  void merge_repeats(const std::vector<bool>& written);
  /// Makes run steps that read small constants with equal bytes read the same one.
  void merge_constants();
  /// Reorders the steps: pads next to their readers, for the fuser (tracing::pads_to_readers).
  void move_pads(const std::vector<bool>& written);

  Trace trace_;
  std::vector<Fate> fate_;          ///< per step
  std::vector<bool> constant_;      ///< per source: kept from tracing
  std::vector<FusedGroup> groups_;  ///< the fused elementwise chains
  std::vector<int32_t> group_at_;   ///< per step: its group, or -1
  /// A step run() runs (or a group, at its first step) and the sources freed after it.
  struct Visit {
    std::size_t step = 0;          ///< the step
    std::vector<int32_t> release;  ///< sources freed after it
  };
  std::vector<Visit> visits_;   ///< what run() runs, in order
  std::vector<int32_t> bound_;  ///< sources bound before the first step (captured, constants)
  std::vector<int32_t> slot_;   ///< per source: its place in a call's store (-1: never held)
  int32_t slots_ = 0;           ///< places in a call's store
  Counts counts_;
};

}  // namespace strata::tracing
