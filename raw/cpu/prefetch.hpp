// SPDX-License-Identifier: MIT
#pragma once
/// Software prefetches of whole 64-byte lines, for the runs that the hardware
/// prefetcher does not follow: the short rows of the staged walk's tiles and
/// the scattered rows of a gather. Where the line count is a compile-time
/// constant the prefetches are straight-line code; a loop over a count known
/// only at run time prefetched measurably less well (docs/perf-history/kernel-notes.md).
#include <array>
#include <cstdint>
#include <utility>

namespace strata::detail {

/// Prefetches the lines of [q, q + bytes) (RW: 1 for writing, 0 for reading),
/// in a loop unrolled 16 times: for rows whose length is known only at run
/// time and may pass kMaxFixedLines. Shorter rows run only the loop's
/// remainder, one prefetch per iteration, which did little or nothing: give
/// those row_prefetcher's straight-line prefetches.
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

}  // namespace strata::detail
