// SPDX-License-Identifier: MIT
#pragma once
/// One thread pool for the whole library. parallel_for splits a range into
/// contiguous chunks, up to kPiecesPerThread per thread, which the threads
/// take as they come free. The promise: results are the same bits
/// for any thread count. A kernel keeps it by making each index's result
/// independent of where the range is cut; one whose arithmetic depends on the
/// cut (partial sums, GEMM blocks) first cuts its work into fixed blocks
/// chosen from the problem's shape only, and hands parallel_for the block
/// indices (tests/raw/determinism checks every kernel family).
#include <algorithm>
#include <cstdint>
#include <functional>

namespace strata {

/// Threads kernels use (default: STRATA_NUM_THREADS, else the hardware's count).
int num_threads();
/// Sets the thread count for later kernels (n >= 1).
void set_num_threads(int n);

namespace detail {
/// Pieces a parallel range is cut into per thread (at most; never below one
/// grain each). The pool's threads take pieces as they come free (run()), so
/// a thread whose core is slowed by a neighbour does fewer of them: with one
/// piece per thread, every op waited for the slowed thread's half (eight
/// measured best with a neighbour on the second core and cost nothing on a
/// quiet one: docs/perf-history/2026-12-04-zen4.md). Which thread runs a piece never changes
/// the results.
inline constexpr int kPiecesPerThread = 8;

/// parallel_for for a range of more than `grain` elements (grain >= 1).
void parallel_for_pieces(int64_t begin, int64_t end, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn);

/// Runs fn(lo, hi) over pieces covering [begin, end), in parallel when the
/// range is larger than `grain` elements. Calls from inside a worker run inline.
/// Rethrows the first exception a piece threw. A range of at most one grain
/// runs here, inline, and fn is never wrapped in a std::function: for the
/// one-element ops of a long AD chain that wrapping (an allocation for most
/// lambdas) was a cost per op.
template <class Fn>
void parallel_for(int64_t begin, int64_t end, int64_t grain, Fn&& fn) {
  if (end - begin <= 0) return;
  if (end - begin <= std::max<int64_t>(grain, 1)) {
    fn(begin, end);
    return;
  }
  parallel_for_pieces(begin, end, grain, std::function<void(int64_t, int64_t)>(std::ref(fn)));
}
}  // namespace detail

}  // namespace strata
