// SPDX-License-Identifier: MIT
#pragma once
/// The parallel strided walk of the CPU kernels: typed base pointers, the walk
/// over a plan's blocks, and its cache-tiled form for operands read across
/// their fast dimension. The staged walk (raw/cpu/staged_walk.hpp) builds on
/// these plans and tiles.
#include <algorithm>
#include <array>
#include <cstdint>

#include "core/parallel.hpp"
#include "core/strided.hpp"
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

/// True when the walk is one block that needs no plan: at most kGrain elements (one
/// thread's share anyway) and every operand either one row-major run or one value
/// (all strides zero: a broadcast scalar). off and st then hold each operand's first
/// element and step (1 or 0) and n the element count; the walks call their block
/// function on it directly: no plan, no pool, which in chains of small ops cost a large
/// part of each op.
template <std::size_t N>
bool one_block(const Shape& shape, const std::array<const Layout*, N>& layouts,
               std::array<int64_t, N>& off, std::array<int64_t, N>& st, int64_t& n) {
  n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0 || n > kGrain) return false;
  for (std::size_t k = 0; k < N; ++k) {
    const Layout& l = *layouts[k];
    off[k] = l.offset;
    st[k] = 1;
    if (n == 1 || l.is_contiguous()) continue;
    for (int64_t s : l.strides) {
      if (s != 0) return false;
    }
    st[k] = 0;
  }
  return true;
}

/// Walks all operands (same shape) in parallel blocks: fn(offsets, n, strides).
/// Operands read across their fast dimension are walked in cache tiles.
template <std::size_t N, class Fn>
void parallel_walk(const Shape& shape, const std::array<const Layout*, N>& layouts, Fn&& fn) {
  std::array<int64_t, N> off, st;
  if (int64_t n; one_block(shape, layouts, off, st, n)) return fn(off, n, st);
  StridedPlan<N> plan = make_plan<N>(shape, layouts);
  if (plan.numel == 0) return;
  if (plan.numel > kTile * kTile && prepare_tiles(plan)) return walk_tiles(plan, fn);
  parallel_for(0, plan.numel, kGrain,
               [&](int64_t lo, int64_t hi) { for_each_block(plan, lo, hi, fn); });
}

}  // namespace strata::detail
