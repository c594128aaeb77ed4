// SPDX-License-Identifier: MIT
// Finding a plan's elementwise chains (jit/fuse.hpp); jit/fused_run.cpp runs them.
#include "jit/fuse.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "jit/gather.hpp"
#include "raw/cpu/blocks.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/scalar/arith.hpp"

namespace strata::tracing {

namespace {

using Kind = raw::trace::Elementwise::Kind;

/// How a group reads the operand r of an op of result shape `shape`; nullopt when it cannot.
std::optional<FusedGroup::Read> operand_read(const TraceRef& r, const Shape& shape) {
  if (r.source < 0 || r.layout.shape != shape) return std::nullopt;
  if (r.layout.is_contiguous()) return FusedGroup::Read::dense;
  const auto& st = r.layout.strides;
  if (std::all_of(st.begin(), st.end(), [](int64_t s) { return s == 0; })) {
    return FusedGroup::Read::single;
  }
  return FusedGroup::Read::gathered;
}

/// The bits of `value` converted to dtype (as a pad or a fill converts it), in the low bytes.
uint64_t fill_bits(double value, DType dtype) {
  uint64_t bits = 0;
  visit_dtype(dtype, "pad", [&]<class T>(type_tag<T>) {
    const T v = detail::scalar::convert<T>(value);
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

/// Can step s start or join a chain (its own requirements, before its operands are matched)?
bool fusable(const TraceStep& s) {
  if (s.effect != raw::trace::Effect::pure || s.ew.kind == Kind::none || !s.device.is_cpu()) {
    return false;
  }
  if (s.out.size() != 1 || s.out[0].source < 0) return false;
  const Layout& l = s.out[0].layout;
  return l.offset == 0 && l.is_contiguous() && l.numel() > 0;
}

/// Whether l reads a contiguous vector of `rows` values, one per row of `row` elements: the
/// view that broadcasts a row value ([n, 1] or [n, 1, 1]) over the rows it was reduced from.
bool row_broadcast(const Layout& l, int64_t rows, int64_t row) {
  const Layout c = coalesced(l);
  if (c.offset != 0) return false;
  if (rows == 1) return c.ndim() == 1 && c.shape[0] == row && c.strides[0] == 0;
  return c.ndim() == 2 && c.shape[0] == rows && c.strides[0] == 1 && c.shape[1] == row &&
         c.strides[1] == 0;
}

/// Builds groups step by step; close() keeps the current one when it has two ops or more.
class Builder {
 public:
  Builder(const Trace& t, const std::vector<std::size_t>& last) : t_(t), last_(last) {}

  /// Adds step i to the current group, or closes the group and starts another with it; a step
  /// that cannot be fused at all closes the group and joins none.
  void add(std::size_t i) {
    const TraceStep& s = t_.steps[i];
    if (!fusable(s)) return close();
    if (s.ew.kind == Kind::reduce) return add_reduction(i);
    if (s.ew.kind == Kind::pad) return add_pad(i);
    bool rows = false;
    if (!g_.steps.empty() && s.out[0].layout.shape != g_.shape) {
      rows = rows_inside() && s.out[0].layout.numel() * g_.row == numel(g_.shape);
      if (!rows) close();
    }
    if (!try_add(i, rows)) {
      close();
      if (!try_add(i, false)) close();
    }
  }

  /// Ends the current group.
  void close() {
    if (g_.ops.size() >= 2) finish();
    g_ = FusedGroup{};
    op_of_.clear();
    op_steps_.clear();
  }

  /// The groups found.
  std::vector<FusedGroup> groups;

 private:
  static int64_t numel(const Shape& s) { return Layout::contiguous(s).numel(); }

  /// Whether ops of the current group may read its row values: its blocks hold whole rows
  /// (rows of one element are left alone: their "row values" have the full shape's count).
  bool rows_inside() const { return g_.row >= 2 && g_.row <= detail::vmath::kSumBlock; }

  /// Adds step i to the current group (starting one if there is none), as a row op when `rows`;
  /// false, with the group unchanged, when an operand does not fit.
  bool try_add(std::size_t i, bool rows) {
    const TraceStep& s = t_.steps[i];
    const Shape& shape = g_.steps.empty() || rows ? s.out[0].layout.shape : g_.shape;
    FusedGroup::Op op{
        {s.ew.kind, s.ew.op}, s.in[s.ew.kind == Kind::where ? 1 : 0].dtype, s.out[0].dtype};
    op.rows = rows;
    std::vector<std::pair<TraceRef, FusedGroup::Read>> fresh;  // the inputs this step adds
    for (std::size_t k = 0; k < s.in.size(); ++k) {
      const TraceRef& r = s.in[k];
      if (auto made = op_of_.find(r.source); made != op_of_.end()) {
        // A value of the chain: read as it was made (dense), or a row value read by a full
        // op broadcast along its rows; else the step does not fit.
        const bool row_value = g_.ops[std::size_t(made->second)].rows;
        const bool as_made =
            r.layout.shape == shape && r.layout.is_contiguous() && r.layout.offset == 0;
        const bool spread = row_value && !rows && rows_inside() &&
                            row_broadcast(r.layout, numel(g_.shape) / g_.row, g_.row);
        if (row_value != rows ? !spread : !as_made) return false;
        op.arg[k] = made->second;
        continue;
      }
      const std::optional<FusedGroup::Read> read = operand_read(r, shape);
      if (!read) return false;
      op.arg[k] = FusedGroup::input_value(g_.inputs.size() + fresh.size());
      fresh.emplace_back(r, *read);
    }
    if (g_.steps.empty()) g_.shape = shape;
    for (auto& [r, read] : fresh) {
      g_.inputs.push_back(r);
      g_.read.push_back(read);
      g_.input_rows.push_back(rows);
    }
    op_of_[s.out[0].source] = int32_t(g_.ops.size());
    g_.ops.push_back(op);
    g_.steps.push_back(i);
    op_steps_.push_back(i);
    return true;
  }

  /// Adds the reduction step i when it reduces rows of a full value of the chain (or of a
  /// dense input) that the group can reduce with eager's bits, every reduction of the group
  /// over rows of one length; else closes the group (a reduction starts none).
  void add_reduction(std::size_t i) {
    const TraceStep& s = t_.steps[i];
    const TraceRef& r = s.in[0];
    if (g_.steps.empty() || r.layout.shape != g_.shape) return close();
    const int64_t row = r.layout.numel() / s.out[0].layout.numel();
    const auto op = ReduceOp(s.ew.op);
    if (!detail::row_reduction_fuses(op, r.dtype, row) || (g_.row != 0 && g_.row != row) ||
        s.out[0].dtype != r.dtype) {
      return close();
    }
    FusedGroup::Op reduce{{s.ew.kind, s.ew.op}, r.dtype, r.dtype};
    reduce.rows = true;
    if (auto made = op_of_.find(r.source); made != op_of_.end()) {
      const bool dense = r.layout.is_contiguous() && r.layout.offset == 0;
      if (g_.ops[std::size_t(made->second)].rows || !dense) return close();
      reduce.arg[0] = made->second;
    } else {
      if (operand_read(r, g_.shape) != FusedGroup::Read::dense) return close();
      reduce.arg[0] = FusedGroup::input_value(g_.inputs.size());
      g_.inputs.push_back(r);
      g_.read.push_back(FusedGroup::Read::dense);
      g_.input_rows.push_back(false);
    }
    g_.row = row;
    op_of_[s.out[0].source] = int32_t(g_.ops.size());
    g_.ops.push_back(reduce);
    g_.steps.push_back(i);
    op_steps_.push_back(i);
  }

  /// Adds the pad step i, reading its operand padded (an operand made in the group, a value of
  /// another shape, is read from memory by a group of its own).
  void add_pad(std::size_t i) {
    const TraceStep& s = t_.steps[i];
    if (!g_.steps.empty() && s.out[0].layout.shape != g_.shape) close();
    const TraceRef& r = s.in[0];
    if (r.source < 0) return close();
    if (op_of_.contains(r.source)) close();
    if (g_.steps.empty()) g_.shape = s.out[0].layout.shape;
    FusedGroup::Op op{{Kind::pad}, r.dtype, s.out[0].dtype};
    op.arg[0] = FusedGroup::input_value(g_.inputs.size());
    op.pad = int32_t(g_.pads.size());
    g_.inputs.push_back(r);
    g_.read.push_back(FusedGroup::Read::padded);
    g_.input_rows.push_back(false);
    g_.pads.push_back({r.layout, s.ew.before, g_.shape, fill_bits(s.ew.value, r.dtype)});
    op_of_[s.out[0].source] = int32_t(g_.ops.size());
    g_.ops.push_back(op);
    g_.steps.push_back(i);
    op_steps_.push_back(i);
  }

  /// Decides which results are written to memory and gives the others block buffers.
  void finish() {
    for (std::size_t k = 0; k < g_.inputs.size(); ++k) {
      if (g_.read[k] == FusedGroup::Read::gathered)
        g_.walks.push_back(coalesced(g_.inputs[k].layout));
    }
    const std::size_t end = g_.steps.back();
    // The last op of the chain reading each op's result, and the row values each full op
    // reads spread along their rows.
    std::vector<std::size_t> last_use(g_.ops.size(), 0);
    for (std::size_t k = 0; k < g_.ops.size(); ++k) {
      int32_t spread = 0;
      for (int32_t a : g_.ops[k].arg) {
        if (a < 0) continue;
        last_use[std::size_t(a)] = k;
        spread += g_.ops[std::size_t(a)].rows && !g_.ops[k].rows;
      }
      g_.expands = std::max(g_.expands, spread);
    }
    std::vector<int32_t> free_slots;
    for (std::size_t k = 0; k < g_.ops.size(); ++k) {
      FusedGroup::Op& op = g_.ops[k];
      const int32_t source = t_.steps[op_steps_[k]].out[0].source;
      if (last_[std::size_t(source)] > end) {
        op.output = int32_t(g_.outputs.size());
        g_.outputs.push_back(source);
        g_.returned.push_back(last_[std::size_t(source)] == t_.steps.size());
      } else if (free_slots.empty()) {
        op.slot = g_.slots++;
      } else {
        op.slot = free_slots.back();
        free_slots.pop_back();
      }
      // Operands whose last reader this op is give their buffers back (after the result took
      // one: a result never shares its operand's buffer).
      for (std::size_t j = 0; j < 3; ++j) {
        const int32_t a = op.arg[j];
        if (a < 0 || last_use[std::size_t(a)] != k) continue;
        if (std::find(op.arg.begin(), op.arg.begin() + std::ptrdiff_t(j), a) !=
            op.arg.begin() + std::ptrdiff_t(j)) {
          continue;  // the same operand twice (x * x): given back once
        }
        const int32_t slot = g_.ops[std::size_t(a)].slot;
        if (slot >= 0) free_slots.push_back(slot);
      }
    }
    groups.push_back(std::move(g_));
  }

  const Trace& t_;
  const std::vector<std::size_t>& last_;
  FusedGroup g_;
  std::map<int32_t, int32_t> op_of_;   ///< source -> the op of the chain that made it
  std::vector<std::size_t> op_steps_;  ///< per op of the current group: its step
};

}  // namespace

std::vector<std::size_t> pads_to_readers(const Trace& trace, const std::vector<bool>& run,
                                         const std::vector<bool>& written) {
  const std::size_t n = trace.steps.size(), sources = trace.sources.size();
  // Per source: how many times run steps (or the function's results) read it, the last step
  // reading it, and the step that made it.
  std::vector<int32_t> reads(sources, 0);
  std::vector<std::size_t> reader(sources, 0), maker(sources, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!run[i]) continue;
    for (const TraceRef& r : trace.steps[i].in) {
      if (r.source < 0) continue;
      ++reads[std::size_t(r.source)];
      reader[std::size_t(r.source)] = i;
    }
    for (const TraceRef& r : trace.steps[i].out) {
      if (r.source >= 0) maker[std::size_t(r.source)] = i;
    }
  }
  for (const TraceRef& r : trace.outputs) reads[std::size_t(r.source)] += 2;
  // Sums of pads: pads, and adds of sums of pads, whose operands nothing writes in place (they
  // must hold the same values later); of those, the ones read by one step only move.
  std::vector<bool> sum_of_pads(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const TraceStep& s = trace.steps[i];
    if (!run[i] || s.effect != raw::trace::Effect::pure || s.out.size() != 1 ||
        s.out[0].source < 0) {
      continue;
    }
    bool fits =
        s.ew.kind == Kind::pad || (s.ew.kind == Kind::binary && BinaryOp(s.ew.op) == BinaryOp::add);
    for (const TraceRef& r : s.in) {
      fits = fits && r.source >= 0 && !written[std::size_t(r.source)];
      if (fits && s.ew.kind == Kind::binary) {
        const std::size_t m = maker[std::size_t(r.source)];
        fits = m < n && sum_of_pads[m];
      }
    }
    sum_of_pads[i] = fits;
  }
  // Each moves to just before the first step of its chain that stays: the last add (read by
  // something else, or returned), or a pad's reader.
  std::vector<std::size_t> target(n, n);
  for (std::size_t i = n; i-- > 0;) {
    if (!sum_of_pads[i] || reads[std::size_t(trace.steps[i].out[0].source)] != 1) continue;
    const std::size_t j = reader[std::size_t(trace.steps[i].out[0].source)];
    if (sum_of_pads[j] && trace.steps[j].ew.kind == Kind::binary) {
      target[i] = target[j] < n ? target[j] : j;
    } else if (trace.steps[i].ew.kind == Kind::pad) {
      target[i] = j;
    }
  }
  std::vector<std::vector<std::size_t>> moved_before(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (target[i] < n) moved_before[target[i]].push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    order.insert(order.end(), moved_before[i].begin(), moved_before[i].end());
    if (target[i] == n) order.push_back(i);
  }
  return order;
}

std::vector<FusedGroup> fuse(const Trace& trace, const std::vector<bool>& run,
                             const std::vector<std::size_t>& last) {
  Builder b(trace, last);
  for (std::size_t i = 0; i < trace.steps.size(); ++i) {
    if (run[i]) b.add(i);
  }
  b.close();
  return std::move(b.groups);
}

}  // namespace strata::tracing
