// SPDX-License-Identifier: MIT
#pragma once
/// Iteration plans: walking N same-shaped strided operands together.
///
/// A plan drops size-1 dims and merges adjacent dims that are contiguous with
/// each other in every operand, so a permuted rank-12 tensor whose inner dims
/// still line up walks as a few long rows. The walk hands out blocks: a start
/// offset per operand, a length, and one inner stride per operand. The outer
/// dims advance like an odometer, one add per step (no multiply per element).
#include <array>
#include <cstdint>

#include "core/layout.hpp"

namespace strata::detail {

template <std::size_t N>
struct StridedPlan {
  Shape shape;                     ///< merged dims, outermost first; never empty
  std::array<Strides, N> strides;  ///< per operand, one stride per merged dim
  std::array<int64_t, N> offsets;  ///< per operand, the offset of element 0
  int64_t numel = 0;
};

/// Builds the plan for operands that all have the shape `shape` (checked by the caller).
template <std::size_t N>
StridedPlan<N> make_plan(const Shape& shape, const std::array<const Layout*, N>& ops) {
  StridedPlan<N> p;
  p.numel = 1;
  for (int64_t d : shape) p.numel *= d;
  for (std::size_t k = 0; k < N; ++k) p.offsets[k] = ops[k]->offset;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = !p.shape.empty();
    for (std::size_t k = 0; k < N && merge; ++k) {
      merge = p.strides[k].back() == ops[k]->strides[i] * shape[i];
    }
    if (merge) {
      p.shape.back() *= shape[i];
      for (std::size_t k = 0; k < N; ++k) p.strides[k].back() = ops[k]->strides[i];
    } else {
      p.shape.push_back(shape[i]);
      for (std::size_t k = 0; k < N; ++k) p.strides[k].push_back(ops[k]->strides[i]);
    }
  }
  if (p.shape.empty()) {
    p.shape.push_back(1);
    for (std::size_t k = 0; k < N; ++k) p.strides[k].push_back(0);
  }
  return p;
}

/// Calls fn(offsets, n, inner_strides) for the blocks covering the plan's
/// row-major element range [lo, hi). Blocks are pieces of the innermost dim.
template <std::size_t N, class Fn>
void for_each_block(const StridedPlan<N>& p, int64_t lo, int64_t hi, Fn&& fn) {
  if (lo >= hi) return;
  const std::size_t last = p.shape.size() - 1;
  const int64_t len = p.shape[last];
  std::array<int64_t, N> inner;
  for (std::size_t k = 0; k < N; ++k) inner[k] = p.strides[k][last];

  // Position the odometer at element lo.
  Shape idx(last, 0);
  int64_t row = lo / len, col = lo % len;
  std::array<int64_t, N> row_off = p.offsets;
  for (std::size_t d = last; d-- > 0;) {
    idx[d] = row % p.shape[d];
    row /= p.shape[d];
    for (std::size_t k = 0; k < N; ++k) row_off[k] += idx[d] * p.strides[k][d];
  }
  for (int64_t pos = lo; pos < hi;) {
    const int64_t n = std::min(len - col, hi - pos);
    std::array<int64_t, N> off;
    for (std::size_t k = 0; k < N; ++k) off[k] = row_off[k] + col * inner[k];
    fn(off, n, inner);
    pos += n;
    col = 0;
    for (std::size_t d = last; d-- > 0;) {
      for (std::size_t k = 0; k < N; ++k) row_off[k] += p.strides[k][d];
      if (++idx[d] < p.shape[d]) break;
      for (std::size_t k = 0; k < N; ++k) row_off[k] -= p.strides[k][d] * p.shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace strata::detail
