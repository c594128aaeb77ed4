// SPDX-License-Identifier: MIT
#pragma once
/// Loop helpers shared by the CPU kernels: typed base pointers, the parallel
/// strided walk, and value conversions with defined results for every input.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/allocator.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/strided.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// Elements per parallel piece: below this, threads cost more than they save.
inline constexpr int64_t kGrain = int64_t{1} << 15;

/// The storage's first element (the layout's offset is applied by plans).
template <class T>
T* base_ptr(const RawTensor& t) {
  return static_cast<T*>(t.storage()->data());
}

/// Tile edge (elements) of the cache-blocked walk: a 64 x 64 tile of every
/// operand stays in L1/L2 while it is read across its fast dimension.
inline constexpr int64_t kTile = 64;

/// If some operand walks its innermost plan dim with a wide stride while
/// another dim is narrower for it (a transposed view into a row-major result),
/// moves that dim next to the innermost one and returns true: the pair is then
/// walked in kTile x kTile tiles. Otherwise leaves the plan alone.
template <std::size_t N>
bool prepare_tiles(StridedPlan<N>& p) {
  const std::size_t r = p.shape.size();
  if (r < 2 || p.shape[r - 1] < kTile / 4) return false;
  auto mag = [](int64_t s) { return s < 0 ? -s : s; };
  for (std::size_t k = 0; k < N; ++k) {
    const int64_t inner = mag(p.strides[k][r - 1]);
    if (inner <= 1) continue;
    std::size_t best = r;
    for (std::size_t d = 0; d + 1 < r; ++d) {
      const int64_t sd = mag(p.strides[k][d]);
      if (p.shape[d] >= kTile / 4 && sd != 0 && sd < inner &&
          (best == r || sd < mag(p.strides[k][best]))) {
        best = d;
      }
    }
    if (best == r) continue;
    // Rotate dim `best` to position r - 2; the walk order does not matter to
    // elementwise kernels, which write each output element once.
    auto rotate = [&](auto& v) {
      auto x = v[best];
      for (std::size_t d = best; d + 2 < r; ++d) v[d] = v[d + 1];
      v[r - 2] = x;
    };
    rotate(p.shape);
    for (std::size_t j = 0; j < N; ++j) rotate(p.strides[j]);
    return true;
  }
  return false;
}

/// Runs fn(base, b0, b1, a0, n) for every rows x cols tile of a plan prepared
/// by prepare_tiles, in parallel: base holds the operands' offsets at the
/// tile's outer index, [b0, b1) are its rows (dim r - 2) and [a0, a0 + n) its
/// columns (dim r - 1, the walk's fast one).
template <std::size_t N, class Fn>
void for_each_tile(const StridedPlan<N>& p, int64_t rows, int64_t cols, Fn&& fn) {
  const std::size_t r = p.shape.size();
  const int64_t nb = p.shape[r - 2], na = p.shape[r - 1];
  const int64_t tb = (nb + rows - 1) / rows, ta = (na + cols - 1) / cols;
  const int64_t outer = p.numel / (nb * na);
  // Threads only from kGrain elements on, as in every other walk.
  const int64_t grain = std::max<int64_t>(1, kGrain / (std::min(nb, rows) * std::min(na, cols)));
  parallel_for(0, outer * tb * ta, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      int64_t o = t / (tb * ta);
      const int64_t ib = (t / ta) % tb, ia = t % ta;
      std::array<int64_t, N> base = p.offsets;
      for (std::size_t d = r - 2; d-- > 0;) {
        const int64_t i = o % p.shape[d];
        o /= p.shape[d];
        for (std::size_t k = 0; k < N; ++k) base[k] += i * p.strides[k][d];
      }
      const int64_t b0 = ib * rows, a0 = ia * cols;
      fn(base, b0, std::min(nb, b0 + rows), a0, std::min(na, a0 + cols) - a0);
    }
  });
}

/// Walks a plan prepared by prepare_tiles in parallel tiles over its two inner
/// dims; fn gets one block per tile row, like for_each_block.
template <std::size_t N, class Fn>
void walk_tiles(const StridedPlan<N>& p, Fn&& fn) {
  const std::size_t r = p.shape.size();
  std::array<int64_t, N> inner;
  for (std::size_t k = 0; k < N; ++k) inner[k] = p.strides[k][r - 1];
  for_each_tile(
      p, kTile, kTile,
      [&](const std::array<int64_t, N>& base, int64_t b0, int64_t b1, int64_t a0, int64_t n) {
        for (int64_t b = b0; b < b1; ++b) {
          std::array<int64_t, N> off;
          for (std::size_t k = 0; k < N; ++k) {
            off[k] = base[k] + b * p.strides[k][r - 2] + a0 * inner[k];
          }
          fn(off, n, inner);
        }
      });
}

/// True when `shape` has exactly one element (any rank, 0-d included); off then
/// holds each operand's offset of it. The walks call their block function on it
/// directly: no plan, no pool. Chains of one-element ops (ad_overhead_chain_3000ops)
/// spent about a tenth of each op planning a one-element walk.
template <std::size_t N>
bool one_element(const Shape& shape, const std::array<const Layout*, N>& layouts,
                 std::array<int64_t, N>& off) {
  for (int64_t d : shape) {
    if (d != 1) return false;
  }
  for (std::size_t k = 0; k < N; ++k) off[k] = layouts[k]->offset;
  return true;
}

/// Walks all operands (same shape) in parallel blocks: fn(offsets, n, strides).
/// Operands read across their fast dimension are walked in cache tiles.
template <std::size_t N, class Fn>
void parallel_walk(const Shape& shape, const std::array<const Layout*, N>& layouts, Fn&& fn) {
  if (std::array<int64_t, N> off; one_element(shape, layouts, off)) {
    std::array<int64_t, N> unit;
    unit.fill(1);
    return fn(off, int64_t{1}, unit);
  }
  StridedPlan<N> plan = make_plan<N>(shape, layouts);
  if (plan.numel == 0) return;
  if (plan.numel > kTile * kTile && prepare_tiles(plan)) return walk_tiles(plan, fn);
  parallel_for(0, plan.numel, kGrain,
               [&](int64_t lo, int64_t hi) { for_each_block(plan, lo, hi, fn); });
}

/// Tile of the staged walk: `rows` rows (the transposed operand's fast dim) x
/// `cols` columns (the result's fast dim). Far larger than kTile: every row of
/// a tile touches another page of the transposed operand. Which shape is
/// fastest depends on the CPU (exp and add of a transposed 4096 x 4096 f32
/// view, docs/PERFORMANCE.md): on the Intel Xeon (model 207) 64 x 1024 (long
/// result rows, 256-byte source runs) measured fastest of 16 x 4096 ...
/// 512 x 256; on AMD Zen 5, with AVX-512 and with AVX2, 512 x 128 (512-byte
/// source runs) measured fastest of 64 x 1024 ... 1024 x 64, where 64 x 1024
/// took 2.9-4.2x the contiguous time and 512 x 128 1.9-2.4x. The staging
/// buffer is 512 KiB of f64 either way. The shape only orders the work: every
/// element's result is the same.
struct StageTile {
  int64_t rows, cols;
};

/// Whether the CPU is an AMD one: the memory-bound kernels whose best shape
/// was measured to differ between the AMD and Intel machines ask this.
inline bool cpu_is_amd() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool amd = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") != 0;
  }();
  return amd;
#else
  return false;
#endif
}

/// The staged walk's tile for this CPU's vendor, chosen once (AMD: 512 x 128,
/// others: 64 x 1024). A reference, so that the tests can run both.
inline StageTile& stage_tile() {
  static StageTile tile = cpu_is_amd() ? StageTile{512, 128} : StageTile{64, 1024};
  return tile;
}

/// Whether a gather of whole table rows into a result of 8 MiB or more writes
/// it with streaming stores (gather_fwd_1e6x64_1e5 in docs/PERFORMANCE.md): on
/// AMD Zen 5 plain stores took 0.89 ms and streaming ones 1.32 ms (with either
/// instruction set forced); the streaming path landed measured on the Intel
/// Xeon (model 207). Chosen once by vendor; a reference, so that the tests can
/// run both. Only the stores change: the result is the same.
inline bool& gather_streams() {
  static bool stream = !cpu_is_amd();
  return stream;
}

/// Whether a gather of rows of whole 64-byte lines into a result of 8 MiB or
/// more writes them with full-line streaming stores (vmath's gather_lines: one
/// 64-byte store a line with AVX-512, two 32-byte with AVX2). On AMD Zen 5,
/// 10^5 rows of 256 bytes on two threads, one process, either instruction set:
/// the library 0.91-0.95 ms streamed against 1.21-1.28 with plain stores; in a
/// copy of the loop, the read-only pass over the same rows 0.76-1.08 and
/// 16-byte streaming stores 1.29-1.37 (so gather_streams() stays off there).
/// On every CPU; a reference, so that the tests can run all paths. Only the
/// stores change: the result is the same.
inline bool& gather_streams_lines() {
  static bool stream = true;
  return stream;
}

/// transpose_block for elements of type U (any type of U's size: only bits
/// move), in 16 x 16 blocks that keep both sides' lines in L1. Fixed-size
/// copies, so each element is one load and one store (a memcpy of a runtime
/// size was a library call per element: 9% of hessian_f64_n256).
template <class U>
void transpose_typed(const char* src, int64_t lds, char* dst, int64_t ldd, int64_t rows,
                     int64_t cols) {
  constexpr int64_t kB = 16;
  constexpr auto size = int64_t(sizeof(U));
  for (int64_t b0 = 0; b0 < rows; b0 += kB) {
    for (int64_t a0 = 0; a0 < cols; a0 += kB) {
      for (int64_t a = a0; a < std::min(cols, a0 + kB); ++a) {
        for (int64_t b = b0; b < std::min(rows, b0 + kB); ++b) {
          U v;
          std::memcpy(&v, src + (a * lds + b) * size, sizeof(U));
          std::memcpy(dst + (b * ldd + a) * size, &v, sizeof(U));
        }
      }
    }
  }
}

/// dst[b * ldd + a] = src[a * lds + b] for b < rows, a < cols, elements of
/// `size` bytes (1, 2, 4 or 8; 4- and 8-byte elements through the vectorised
/// vmath kernels).
inline void transpose_block(const char* src, int64_t lds, char* dst, int64_t ldd, int64_t rows,
                            int64_t cols, int size) {
  switch (size) {
    case 1:
      return transpose_typed<uint8_t>(src, lds, dst, ldd, rows, cols);
    case 2:
      return transpose_typed<uint16_t>(src, lds, dst, ldd, rows, cols);
    case 4:
      if (const vmath::Kernels* k = vmath::best()) {
        return k->transpose32(src, lds, dst, ldd, rows, cols);
      }
      return transpose_typed<uint32_t>(src, lds, dst, ldd, rows, cols);
    default:
      if (const vmath::Kernels* k = vmath::best()) {
        return k->transpose64(src, lds, dst, ldd, rows, cols);
      }
      return transpose_typed<uint64_t>(src, lds, dst, ldd, rows, cols);
  }
}

/// This thread's staging buffer of at least `bytes` bytes, kept between calls
/// (a fresh 256 KiB allocation per walk came from mmap, and its page faults
/// made the transposed copy of a 256 x 256 f64 matrix take 69 us instead of
/// 15, hessian_f64_n256), on a 2 MiB huge page at least (host_allocate): on
/// scattered 4 KiB pages the buffer crowded some L2 sets, whichever pages a
/// process got. exp of a transposed 4096 x 4096 f32 view on Zen 5 took 4.8 or
/// 6.6-7.2 ms from one process to the next with a 4 KiB-page buffer, 4.8 in
/// every process with a huge page.
inline char* stage_buffer(std::size_t bytes) {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<char, Free> buf;
  thread_local std::size_t capacity = 0;
  if (capacity < bytes) {
    const std::size_t want = std::max(bytes, std::size_t{2} << 20);
    buf.reset();
    capacity = 0;
    buf.reset(static_cast<char*>(host_allocate(want)));
    if (!buf) fail<ValueError>("allocate", "out of memory on cpu allocating ", want, " bytes");
    capacity = want;
  }
  return buf.get();
}

/// Prefetches the lines of [q, q + bytes) (RW: 1 for writing, 0 for reading),
/// in a loop unrolled 16 times: for rows whose length is known only at run
/// time. Rows under 16 lines run the loop's remainder, one prefetch per
/// iteration, which on Zen 5 did no more than no prefetch at all (exp of a
/// transposed 4096 x 4096 f32 view, the staged walk's 512-byte result rows:
/// 4.4 and 4.3 ms with AVX-512); where the count is a compile-time constant,
/// prefetch_fixed's straight-line prefetches did what was intended (3.6-3.8).
template <int RW, int Locality = 3>
inline void prefetch_lines(const char* q, int64_t bytes) {
#pragma GCC unroll 16
  for (int64_t c = 0; c < bytes; c += 64) __builtin_prefetch(q + c, RW, Locality);
}

/// Prefetches the kLines lines from q on (RW as prefetch_lines'; Locality as
/// __builtin_prefetch's: 3 into L1, 2 into L2), the count fixed at compile
/// time: for a loop whose count is known only at run time, instantiate the
/// loop per count (gather_rows in raw/cpu/index.cpp) or pick the function
/// once per run of rows (row_prefetcher).
template <int RW, int Locality, std::size_t... I>
inline void prefetch_each(const char* q, std::index_sequence<I...>) {
  (__builtin_prefetch(q + 64 * int64_t(I), RW, Locality), ...);
}
template <int RW, int Locality, int kLines>
inline void prefetch_fixed(const char* q) {
  prefetch_each<RW, Locality>(q, std::make_index_sequence<std::size_t(kLines)>{});
}

/// The most lines a fixed-count prefetch covers (row_prefetcher).
inline constexpr int kMaxFixedLines = 16;

/// A function prefetching the `lines` lines from its argument on (RW and
/// Locality as prefetch_fixed's), with straight-line prefetches, for `lines`
/// of 1 to kMaxFixedLines; nullptr otherwise. A loop over rows of one length
/// picks it once and calls it per row.
template <int RW, int Locality, std::size_t... L>
constexpr std::array<void (*)(const char*), kMaxFixedLines + 1> prefetchers(
    std::index_sequence<L...>) {
  return {nullptr, &prefetch_fixed<RW, Locality, int(L) + 1>...};
}
template <int RW, int Locality = 3>
inline void (*row_prefetcher(int64_t lines))(const char*) {
  static constexpr auto table =
      prefetchers<RW, Locality>(std::make_index_sequence<kMaxFixedLines>{});
  return lines >= 1 && lines <= kMaxFixedLines ? table[std::size_t(lines)] : nullptr;
}

/// Result bytes from which a walk over a transposed view writes its result
/// with streaming stores, each line whole: the maps and copies of
/// stream_transposed straight from registers, the staged walk's result rows
/// through a small buffer (parallel_walk_staged). Below it the result is
/// written with plain stores and left in the caches for its reader. A
/// reference, so that the tests can run both on small tensors.
inline int64_t& stream_transposed_bytes() {
  static int64_t bytes = int64_t{8} << 20;
  return bytes;
}

/// parallel_walk for kernels that run faster on unit strides: when, after
/// prepare_tiles, an input operand k >= 1 is unit-stride along the tile's
/// rows and wide-strided along its columns (a transposed view), each
/// stage_tile() of that operand is first transposed into a per-thread
/// buffer; fn(off, n, st, k, row, out) then gets the buffer's row (unit
/// stride, st[k] == 1) for operand k, off[k] meaningless. When out is not
/// null, fn writes the n results of that row to out (unit stride) instead of
/// the result: a result of stream_transposed_bytes() or more whose tile rows
/// are whole, aligned 64-byte lines is written from there, row by row, with
/// streaming stores (vmath's stream_lines). Otherwise fn gets k == -1 and row == out ==
/// nullptr, as parallel_walk would call it. bases: the operands' storage,
/// sizes: their element sizes in bytes.
template <std::size_t N, class Fn>
void parallel_walk_staged(const Shape& shape, const std::array<const Layout*, N>& layouts,
                          const std::array<const void*, N>& bases, const std::array<int, N>& sizes,
                          Fn&& fn) {
  if (std::array<int64_t, N> off; one_element(shape, layouts, off)) {
    std::array<int64_t, N> unit;
    unit.fill(1);
    return fn(off, int64_t{1}, unit, -1, nullptr, nullptr);
  }
  StridedPlan<N> p = make_plan<N>(shape, layouts);
  if (p.numel == 0) return;
  auto plain = [&](const auto& off, int64_t n, const auto& st) {
    fn(off, n, st, -1, nullptr, nullptr);
  };
  if (p.numel <= kTile * kTile || !prepare_tiles(p)) {
    return parallel_for(0, p.numel, kGrain,
                        [&](int64_t lo, int64_t hi) { for_each_block(p, lo, hi, plain); });
  }
  const std::size_t r = p.shape.size();
  int k = -1;
  for (std::size_t j = 1; j < N && k < 0; ++j) {
    const int64_t sa = p.strides[j][r - 1];
    if (p.strides[j][r - 2] == 1 && (sa > 1 || sa < -1)) k = int(j);
  }
  if (k < 0) return walk_tiles(p, plain);
  const StageTile tile = stage_tile();
  const int size = sizes[std::size_t(k)];
  const char* src = static_cast<const char*>(bases[std::size_t(k)]);
  std::array<int64_t, N> inner;
  for (std::size_t j = 0; j < N; ++j) inner[j] = p.strides[j][r - 1];
  std::array<int64_t, N> unit = inner;
  unit[std::size_t(k)] = 1;
  // A large result is streamed row by row (each row computed into rows_out,
  // then stored by vmath's stream_lines): no read-for-ownership of its lines.
  // The add of a transposed and a contiguous 4096 x 4096 f32 matrix on AMD Zen
  // 4: 9.5 -> 7.1 ms with either instruction set; streaming the rows 16 at a
  // time instead of one by one was no faster.
  // The result's write prefetch is then left out (it would read in the very
  // lines the streaming stores skip reading), and the other operands' rows
  // are prefetched into L2 rather than L1: 7.6 -> 7.0 ms there.
  const vmath::Kernels* const vk = vmath::best();
  const int64_t ld0 = p.strides[0][r - 2] * sizes[0];
  const bool stream =
      vk && inner[0] == 1 && ld0 % 64 == 0 && p.numel * sizes[0] >= stream_transposed_bytes();
  // The result's rows, and those of every other operand read along the tile's
  // columns, are prefetched kAheadRows rows ahead: a tile row is a short run
  // (a few lines) that the hardware prefetcher does not follow. On Zen 5, exp
  // of a transposed 4096 x 4096 f32 view took 7.2 -> 6.1 ms and the add 7.0 ->
  // 5.2 (4 and 16 rows ahead measured close to 8); writing the result through
  // a buffer row with streaming stores instead measured slower than this. Rows
  // of up to kMaxFixedLines lines are prefetched by a fixed-count prefetcher
  // chosen per tile (row_prefetcher): the loop of prefetch_lines made the
  // same exp 6-8% slower (3.84-4.33 against 3.60-3.97 ms).
  constexpr int64_t kAheadRows = 8;
  for_each_tile(
      p, tile.rows, tile.cols,
      [&](const std::array<int64_t, N>& base, int64_t b0, int64_t b1, int64_t a0, int64_t n) {
        const int64_t staged = (b1 - b0) * n * size, row0 = n * sizes[0];
        char* const out0 = static_cast<char*>(const_cast<void*>(bases[0])) +
                           (base[0] + b0 * p.strides[0][r - 2] + a0) * sizes[0];
        const bool streamed =
            stream && row0 % 64 == 0 && (reinterpret_cast<uintptr_t>(out0) & 63) == 0;
        char* const buf =
            stage_buffer(std::size_t((staged + 63) / 64 * 64 + (streamed ? row0 : 0)));
        char* const rows_out = buf + (staged + 63) / 64 * 64;
        const int64_t sk = inner[std::size_t(k)];
        transpose_block(src + (base[std::size_t(k)] + b0 + a0 * sk) * size, sk, buf, n, b1 - b0, n,
                        size);
        std::array<void (*)(const char*), N> ahead{};
        for (std::size_t j = 0; j < N; ++j) {
          const int64_t lines = (n * sizes[j] + 63) / 64;
          ahead[j] = j == 0     ? row_prefetcher<1>(lines)
                     : streamed ? row_prefetcher<0, 2>(lines)
                                : row_prefetcher<0>(lines);
        }
        for (int64_t b = b0; b < b1; ++b) {
          std::array<int64_t, N> off;
          for (std::size_t j = 0; j < N; ++j)
            off[j] = base[j] + b * p.strides[j][r - 2] + a0 * inner[j];
          for (std::size_t j = streamed ? 1 : 0; j < N && b + kAheadRows < b1; ++j) {
            if (int(j) == k || inner[j] != 1) continue;
            const char* q = static_cast<const char*>(bases[j]) +
                            (off[j] + kAheadRows * p.strides[j][r - 2]) * sizes[j];
            if (ahead[j]) {
              ahead[j](q);
            } else if (j == 0) {
              prefetch_lines<1>(q, n * sizes[j]);  // the result: for writing
            } else if (streamed) {
              prefetch_lines<0, 2>(q, n * sizes[j]);
            } else {
              prefetch_lines<0>(q, n * sizes[j]);
            }
          }
          const void* const row = buf + (b - b0) * n * size;
          if (streamed) {
            fn(off, n, unit, k, row, static_cast<void*>(rows_out));
            vk->stream_lines(out0 + (b - b0) * ld0, rows_out, row0 / 64);
          } else {
            fn(off, n, unit, k, row, nullptr);
          }
        }
        if (streamed) vmath::store_fence();
      });
}

/// Whether out (unit stride along its rows) and x (unit stride down out's
/// columns, a positive stride along them: a transposed view) pair up for
/// copy_transposed or stream_transposed, over more than kTile x kTile
/// elements; p is then their plan, prepared by prepare_tiles, with x's row
/// stride in sk and out's in ldd.
inline bool transposed_pair(const Layout& out, const Layout& x, StridedPlan<2>& p, int64_t& sk,
                            int64_t& ldd) {
  p = make_plan<2>(out.shape, {&out, &x});
  if (p.numel <= kTile * kTile || !prepare_tiles(p)) return false;
  const std::size_t r = p.shape.size();
  sk = p.strides[1][r - 1], ldd = p.strides[0][r - 2];
  return p.strides[1][r - 2] == 1 && sk > 1 && p.strides[0][r - 1] == 1 && ldd > 0;
}

/// A copy between two layouts of one shape and element size whose source is
/// read across its fast dim (a transposed view into a row-major result): each
/// tile is transposed straight into the result (vmath's transpose kernels),
/// not through the staged walk's buffer and a second pass. The tile is 128
/// bytes of each source column by 1024 result columns, so each tile writes
/// 16 (f64) or 32 (f32) whole result rows: on Zen 5, with AVX-512 and with
/// AVX2, that measured fastest of 16/32/128 rows x 1024/256 columns, and
/// faster than the staged walk's tile. Transposed f64 copies, AVX-512 / AVX2:
/// 256 x 256 58 -> 10 / 14 us, 512 x 512 214 -> 68 / 95 us, 4096 x 4096 15.7
/// -> 10.6 / 14.0 ms; f32 256 x 256 28 -> 7 / 9 us, 4096 x 4096 unchanged
/// (6.0-7.4 ms). CpuBackend::copy tries stream_transposed first, so large
/// results of 4- and 8-byte elements no longer come here. Returns false,
/// having done nothing, for any other pair of layouts.
inline bool copy_transposed(char* out_base, const Layout& out, const char* src, const Layout& x,
                            int size) {
  StridedPlan<2> p;
  int64_t sk = 0, ldd = 0;
  if (!transposed_pair(out, x, p, sk, ldd)) return false;
  for_each_tile(
      p, std::max(1, 128 / size), 1024,
      [&](const std::array<int64_t, 2>& base, int64_t b0, int64_t b1, int64_t a0, int64_t n) {
        transpose_block(src + (base[1] + b0 + a0 * sk) * size, sk,
                        out_base + (base[0] + b0 * ldd + a0) * size, ldd, b1 - b0, n, size);
      });
  return true;
}

/// The result (row-major, 64-byte aligned rows) of a map or copy of a
/// transposed view x, at least stream_transposed_bytes(), written by `run`,
/// a vmath StreamTranspose kernel (of the op, or the copy's): bands of one
/// line's elements of the result's columns (of x's rows), each along up to
/// kRun elements of x's rows: 16 (f32) or 8 (f64) long runs at a time, which
/// the hardware prefetcher follows, where the staged walk's tiles read runs
/// of 2 KiB. On AMD Zen 4 (docs/PERFORMANCE.md), a transposed 4096 x 4096
/// f32 view: exp 5.6 -> 3.4 ms with AVX-512 and 7.0 -> 4.9 with AVX2 (the
/// contiguous exp 2.0 and 3.2 in the same rounds), the copy 9.0 -> 3.3 and
/// 6.1 -> 3.3: no staging buffer pass, and no read-for-ownership of the
/// result's lines. Returns false, having done nothing, for any other pair of
/// layouts or a smaller result.
inline bool stream_transposed(char* out_base, const Layout& out, const char* src, const Layout& x,
                              int size, vmath::StreamTranspose run) {
  if (size != 4 && size != 8) return false;
  StridedPlan<2> p;
  int64_t sk = 0, ldd = 0;
  if (!transposed_pair(out, x, p, sk, ldd) || p.numel * size < stream_transposed_bytes() ||
      ldd * size % 64 != 0) {
    return false;
  }
  // Every row of the result starts on a line: its outer strides are multiples
  // of ldd (contiguous) or checked here.
  const std::size_t r = p.shape.size();
  for (std::size_t d = 0; d + 2 < r; ++d) {
    if (p.strides[0][d] * size % 64 != 0) return false;
  }
  if ((reinterpret_cast<uintptr_t>(out_base + p.offsets[0] * size) & 63) != 0) return false;
  constexpr int64_t kRun = 4096;
  for_each_tile(
      p, kRun, 64 / size,
      [&](const std::array<int64_t, 2>& base, int64_t b0, int64_t b1, int64_t a0, int64_t n) {
        run(src + (base[1] + b0 + a0 * sk) * size, sk, out_base + (base[0] + b0 * ldd + a0) * size,
            ldd, b1 - b0, n);
      });
  return true;
}

/// out[i] = f(ins[i]...) over tensors of one shape, with unit-stride and
/// (for two inputs, and where's last two) broadcast-scalar fast paths the
/// compiler can vectorise.
/// TO and TI... are the element types.
template <class TO, class... TI, class F, class... Ins>
void map_into(TO* out_base, const Layout& out, F f,
              const std::pair<const TI*, const Layout*>&... ins) {
  constexpr std::size_t N = 1 + sizeof...(TI);
  const std::array<const Layout*, N> layouts{&out, ins.second...};
  const std::tuple<const TI*...> bases{ins.first...};
  // Operand sk (if any) comes from parallel_walk_staged's buffer, transposed.
  auto block = [&](const auto& off, int64_t n, const auto& st, int sk, const void* row,
                   void* out_row) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      TO* o = out_row ? static_cast<TO*>(out_row) : out_base + off[0];
      const std::tuple<const TI*...> p{int(K + 1) == sk ? static_cast<const TI*>(row)
                                                        : std::get<K>(bases) + off[K + 1]...};
      bool unit = st[0] == 1;
      ((unit = unit && st[K + 1] == 1), ...);
      if (unit) {
        for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<K>(p)[i]...);
        return;
      }
      if constexpr (sizeof...(TI) == 2) {
        const auto* a = std::get<0>(p);
        const auto* b = std::get<1>(p);
        if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
          const auto bv = *b;
          for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
          return;
        }
        if (st[0] == 1 && st[1] == 0 && st[2] == 1) {
          const auto av = *a;
          for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
          return;
        }
      }
      if constexpr (sizeof...(TI) == 3) {
        // where(c, x, 0) and where(c, 0, x): relu and its derivative.
        const auto* c = std::get<0>(p);
        const auto* a = std::get<1>(p);
        const auto* b = std::get<2>(p);
        if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 0) {
          const auto bv = *b;
          for (int64_t i = 0; i < n; ++i) o[i] = f(c[i], a[i], bv);
          return;
        }
        if (st[0] == 1 && st[1] == 1 && st[2] == 0 && st[3] == 1) {
          const auto av = *a;
          for (int64_t i = 0; i < n; ++i) o[i] = f(c[i], av, b[i]);
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i) o[i * st[0]] = f(std::get<K>(p)[i * st[K + 1]]...);
    }
    (std::index_sequence_for<TI...>{});
  };
  parallel_walk_staged<N>(out.shape, layouts, {out_base, ins.first...},
                          {int(sizeof(TO)), int(sizeof(TI))...}, block);
}

template <class, class U>
using same_as_t = U;

/// map_into over RawTensors: out holds TO, the inputs hold TI... in order.
template <class TO, class... TI, class F>
void map(const RawTensor& out, F f, const same_as_t<TI, RawTensor>&... ins) {
  map_into<TO, TI...>(base_ptr<TO>(out), out.layout(), f,
                      std::pair<const TI*, const Layout*>{base_ptr<TI>(ins), &ins.layout()}...);
}

}  // namespace strata::detail
