// SPDX-License-Identifier: MIT
#pragma once
/// Sums, maxima and minima of contiguous rows as the eager reduction computes them
/// (raw/cpu/reduce.cpp): shared with the fused chains that end in a reduction
/// (raw/cpu/blocks.hpp), which must give the same bits.
#include <cstdint>

#include "raw/cpu/vmath.hpp"
#include "raw/scalar_ops.hpp"

namespace strata::detail {

/// Reduced elements per partial result: a longer row is reduced in chunks of this many
/// (a multiple of vmath::kSumBlock), whose results are combined in order.
inline constexpr int64_t kReduceChunk = int64_t{1} << 15;

/// The maximum (Less = false) or minimum of the row x[0, n), n >= 1: vmath::extreme, or the
/// scalar reducer where that declines (a NaN, a zero extreme: the rows whose bits depend on
/// which element comes first).
template <bool Less, class T>
T row_extreme(const T* x, int64_t n) {
  using R = scalar::ExtremeReducer<T, Less>;
  T out;
  if (vmath::extreme(x, n, Less, &out)) return out;
  typename R::Acc acc = R::init();
  for (int64_t r = 0; r < n; ++r) R::step(acc, x[r], r);
  return R::finish(acc);
}

/// The sum of a row from the sums of its pieces: piece[c] = vmath::sum of its elements
/// [c * kSumBlock, (c + 1) * kSumBlock), `pieces` of them. Eager sums each chunk of
/// kReduceChunk elements with vmath::sum (its pieces' sums added in order to a total from 0)
/// and adds the chunks' sums in order to a total from 0; this adds the same numbers in the
/// same order. (vmath::sum of one piece is 0 + its lanes' sum, which differs from that sum
/// only for -0, and a total from 0 is never -0, so adding either gives the same bits.)
inline double sum_of_pieces(const double* piece, int64_t pieces) {
  constexpr int64_t kPerChunk = kReduceChunk / vmath::kSumBlock;
  double total = 0;
  for (int64_t c0 = 0; c0 < pieces; c0 += kPerChunk) {
    double chunk = 0;
    for (int64_t c = c0; c < pieces && c < c0 + kPerChunk; ++c) chunk += piece[c];
    total += chunk;
  }
  return total;
}

}  // namespace strata::detail
