// SPDX-License-Identifier: MIT
// Running a plan's fused groups (jit/fuse.hpp) block by block.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/parallel.hpp"
#include "jit/fuse.hpp"
#include "jit/gather.hpp"
#include "raw/cpu/blocks.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/ops.hpp"

namespace strata::tracing {

Held::Held(std::shared_ptr<Storage> s, int64_t bytes_in)
    : storage(std::move(s)),
      bytes(bytes_in),
      data(storage ? static_cast<const char*>(storage->data()) + bytes_in : nullptr) {}

RawTensor Held::read(const TraceRef& r) const {
  if (bytes == 0) return RawTensor(storage, r.layout, r.dtype);
  Layout l = r.layout;
  l.offset += bytes / int64_t(dtype_size(r.dtype));
  return RawTensor(storage, std::move(l), r.dtype);
}

namespace {

/// Elements per block: the block buffers of a long chain stay in the L1 cache.
constexpr int64_t kBlock = 2048;
/// Blocks per parallel piece: a piece is worth waking a thread for.
constexpr int64_t kBlocksPerPiece = 16;
/// Rows of at least this many elements have a binary op with a row value run as one call per
/// row (the row's value broadcast); shorter rows spread their values first.
constexpr int64_t kRowCall = 64;

using Kind = raw::trace::Elementwise::Kind;

/// run_fused's per call arrays, kept by each thread.
struct Scratch {
  std::vector<const char*> in_data, in_base;  ///< per input: its storage's data, its element 0
  std::vector<std::size_t> in_size;           ///< per input: its element size
  std::vector<int64_t> gathered;              ///< per input: its gathered buffer, or -1
  std::vector<char*> out_base;                ///< per output: where it is written
  std::vector<int64_t> shared_at;             ///< per output: its offset in the arena, or -1
  std::vector<int64_t> piece_of;              ///< per op: its reduction's place in pieces, or -1
  std::vector<double> pieces;  ///< per reduction of long rows and block: the block's sum
};

/// How a group's elements are cut into blocks: blocks of about kBlock elements; with
/// reductions, blocks of whole rows, or (rows longer than a sum's piece) `per_row` pieces per
/// row, the pieces eager sums the row in.
struct Blocks {
  int64_t block = 0;    ///< elements per block (at most)
  int64_t count = 0;    ///< blocks
  int64_t per_row = 0;  ///< blocks per row, when rows are cut; else 0
  int64_t row = 0;      ///< elements per row, when rows are cut

  Blocks(int64_t numel, int64_t row_elems) {
    if (row_elems == 0) {
      block = std::min(kBlock, numel);
    } else if (row_elems <= detail::vmath::kSumBlock) {
      block = std::min(std::max<int64_t>(1, kBlock / row_elems), numel / row_elems) * row_elems;
    } else {
      block = detail::vmath::kSumBlock;
      row = row_elems;
      per_row = (row_elems + block - 1) / block;
      count = numel / row_elems * per_row;
      return;
    }
    count = (numel + block - 1) / block;
  }
  /// Block b's first element and length.
  std::pair<int64_t, int64_t> operator()(int64_t b, int64_t numel) const {
    if (per_row == 0) return {b * block, std::min(block, numel - b * block)};
    const int64_t c = b % per_row * block;
    return {b / per_row * row + c, std::min(block, row - c)};
  }
};

/// o[r * row + j] = v[r] for r < rows, j < row: row values spread along their rows (the bits
/// copied, whatever the dtype).
void spread(const void* v, std::size_t size, int64_t rows, int64_t row, void* o) {
  auto fill = [&]<class U>(const U* src, U* dst) {
    for (int64_t r = 0; r < rows; ++r) std::fill(dst + r * row, dst + (r + 1) * row, src[r]);
  };
  switch (size) {
    case 1:
      return fill(static_cast<const uint8_t*>(v), static_cast<uint8_t*>(o));
    case 2:
      return fill(static_cast<const uint16_t*>(v), static_cast<uint16_t*>(o));
    case 4:
      return fill(static_cast<const uint32_t*>(v), static_cast<uint32_t*>(o));
    default:
      return fill(static_cast<const uint64_t*>(v), static_cast<uint64_t*>(o));
  }
}

}  // namespace

void run_fused(const FusedGroup& g, std::vector<Held>& store, const std::vector<int32_t>& slot) {
  auto at = [&](int32_t source) -> Held& { return store[std::size_t(slot[std::size_t(source)])]; };
  const int64_t numel = Layout::contiguous(g.shape).numel();
  const int64_t rows_total = g.row > 0 ? numel / g.row : 0;
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
    // The data pointers the store keeps: reading each storage (or copying its shared_ptr)
    // was a cache miss per input of a group with thousands of them.
    sc.in_size[k] = dtype_size(r.dtype);
    sc.in_data[k] = g.fixed[k].storage ? g.fixed[k].data : at(r.source).data;
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
    const int64_t count = op.rows ? rows_total : numel;
    if (g.returned[k]) {
      const RawTensor t = raw::empty({count}, op.out_dtype, Device::cpu());
      at(g.outputs[k]) = {t.storage(), 0};
      out_base[k] = static_cast<char*>(t.storage()->data());
    } else {
      shared_at[k] = shared_bytes;
      shared_bytes += (count * int64_t(dtype_size(op.out_dtype)) + 63) / 64 * 64;
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
  const Blocks cut(numel, g.row);
  // Sums of rows cut into pieces: each block's sum, combined once every block has run.
  sc.piece_of.assign(g.ops.size(), -1);
  int64_t long_sums = 0;
  if (cut.per_row > 0) {
    for (std::size_t k = 0; k < g.ops.size(); ++k) {
      if (g.ops[k].ew.kind == Kind::reduce) sc.piece_of[k] = long_sums++ * cut.count;
    }
    sc.pieces.assign(std::size_t(long_sums * cut.count), 0.0);
  }
  const auto& piece_of = sc.piece_of;
  double* const pieces = sc.pieces.data();
  const int64_t block = cut.block;
  detail::parallel_for(0, cut.count, kBlocksPerPiece, [&](int64_t b0, int64_t b1) {
    // 8 bytes per element: room for any dtype. The op results' buffers, then the gathered
    // inputs', then the spread row values'.
    // Each thread keeps its buffers across pieces and calls: freeing and allocating them per
    // piece let the C library return and re-fault the pages (zeroed by the kernel) every time.
    // The buffers start on a 64-byte line (a vector's malloc'd data starts 16 bytes past one):
    // misaligned, every other 32-byte access and every 64-byte one spans two lines, which
    // made a block's product in L1 take 1.4x as long.
    thread_local std::vector<double> buffers;
    const std::size_t need = std::size_t((g.slots + gathers + g.expands) * block) + 8;
    if (buffers.size() < need) buffers.resize(need);
    double* const base = reinterpret_cast<double*>(
        (reinterpret_cast<uintptr_t>(buffers.data()) + 63) & ~uintptr_t{63});
    auto slot = [&](int64_t s) { return reinterpret_cast<char*>(base + s * block); };
    char* const spread_at = slot(g.slots + gathers);
    for (int64_t b = b0; b < b1; ++b) {
      // Not a structured binding: the lambdas below capture lo (clang 14 cannot capture
      // bindings).
      const std::pair<int64_t, int64_t> piece = cut(b, numel);
      const int64_t lo = piece.first, n = piece.second;
      // The block's rows, for row ops and row inputs (whole rows unless rows are cut).
      const int64_t r0 = g.row > 0 ? lo / g.row : 0, rn = g.row > 0 ? n / g.row : 0;
      for (std::size_t k = 0; k < inputs; ++k) {
        if (gathered[k] >= 0) {
          const bool rows = g.input_rows[k];
          gather(in_data[k], g.walks[std::size_t(gathered[k])], in_size[k], rows ? r0 : lo,
                 rows ? rn : n, slot(g.slots + gathered[k]));
        }
      }
      // A value's elements in the block and its step (0: one broadcast value).
      auto value = [&](int32_t v) -> std::pair<const void*, int64_t> {
        if (v < 0) {
          const std::size_t k = FusedGroup::input_index(v);
          if (g.read[k] == FusedGroup::Read::single) return {in_base[k], 0};
          if (g.read[k] == FusedGroup::Read::gathered) return {slot(g.slots + gathered[k]), 1};
          return {in_base[k] + (g.input_rows[k] ? r0 : lo) * int64_t(in_size[k]), 1};
        }
        const FusedGroup::Op& p = g.ops[std::size_t(v)];
        if (p.output >= 0) {
          const int64_t first = p.rows ? r0 : lo;
          return {out_base[std::size_t(p.output)] + first * int64_t(dtype_size(p.out_dtype)), 1};
        }
        return {slot(p.slot), 1};
      };
      for (std::size_t k = 0; k < g.ops.size(); ++k) {
        const FusedGroup::Op& op = g.ops[k];
        void* out = const_cast<void*>(value(int32_t(k)).first);
        if (op.ew.kind == Kind::pad) {
          const std::size_t x = FusedGroup::input_index(op.arg[0]);
          gather_padded(in_data[x], g.pads[std::size_t(op.pad)], in_size[x], lo, n,
                        static_cast<char*>(out));
          continue;
        }
        if (op.ew.kind == Kind::reduce) {
          const void* x = value(op.arg[0]).first;  // dense, of the full shape
          if (cut.per_row > 0) {
            pieces[piece_of[k] + b] = detail::sum_piece(op.dtype, x, n);
          } else {
            detail::reduce_rows_block(ReduceOp(op.ew.op), op.dtype, x, g.row, rn, out);
          }
          continue;
        }
        const int64_t count = op.rows ? rn : n;
        // Operand j: a full op reads a row value spread along its rows.
        int used = 0;
        auto operand = [&](int j) -> std::pair<const void*, int64_t> {
          const int32_t a = op.arg[std::size_t(j)];
          const auto v = value(a);
          if (op.rows || a < 0 || !g.ops[std::size_t(a)].rows) return v;
          char* dst = spread_at + used++ * block * 8;
          spread(v.first, dtype_size(g.ops[std::size_t(a)].out_dtype), rn, g.row, dst);
          return {dst, 1};
        };
        if (op.ew.kind == Kind::binary && !op.rows && cut.per_row == 0 && g.row >= kRowCall) {
          // One operand a row value, the other full (or one value): the op row by row with the
          // row's value as a broadcast operand, where spreading it along its rows first was a
          // pass of its own.
          auto row_value = [&](int j) {
            const int32_t a = op.arg[std::size_t(j)];
            return a >= 0 && g.ops[std::size_t(a)].rows;
          };
          if (row_value(0) != row_value(1)) {
            const int row_arg = row_value(0) ? 0 : 1;
            const auto [rv, rs] = value(op.arg[std::size_t(row_arg)]);
            const auto [fv, fs] = value(op.arg[std::size_t(1 - row_arg)]);
            const auto size = int64_t(dtype_size(op.dtype));
            const auto out_size = int64_t(dtype_size(op.out_dtype));
            for (int64_t r = 0; r < rn; ++r) {
              const void* full = static_cast<const char*>(fv) + r * g.row * fs * size;
              const void* one = static_cast<const char*>(rv) + r * size;
              void* o = static_cast<char*>(out) + r * g.row * out_size;
              if (row_arg == 0) {
                detail::binary_block(BinaryOp(op.ew.op), op.dtype, one, 0, full, fs, o, g.row);
              } else {
                detail::binary_block(BinaryOp(op.ew.op), op.dtype, full, fs, one, 0, o, g.row);
              }
            }
            continue;
          }
        }
        const auto [x, sx] = operand(0);
        if (op.ew.kind == Kind::unary) {
          detail::unary_block(UnaryOp(op.ew.op), op.dtype, x, sx, out, count);
          continue;
        }
        if (op.ew.kind == Kind::cast) {
          detail::cast_block(op.dtype, op.out_dtype, x, sx, out, count);
          continue;
        }
        const auto [y, sy] = operand(1);
        if (op.ew.kind == Kind::binary) {
          detail::binary_block(BinaryOp(op.ew.op), op.dtype, x, sx, y, sy, out, count);
          continue;
        }
        const auto [z, sz] = operand(2);
        detail::where_block(op.dtype, x, sx, y, sy, z, sz, out, count);  // where(cond, a, b)
      }
    }
  });
  if (cut.per_row == 0) return;
  for (std::size_t k = 0; k < g.ops.size(); ++k) {
    if (piece_of[k] < 0) continue;
    const FusedGroup::Op& op = g.ops[k];
    for (int64_t r = 0; r < rows_total; ++r) {
      detail::store_row_sum(op.dtype, pieces + piece_of[k] + r * cut.per_row, cut.per_row,
                            out_base[std::size_t(op.output)], r);
    }
  }
}

}  // namespace strata::tracing
