// SPDX-License-Identifier: MIT
// Finding and running a plan's elementwise chains (jit/fuse.hpp).
#include "jit/fuse.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/parallel.hpp"
#include "raw/cpu/blocks.hpp"
#include "raw/ops.hpp"

namespace strata::tracing {

namespace {

/// Elements per block: the block buffers of a long chain stay in the L1 cache.
constexpr int64_t kBlock = 2048;
/// Blocks per parallel piece: a piece is worth waking a thread for.
constexpr int64_t kBlocksPerPiece = 16;

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

/// l with its size-1 axes dropped and each axis merged into the one before it where a row-major
/// walk steps through both as through one (a [p, 1] column broadcast to [p, 3] stays two axes;
/// a transposed [4, 5] stays two; a contiguous slice of rows becomes one): fewer carries per
/// element in gather_typed.
Layout coalesced(const Layout& l) {
  Layout out;
  out.offset = l.offset;
  for (int64_t d = 0; d < l.ndim(); ++d) {
    const int64_t size = l.shape[std::size_t(d)], stride = l.strides[std::size_t(d)];
    if (size == 1) continue;
    if (!out.shape.empty() && out.strides.back() == stride * size) {
      out.shape.back() *= size;
      out.strides.back() = stride;
      continue;
    }
    out.shape.push_back(size);
    out.strides.push_back(stride);
  }
  if (out.shape.empty()) out.shape.push_back(1), out.strides.push_back(0);
  return out;
}

/// Copies elements [lo, lo + n) (row-major) of the tensor at `base` (its storage's data) with
/// layout l (coalesced), of `size` bytes each, to dst: a strided or broadcast operand as a
/// dense block.
template <class U>
void gather_typed(const U* base, const Layout& l, int64_t lo, int64_t n, U* dst) {
  const int64_t nd = l.ndim();
  const int64_t inner = l.shape[std::size_t(nd - 1)], step = l.strides[std::size_t(nd - 1)];
  if (nd <= 2) {
    // One row after another (a broadcast column, a strided column, a transposed matrix): the
    // common views, without the general walk's carries.
    const int64_t outer_step = nd == 2 ? l.strides[0] : 0;
    int64_t c = lo % inner;
    const U* row = base + l.offset + (lo / inner) * outer_step;
    for (int64_t j = 0; j < n; row += outer_step, c = 0) {
      const int64_t m = std::min(n - j, inner - c);
      if (step == 0) {
        std::fill(dst + j, dst + j + m, row[0]);
      } else {
        for (int64_t k = 0; k < m; ++k) dst[j + k] = row[(c + k) * step];
      }
      j += m;
    }
    return;
  }
  Shape idx = l.shape;  // the multi-index of element lo (inline storage: no allocation)
  int64_t rest = lo, off = l.offset;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[std::size_t(d)] = rest % l.shape[std::size_t(d)];
    rest /= l.shape[std::size_t(d)];
    off += idx[std::size_t(d)] * l.strides[std::size_t(d)];
  }
  int64_t j = 0;
  while (j < n) {
    // The rest of the current innermost row, then carry into the outer axes.
    const int64_t m = std::min(n - j, inner - idx[std::size_t(nd - 1)]);
    if (step == 1) {
      std::copy(base + off, base + off + m, dst + j);
    } else if (step == 0) {
      std::fill(dst + j, dst + j + m, base[off]);
    } else {
      for (int64_t k = 0; k < m; ++k) dst[j + k] = base[off + k * step];
    }
    j += m;
    off += m * step;
    idx[std::size_t(nd - 1)] += m;
    for (int64_t d = nd - 1; d > 0 && idx[std::size_t(d)] == l.shape[std::size_t(d)]; --d) {
      off -= idx[std::size_t(d)] * l.strides[std::size_t(d)];
      idx[std::size_t(d)] = 0;
      ++idx[std::size_t(d - 1)];
      off += l.strides[std::size_t(d - 1)];
    }
  }
}

/// gather_typed for elements of `size` bytes (the bits are copied, whatever the dtype).
void gather(const char* base, const Layout& l, std::size_t size, int64_t lo, int64_t n, char* dst) {
  switch (size) {
    case 1:
      return gather_typed(reinterpret_cast<const uint8_t*>(base), l, lo, n,
                          reinterpret_cast<uint8_t*>(dst));
    case 2:
      return gather_typed(reinterpret_cast<const uint16_t*>(base), l, lo, n,
                          reinterpret_cast<uint16_t*>(dst));
    case 4:
      return gather_typed(reinterpret_cast<const uint32_t*>(base), l, lo, n,
                          reinterpret_cast<uint32_t*>(dst));
    default:
      return gather_typed(reinterpret_cast<const uint64_t*>(base), l, lo, n,
                          reinterpret_cast<uint64_t*>(dst));
  }
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

/// Builds groups step by step; close() keeps the current one when it has two ops or more.
class Builder {
 public:
  Builder(const Trace& t, const std::vector<std::size_t>& last) : t_(t), last_(last) {}

  /// Adds step i to the current group, or closes the group and starts another with it; a step
  /// that cannot be fused at all closes the group and joins none.
  void add(std::size_t i) {
    const TraceStep& s = t_.steps[i];
    if (!fusable(s)) return close();
    if (!g_.steps.empty() && s.out[0].layout.shape != g_.shape) close();
    if (!try_add(i)) {
      close();
      if (!try_add(i)) close();
    }
  }

  /// Ends the current group.
  void close() {
    if (g_.ops.size() >= 2) finish();
    g_ = FusedGroup{};
    op_of_.clear();
  }

  /// The groups found.
  std::vector<FusedGroup> groups;

 private:
  /// Adds step i to the current group (starting one if there is none); false, with the group
  /// unchanged, when an operand does not fit.
  bool try_add(std::size_t i) {
    const TraceStep& s = t_.steps[i];
    const Shape& shape = g_.steps.empty() ? s.out[0].layout.shape : g_.shape;
    FusedGroup::Op op{s.ew, s.in[s.ew.kind == Kind::where ? 1 : 0].dtype, s.out[0].dtype};
    std::vector<std::pair<TraceRef, FusedGroup::Read>> fresh;  // the inputs this step adds
    for (std::size_t k = 0; k < s.in.size(); ++k) {
      const TraceRef& r = s.in[k];
      if (auto made = op_of_.find(r.source); made != op_of_.end()) {
        // A result of the chain: read as it was made (dense), or the step does not fit.
        if (r.layout.shape != shape || !r.layout.is_contiguous() || r.layout.offset != 0) {
          return false;
        }
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
    }
    op_of_[s.out[0].source] = int32_t(g_.ops.size());
    g_.ops.push_back(op);
    g_.steps.push_back(i);
    return true;
  }

  /// Decides which results are written to memory and gives the others block buffers.
  void finish() {
    for (std::size_t k = 0; k < g_.inputs.size(); ++k) {
      if (g_.read[k] == FusedGroup::Read::gathered)
        g_.walks.push_back(coalesced(g_.inputs[k].layout));
    }
    const std::size_t end = g_.steps.back();
    // The last op of the chain reading each op's result.
    std::vector<std::size_t> last_use(g_.ops.size(), 0);
    for (std::size_t k = 0; k < g_.ops.size(); ++k) {
      for (int32_t a : g_.ops[k].arg) {
        if (a >= 0) last_use[std::size_t(a)] = k;
      }
    }
    std::vector<int32_t> free_slots;
    for (std::size_t k = 0; k < g_.ops.size(); ++k) {
      FusedGroup::Op& op = g_.ops[k];
      const int32_t source = t_.steps[g_.steps[k]].out[0].source;
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
  std::map<int32_t, int32_t> op_of_;  ///< source -> the op of the chain that made it
};

}  // namespace

std::vector<FusedGroup> fuse(const Trace& trace, const std::vector<bool>& run,
                             const std::vector<std::size_t>& last) {
  Builder b(trace, last);
  for (std::size_t i = 0; i < trace.steps.size(); ++i) {
    if (run[i]) b.add(i);
  }
  b.close();
  return std::move(b.groups);
}

RawTensor Held::read(const TraceRef& r) const {
  if (bytes == 0) return RawTensor(storage, r.layout, r.dtype);
  Layout l = r.layout;
  l.offset += bytes / int64_t(dtype_size(r.dtype));
  return RawTensor(storage, std::move(l), r.dtype);
}

namespace {

/// run_fused's per call arrays, kept by each thread.
struct Scratch {
  std::vector<const char*> in_data, in_base;  ///< per input: its storage's data, its element 0
  std::vector<std::size_t> in_size;           ///< per input: its element size
  std::vector<int64_t> gathered;              ///< per input: its gathered buffer, or -1
  std::vector<char*> out_base;                ///< per output: where it is written
  std::vector<int64_t> shared_at;             ///< per output: its offset in the arena, or -1
};

}  // namespace

void run_fused(const FusedGroup& g, std::vector<Held>& store, const std::vector<int32_t>& slot) {
  auto at = [&](int32_t source) -> Held& { return store[std::size_t(slot[std::size_t(source)])]; };
  const int64_t numel = Layout::contiguous(g.shape).numel();
  const std::size_t inputs = g.inputs.size();
  // Per call arrays as long as the group's inputs and outputs: a recurrence traced whole makes
  // groups of tens of thousands, whose arrays allocated per call were fresh pages every time.
  // Each thread keeps its own across calls (a group's blocks never call run_fused).
  thread_local Scratch scratch;
  Scratch& sc = scratch;
  sc.in_data.assign(inputs, nullptr);
  sc.in_base.assign(inputs, nullptr);
  sc.in_size.assign(inputs, 0);
  sc.gathered.assign(inputs, -1);  // per input read by gathering: its buffer and walk
  int64_t gathers = 0;
  for (std::size_t k = 0; k < inputs; ++k) {
    const TraceRef& r = g.inputs[k];
    const Held h = g.fixed[k] ? Held{g.fixed[k], 0} : at(r.source);
    sc.in_size[k] = dtype_size(r.dtype);
    sc.in_data[k] = static_cast<const char*>(h.storage->data()) + h.bytes;
    sc.in_base[k] = sc.in_data[k] + r.layout.offset * int64_t(sc.in_size[k]);
    if (g.read[k] == FusedGroup::Read::gathered) sc.gathered[k] = gathers++;
  }
  const auto& in_data = sc.in_data;
  const auto& in_base = sc.in_base;
  const auto& in_size = sc.in_size;
  const auto& gathered = sc.gathered;
  // The outputs the function returns get storages of their own; the others share one, each
  // at a 64-byte boundary: one allocation per group and call instead of one per output.
  sc.out_base.assign(g.outputs.size(), nullptr);
  sc.shared_at.assign(g.outputs.size(), -1);
  auto& out_base = sc.out_base;
  auto& shared_at = sc.shared_at;
  int64_t shared_bytes = 0;
  for (const FusedGroup::Op& op : g.ops) {
    if (op.output < 0) continue;
    const std::size_t k = std::size_t(op.output);
    if (g.returned[k]) {
      const RawTensor t = raw::empty(g.shape, op.out_dtype, Device::cpu());
      at(g.outputs[k]) = {t.storage(), 0};
      out_base[k] = static_cast<char*>(t.storage()->data());
    } else {
      shared_at[k] = shared_bytes;
      shared_bytes += (numel * int64_t(dtype_size(op.out_dtype)) + 63) / 64 * 64;
    }
  }
  if (shared_bytes > 0) {
    const RawTensor arena = raw::empty({shared_bytes}, DType::b8, Device::cpu());
    for (std::size_t k = 0; k < g.outputs.size(); ++k) {
      if (shared_at[k] < 0) continue;
      at(g.outputs[k]) = {arena.storage(), shared_at[k]};
      out_base[k] = static_cast<char*>(arena.storage()->data()) + shared_at[k];
    }
  }
  const int64_t block = std::min(kBlock, numel);
  const int64_t blocks = (numel + block - 1) / block;
  detail::parallel_for(0, blocks, kBlocksPerPiece, [&](int64_t b0, int64_t b1) {
    // 8 bytes per element: room for any dtype. The op results' buffers, then the gathered
    // inputs'.
    // Each thread keeps its buffers across pieces and calls: freeing and allocating them per
    // piece let the C library return and re-fault the pages (zeroed by the kernel) every time.
    thread_local std::vector<double> buffers;
    const std::size_t need = std::size_t((g.slots + gathers) * block);
    if (buffers.size() < need) buffers.resize(need);
    double* const base = buffers.data();
    auto slot = [&](int64_t s) { return reinterpret_cast<char*>(base + s * block); };
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t lo = b * block, n = std::min(block, numel - lo);
      for (std::size_t k = 0; k < inputs; ++k) {
        if (gathered[k] >= 0) {
          gather(in_data[k], g.walks[std::size_t(gathered[k])], in_size[k], lo, n,
                 slot(g.slots + gathered[k]));
        }
      }
      // A value's elements [lo, lo + n) and its step (0: one broadcast value).
      auto value = [&](int32_t v) -> std::pair<const void*, int64_t> {
        if (v < 0) {
          const std::size_t k = FusedGroup::input_index(v);
          if (g.read[k] == FusedGroup::Read::single) return {in_base[k], 0};
          if (g.read[k] == FusedGroup::Read::gathered) return {slot(g.slots + gathered[k]), 1};
          return {in_base[k] + lo * int64_t(in_size[k]), 1};
        }
        const FusedGroup::Op& p = g.ops[std::size_t(v)];
        if (p.output >= 0) {
          return {out_base[std::size_t(p.output)] + lo * int64_t(dtype_size(p.out_dtype)), 1};
        }
        return {slot(p.slot), 1};
      };
      for (std::size_t k = 0; k < g.ops.size(); ++k) {
        const FusedGroup::Op& op = g.ops[k];
        void* out = const_cast<void*>(value(int32_t(k)).first);
        const auto [x, sx] = value(op.arg[0]);
        if (op.ew.kind == Kind::unary) {
          detail::unary_block(UnaryOp(op.ew.op), op.dtype, x, sx, out, n);
          continue;
        }
        if (op.ew.kind == Kind::cast) {
          detail::cast_block(op.dtype, op.out_dtype, x, sx, out, n);
          continue;
        }
        const auto [y, sy] = value(op.arg[1]);
        if (op.ew.kind == Kind::binary) {
          detail::binary_block(BinaryOp(op.ew.op), op.dtype, x, sx, y, sy, out, n);
          continue;
        }
        const auto [z, sz] = value(op.arg[2]);
        detail::where_block(op.dtype, x, sx, y, sy, z, sz, out, n);  // where(cond, a, b)
      }
    }
  });
}

}  // namespace strata::tracing
