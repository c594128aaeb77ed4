// SPDX-License-Identifier: MIT
#pragma once
/// The staged walk: parallel_walk for kernels that run faster on unit strides.
/// An input operand read across the result's fast dimension (a transposed
/// view) is transposed tile by tile into a per-thread buffer, and the kernel
/// reads the buffer's rows; a large result is streamed out row by row.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/allocator.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/strided.hpp"
#include "raw/cpu/prefetch.hpp"
#include "raw/cpu/transpose.hpp"
#include "raw/cpu/tuning.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"

namespace strata::detail {

/// This thread's staging buffer of at least `bytes` bytes, kept between calls
/// (a fresh allocation per walk would come from mmap, and its page faults
/// would cost more than small transposes), on a 2 MiB huge page at least
/// (host_allocate): on scattered 4 KiB pages the buffer crowds some L2 sets,
/// whichever pages a process got, and the walk's speed varies by process.
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

/// One block of a staged walk: n elements of each of the N operands (operand
/// 0 the result), operand j's first at element off[j] of its storage, the
/// next ones st[j] elements apart. Read the inputs through input() and write
/// the results through result(), which know where the staged walk moved them.
template <std::size_t N>
struct StagedBlock {
  std::array<int64_t, N> off;
  int64_t n;
  std::array<int64_t, N> st;
  /// The input operand (>= 1) read from `row` rather than from its storage
  /// (off[staged] is then meaningless, st[staged] is 1), or -1 for none.
  int staged = -1;
  /// The staged operand's n elements: a row of the staging buffer.
  const void* row = nullptr;
  /// Where the n results go, with unit stride, instead of the result's
  /// storage (which the walk then streams them into), or nullptr.
  void* out = nullptr;

  /// Operand k's (k >= 1) first element, of the storage at `base`, or of the
  /// staging buffer.
  template <class T>
  const T* input(std::size_t k, const T* base) const {
    return int(k) == staged ? static_cast<const T*>(row) : base + off[k];
  }
  /// Where the first result goes (the next ones st[0] apart), of the result's
  /// storage at `base` or of the streamed row.
  template <class T>
  T* result(T* base) const {
    return out ? static_cast<T*>(out) : base + off[0];
  }
};

/// Which input operand of a plan prepared by prepare_tiles the staged walk
/// stages: the first one that is unit-stride along the tile's rows and
/// wide-strided along its columns (a transposed view), or -1.
template <std::size_t N>
int staged_operand(const StridedPlan<N>& p) {
  const std::size_t r = p.shape.size();
  for (std::size_t j = 1; j < N; ++j) {
    const int64_t sa = p.strides[j][r - 1];
    if (p.strides[j][r - 2] == 1 && (sa > 1 || sa < -1)) return int(j);
  }
  return -1;
}

/// The software prefetches of a staged tile's rows, kAheadRows rows ahead:
/// a tile row is a short run (a few lines) that the hardware prefetcher does
/// not follow. The result's rows are prefetched for writing, the other
/// unstaged operands' for reading, into L2 rather than L1 when the result is
/// streamed; a streamed result is not prefetched at all (that would read in
/// the very lines the streaming stores skip reading). Rows of up to
/// kMaxFixedLines lines take a fixed-count prefetcher chosen once per tile.
template <std::size_t N>
struct RowPrefetch {
  static constexpr int64_t kAheadRows = 8;
  std::array<void (*)(const char*), N> fixed{};
  bool streamed;

  RowPrefetch(int64_t n, const std::array<int, N>& sizes, bool streamed_) : streamed(streamed_) {
    for (std::size_t j = 0; j < N; ++j) {
      const int64_t lines = (n * sizes[j] + 63) / 64;
      fixed[j] = j == 0     ? row_prefetcher<1>(lines)
                 : streamed ? row_prefetcher<0, 2>(lines)
                            : row_prefetcher<0>(lines);
    }
  }
  /// Prefetches operand j's row of `bytes` bytes at q.
  void operator()(std::size_t j, const char* q, int64_t bytes) const {
    if (fixed[j]) {
      fixed[j](q);
    } else if (j == 0) {
      prefetch_lines<1>(q, bytes);  // the result: for writing
    } else if (streamed) {
      prefetch_lines<0, 2>(q, bytes);
    } else {
      prefetch_lines<0>(q, bytes);
    }
  }
};

/// parallel_walk for kernels that run faster on unit strides: fn(StagedBlock)
/// per block. When, after prepare_tiles, an input operand k is unit-stride
/// along the tile's rows and wide-strided along its columns (a transposed
/// view), each cpu_tuning().stage_tile of that operand is first transposed
/// into the per-thread staging buffer, and the blocks read its rows. A result
/// of cpu_tuning().stream_transposed_bytes or more whose tile rows are whole,
/// aligned 64-byte lines is computed row by row into a buffer row and
/// streamed from there (vmath's stream_lines). Otherwise the blocks are
/// parallel_walk's. bases: the operands' storage, sizes: their element sizes
/// in bytes.
template <std::size_t N, class Fn>
void parallel_walk_staged(const Shape& shape, const std::array<const Layout*, N>& layouts,
                          const std::array<const void*, N>& bases, const std::array<int, N>& sizes,
                          Fn&& fn) {
  std::array<int64_t, N> off, st;
  if (int64_t n; one_block(shape, layouts, off, st, n)) return fn(StagedBlock<N>{off, n, st});
  StridedPlan<N> p = make_plan<N>(shape, layouts);
  if (p.numel == 0) return;
  auto plain = [&](const std::array<int64_t, N>& off, int64_t n, const std::array<int64_t, N>& st) {
    fn(StagedBlock<N>{off, n, st});
  };
  if (p.numel <= kTile * kTile || !prepare_tiles(p)) {
    return parallel_for(0, p.numel, kGrain,
                        [&](int64_t lo, int64_t hi) { for_each_block(p, lo, hi, plain); });
  }
  const int k = staged_operand(p);
  if (k < 0) return walk_tiles(p, plain);
  const std::size_t r = p.shape.size(), ks = std::size_t(k);
  const CpuTuning& tuning = cpu_tuning();
  const StageTile tile = tuning.stage_tile;
  const int size = sizes[ks];
  const char* src = static_cast<const char*>(bases[ks]);
  std::array<int64_t, N> inner;
  for (std::size_t j = 0; j < N; ++j) inner[j] = p.strides[j][r - 1];
  std::array<int64_t, N> unit = inner;
  unit[ks] = 1;
  const vmath::Kernels* const vk = vmath::best();
  const int64_t ld0 = p.strides[0][r - 2] * sizes[0];
  const bool stream =
      vk && inner[0] == 1 && ld0 % 64 == 0 && p.numel * sizes[0] >= tuning.stream_transposed_bytes;
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
        const int64_t sk = inner[ks];
        transpose_block(src + (base[ks] + b0 + a0 * sk) * size, sk, buf, n, b1 - b0, n, size);
        const RowPrefetch<N> prefetch(n, sizes, streamed);
        constexpr int64_t kAhead = RowPrefetch<N>::kAheadRows;
        for (int64_t b = b0; b < b1; ++b) {
          std::array<int64_t, N> off;
          for (std::size_t j = 0; j < N; ++j)
            off[j] = base[j] + b * p.strides[j][r - 2] + a0 * inner[j];
          for (std::size_t j = streamed ? 1 : 0; j < N && b + kAhead < b1; ++j) {
            if (j == ks || inner[j] != 1) continue;
            prefetch(j,
                     static_cast<const char*>(bases[j]) +
                         (off[j] + kAhead * p.strides[j][r - 2]) * sizes[j],
                     n * sizes[j]);
          }
          const void* const row = buf + (b - b0) * n * size;
          if (streamed) {
            fn(StagedBlock<N>{off, n, unit, k, row, rows_out});
            vk->stream_lines(out0 + (b - b0) * ld0, rows_out, row0 / 64);
          } else {
            fn(StagedBlock<N>{off, n, unit, k, row, nullptr});
          }
        }
        if (streamed) vmath::store_fence();
      });
}

}  // namespace strata::detail
