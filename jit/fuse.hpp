// SPDX-License-Identifier: MIT
#pragma once
/// The fuser of a plan (jit/plan.hpp): chains of elementwise steps run block by block.
///
/// Consecutive run steps that are unary, binary, where or cast on the CPU, of one shape, form a
/// group (an operand made inside the group must be read as it was made). A group runs over blocks
/// of a few thousand elements: each op of the chain on the block (raw/cpu/blocks.hpp: the eager
/// kernels' functors and vector kernels, so the bits are eager's), intermediates in small buffers
/// that stay in the L1 cache, and only the values read after the group written to memory. A chain
/// of ten ops then reads its input and writes its output once instead of ten times, and a chain of
/// one-element ops pays a function call per op instead of a whole primitive's dispatch.
///
/// Reductions join a chain too: a sum, maximum or minimum of f32 or f64 rows of its trailing
/// axes (a layer norm's or a softmax's statistics). The group's blocks are then whole rows, so
/// each block's rows are reduced as soon as they are made, by eager's row kernels
/// (raw/cpu/blocks.hpp), and the chain goes on: ops on the reduced values ("row ops": the
/// mean from the sum, the reciprocal of a standard deviation) run on the block's rows, and ops
/// of the full shape read a row value broadcast along its row. A layer norm then reads its
/// input once and writes its output once. Rows longer than a sum's piece (vmath::kSumBlock)
/// are cut into the pieces eager sums them in, so their sums end the group (nothing in it
/// reads them).
///
/// A pad joins a chain as an op that reads its operand padded: each block's elements are the
/// operand's where they fall inside it and the pad value elsewhere. The transpose of a slice
/// is a pad, so a gradient that sums the cotangents of many slices of one tensor (a function
/// of x[0:3], x[3:6], x[9]) adds its pads in one pass instead of writing and reading each.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "jit/gather.hpp"
#include "jit/plan.hpp"
#include "raw/primitives.hpp"

namespace strata::tracing {

/// Where a call holds a source's value: a storage, and the byte offset of the source's element
/// 0 in it (a fused group's outputs share one storage).
struct Held {
  Held() = default;
  /// Holds `s` (null: nothing held), the source `bytes` into it.
  Held(std::shared_ptr<Storage> s, int64_t bytes);
  std::shared_ptr<Storage> storage;  ///< the storage
  int64_t bytes = 0;                 ///< the source's offset in it
  /// The source's element 0 (the storage's data, plus bytes): a fused group with thousands of
  /// inputs reads them from the store, instead of from each storage (a cache miss each).
  const char* data = nullptr;
  /// The tensor r reads (r's layout shifted by the offset).
  RawTensor read(const TraceRef& r) const;
};

/// A chain of elementwise steps of a plan, run as one.
struct FusedGroup {
  /// Which primitive an op runs: raw::trace::Elementwise's kind and op, without a pad's
  /// parameters (kept in pads): a recurrence traced whole has groups of thousands of ops.
  struct Which {
    raw::trace::Elementwise::Kind kind = raw::trace::Elementwise::Kind::none;  ///< its kind
    uint8_t op = 0;  ///< its UnaryOp, BinaryOp, ReduceOp, or a cast's DType
  };
  /// One op of the chain. Its operands are values: k >= 0 the result of op k, and
  /// input_value(k) < 0 the group's input k (a pad's operand: an input read padded).
  struct Op {
    Which ew;                                ///< which primitive (a reduce: its ReduceOp)
    DType dtype = DType::f32;                ///< its operands' dtype (where: a's and b's)
    DType out_dtype = DType::f32;            ///< its result's
    std::array<int32_t, 3> arg{-1, -1, -1};  ///< its operands (values)
    bool rows = false;    ///< a value per row: a reduction, or a row op (numel / row values)
    int32_t slot = -1;    ///< its block buffer, when not an output
    int32_t output = -1;  ///< its index in outputs, when written to memory
    int32_t pad = -1;     ///< a pad: how it reads its operand (in pads)
  };
  std::vector<std::size_t> steps;  ///< the trace steps it replaces, in order
  Shape shape;                     ///< the full shape: every op's result but the row values
  std::vector<TraceRef> inputs;    ///< values made outside the group, as read
  /// How an input is read: dense (contiguous, its elements in order), single (one value
  /// broadcast: every stride 0), gathered into a block buffer (any other view: a broadcast
  /// bias, a transpose, a slice), or padded (by the pad op reading it, into its block).
  enum class Read : uint8_t { dense, single, gathered, padded };
  std::vector<Read> read;        ///< per input
  std::vector<bool> input_rows;  ///< per input: read by row ops (one value per row)
  /// Per input read by gathering, in input order: the layout its gathering walks (coalesced).
  std::vector<Layout> walks;
  /// Per input read padded, in input order: how (jit/gather.hpp).
  std::vector<PadRead> pads;
  /// Per input: its storage when it is a constant of the plan, which the group keeps (a call
  /// binds nothing for it); nothing held for the others.
  std::vector<Held> fixed;
  std::vector<Op> ops;           ///< the chain, reductions and row ops among it
  int64_t row = 0;               ///< elements per reduced row (0: no reduction)
  std::vector<int32_t> outputs;  ///< the sources written to memory (read after the group)
  std::vector<bool> returned;    ///< per output: a result of the function (its own storage)
  int32_t slots = 0;             ///< block buffers needed
  int32_t expands = 0;  ///< buffers for row values broadcast along their rows (per op, at most)

  /// The value naming input k.
  static int32_t input_value(std::size_t k) { return -1 - int32_t(k); }
  /// The input a negative value names.
  static std::size_t input_index(int32_t v) { return std::size_t(-1 - v); }
};

/// A new order of a plan's steps, for the fuser: each pad read by one run step moved to just
/// before its reader, and each sum of pads (adds of pads and of such sums, as a reverse pass
/// sums the cotangents of a tensor's slices) moved with its pads to just before its last add;
/// only values read once, not returned, whose operands nothing writes in place, move. A
/// reverse pass makes each slice's pad, and adds it to the tensor's cotangent, when it reaches
/// the slice, far from the others; side by side, the fuser runs them as one pass. order[k] is
/// the step that runs k-th. `run` marks the steps a call runs, `written` the sources some step
/// writes in place.
std::vector<std::size_t> pads_to_readers(const Trace& trace, const std::vector<bool>& run,
                                         const std::vector<bool>& written);

/// The groups among a plan's steps: `run` marks the steps a call runs, `last` each source's
/// last reader (trace.steps.size() for a result of the function). Groups of one op are left
/// to the step's own kernel.
std::vector<FusedGroup> fuse(const Trace& trace, const std::vector<bool>& run,
                             const std::vector<std::size_t>& last);

/// Runs a group on `store` (the values of a call; source s at store[slot[s]]): reads its
/// inputs there and stores its outputs: those the function returns in storages of their own,
/// the others in one storage for the group.
void run_fused(const FusedGroup& g, std::vector<Held>& store, const std::vector<int32_t>& slot);

}  // namespace strata::tracing
