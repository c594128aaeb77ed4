// SPDX-License-Identifier: MIT
// CPU reductions: sum, max, min, argmax, argmin over a set of axes.
//
// The input is viewed as [O kept positions] x [R reduced positions] (kept
// axes first, reduced axes after, both in their original order). `out` is
// contiguous with O elements. Floats accumulate in double, except that the
// vectorised float sums (fast_sum below) first add short runs (32 rows, or 32
// lanes of a 4096-element block) in the element type: an f32 sum of 2^24 ones
// is still exact, but f32 sums of 4096 random values differ from the f64 sum
// by a few 1e-6 relative (3.4e-6 seen), where the CUDA reduction's differ by
// its last rounding. Integers accumulate in wrapping int64. Work is split into
// pieces whose boundaries depend on the sizes only, never on the thread
// count, and partial results combine in a fixed order: results are the same
// for any number of threads. The reducers (and their tie-break rule) are
// raw/scalar_ops.hpp's, the same the CUDA kernels run.
//
// Two traversals:
//   rows:    when the reduced axes are the fast ones in memory, each output
//            reduces its own R elements (long R is cut into fixed chunks);
//   columns: when the kept axes are faster, outputs are accumulated side by
//            side while walking the reduced positions (sum over axis 0).
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <vector>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/row_reduce.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"
#include "raw/scalar_ops.hpp"

namespace strata::detail {
namespace {

// Column sums (sum over the first axis): rows per chunk at least, chunks at
// most, partial sums (doubles, all chunks together) at most, and columns per
// piece.
constexpr int64_t kColumnChunkRows = 256, kMaxColumnChunks = 64;
constexpr int64_t kColumnPartials = int64_t{1} << 22;
constexpr int64_t kColumnRange = 4096;
// Rows of at most this many reduced positions (pooling windows, small axes) read their
// positions from a table of offsets made once, instead of walking a strided plan per output.
constexpr int64_t kShortRow = 64;

struct Split {
  Layout kept;     // O positions: x's kept axes (with x's offset)
  Layout reduced;  // R positions: x's reduced axes (offset 0)
  int64_t O, R;
};

Split split_axes(const RawTensor& x, const Shape& axes) {
  Split s;
  s.kept.offset = x.offset();
  std::size_t a = 0;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    Layout& part = a < axes.size() && axes[a] == d ? (++a, s.reduced) : s.kept;
    part.shape.push_back(x.shape()[d]);
    part.strides.push_back(x.strides()[d]);
  }
  s.O = s.kept.numel();
  s.R = s.reduced.numel();
  return s;
}

int64_t min_abs_stride(const Layout& l) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int64_t i = 0; i < l.ndim(); ++i) {
    if (l.shape[i] > 1) best = std::min(best, std::abs(l.strides[i]));
  }
  return best;
}

template <class R, class T>
void reduce_rows(const RawTensor& out, const RawTensor& x, const Split& s) {
  using Out = typename R::Out;
  using Acc = typename R::Acc;
  const T* xb = base_ptr<T>(x);
  Out* ob = base_ptr<Out>(out) + out.offset();
  const StridedPlan<1> inner = make_plan<1>(s.reduced.shape, {&s.reduced});
  const Layout dense = Layout::contiguous(s.kept.shape);
  const StridedPlan<2> outer = make_plan<2>(s.kept.shape, {&dense, &s.kept});

  // Reduces reduced positions [lo, hi) starting from x offset `start`.
  auto reduce_range = [&](int64_t start, int64_t lo, int64_t hi, Acc& acc) {
    StridedPlan<1> p = inner;
    p.offsets[0] = start;
    int64_t pos = lo;
    for_each_block(p, lo, hi, [&](const auto& off, int64_t n, const auto& st) {
      const T* v = xb + off[0];
      for (int64_t i = 0; i < n; ++i) R::step(acc, v[i * st[0]], pos + i);
      pos += n;
    });
  };

  const int64_t chunks = (s.R + kReduceChunk - 1) / kReduceChunk;
  if (chunks == 1) {
    // The same steps in the same order either way: the table changes how positions are found,
    // not which are reduced or when.
    std::vector<int64_t> table;
    if (s.R > 0 && s.R <= kShortRow) {
      table.reserve(std::size_t(s.R));
      StridedPlan<1> p = inner;
      p.offsets[0] = 0;
      for_each_block(p, 0, s.R, [&](const auto& off, int64_t n, const auto& st) {
        for (int64_t i = 0; i < n; ++i) table.push_back(off[0] + i * st[0]);
      });
    }
    // Parallel over outputs; each reduces its R elements alone.
    parallel_for(0, s.O, std::max<int64_t>(1, kGrain / s.R), [&](int64_t lo, int64_t hi) {
      for_each_block(outer, lo, hi, [&](const auto& off, int64_t n, const auto& st) {
        for (int64_t i = 0; i < n; ++i) {
          Acc acc = R::init();
          const int64_t start = off[1] + i * st[1];
          if (table.empty()) {
            reduce_range(start, 0, s.R, acc);
          } else {
            const T* v = xb + start;
            for (int64_t r = 0; r < s.R; ++r) R::step(acc, v[table[std::size_t(r)]], r);
          }
          ob[off[0] + i * st[0]] = R::finish(acc);
        }
      });
    });
    return;
  }
  // Few long rows: fixed chunks per output in parallel, combined in order.
  std::vector<Acc> partial(std::size_t(s.O * chunks), R::init());
  std::vector<int64_t> starts(std::size_t(s.O));
  for_each_block(outer, 0, s.O, [&](const auto& off, int64_t n, const auto& st) {
    for (int64_t i = 0; i < n; ++i) starts[std::size_t(off[0] + i * st[0])] = off[1] + i * st[1];
  });
  parallel_for(0, s.O * chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / chunks, c = t % chunks;
      reduce_range(starts[std::size_t(o)], c * kReduceChunk, std::min(s.R, (c + 1) * kReduceChunk),
                   partial[std::size_t(t)]);
    }
  });
  for (int64_t o = 0; o < s.O; ++o) {
    Acc acc = partial[std::size_t(o * chunks)];
    for (int64_t c = 1; c < chunks; ++c) R::combine(acc, partial[std::size_t(o * chunks + c)]);
    ob[o] = R::finish(acc);
  }
}

template <class R, class T>
void reduce_columns(const RawTensor& out, const RawTensor& x, const Split& s) {
  using Out = typename R::Out;
  using Acc = typename R::Acc;
  const T* xb = base_ptr<T>(x);
  Out* ob = base_ptr<Out>(out) + out.offset();
  const Layout dense = Layout::contiguous(s.kept.shape);
  const StridedPlan<2> outer = make_plan<2>(s.kept.shape, {&dense, &s.kept});
  const StridedPlan<1> inner = make_plan<1>(s.reduced.shape, {&s.reduced});
  std::vector<Acc> acc(std::size_t(s.O), R::init());
  // Each piece owns a range of outputs and walks every reduced position.
  parallel_for(0, s.O, std::max<int64_t>(64, kGrain / s.R), [&](int64_t lo, int64_t hi) {
    int64_t r = 0;
    for_each_block(inner, 0, s.R, [&](const auto& roff, int64_t rn, const auto& rst) {
      for (int64_t j = 0; j < rn; ++j, ++r) {
        const int64_t shift = roff[0] + j * rst[0];
        for_each_block(outer, lo, hi, [&](const auto& off, int64_t n, const auto& st) {
          const T* v = xb + off[1] + shift;
          Acc* a = acc.data() + off[0];
          for (int64_t i = 0; i < n; ++i) R::step(a[i * st[0]], v[i * st[1]], r);
        });
      }
    });
  });
  for (int64_t o = 0; o < s.O; ++o) ob[o] = R::finish(acc[std::size_t(o)]);
}

// The single unit-stride run a layout's positions form, if they form one.
bool unit_run(const Layout& l) {
  const StridedPlan<1> p = make_plan<1>(l.shape, {&l});
  return p.shape.size() == 1 && (p.strides[0][0] == 1 || p.shape[0] == 1);
}

// Where each output's reduced run starts in x (s.kept's positions, in output order).
std::vector<int64_t> run_starts(const Split& s) {
  const Layout dense = Layout::contiguous(s.kept.shape);
  const StridedPlan<2> outer = make_plan<2>(s.kept.shape, {&dense, &s.kept});
  std::vector<int64_t> starts(std::size_t(s.O));
  for_each_block(outer, 0, s.O, [&](const auto& off, int64_t n, const auto& st) {
    for (int64_t i = 0; i < n; ++i) starts[std::size_t(off[0] + i * st[0])] = off[1] + i * st[1];
  });
  return starts;
}

// Float sums with vectorised blocked kernels (vmath::sum, vmath::sum_columns):
//   reduced positions one contiguous run: each output sums its run, long runs
//     in fixed chunks combined in order (sum over the last axis, or all);
//   kept positions one contiguous run: column sums (sum over the first axis)
//     in pieces of fixed row chunks x column ranges, each chunk's partial
//     sums added in chunk order.
// Returns false (nothing written) for other layouts.
template <class T>
bool fast_sum(const RawTensor& out, const RawTensor& x, const Split& s) {
  const T* xb = base_ptr<T>(x);
  T* ob = base_ptr<T>(out) + out.offset();
  if (unit_run(s.reduced)) {
    const std::vector<int64_t> starts = run_starts(s);
    const int64_t chunks = (s.R + kReduceChunk - 1) / kReduceChunk;
    if (chunks == 1) {
      parallel_for(0, s.O, std::max<int64_t>(1, kGrain / std::max<int64_t>(s.R, 1)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t o = lo; o < hi; ++o) {
                       ob[o] = T(vmath::sum(xb + starts[std::size_t(o)], s.R));
                     }
                   });
      return true;
    }
    std::vector<double> partial(std::size_t(s.O * chunks));
    parallel_for(0, s.O * chunks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t o = t / chunks, c = t % chunks;
        const int64_t b = c * kReduceChunk, e = std::min(s.R, b + kReduceChunk);
        partial[std::size_t(t)] = vmath::sum(xb + starts[std::size_t(o)] + b, e - b);
      }
    });
    for (int64_t o = 0; o < s.O; ++o) {
      double acc = 0;
      for (int64_t c = 0; c < chunks; ++c) acc += partial[std::size_t(o * chunks + c)];
      ob[o] = T(acc);
    }
    return true;
  }
  if (s.O > 1 && unit_run(s.kept)) {
    // Pieces of fixed row chunks x column ranges, from the shape alone: each
    // piece adds its rows into its chunk's partial sums, and the chunks'
    // partials are added in chunk order. Row chunks make each piece read
    // whole rows one after another (one stream, as the row sums read) where
    // column ranges alone had every thread read a part of every row.
    const StridedPlan<1> inner = make_plan<1>(s.reduced.shape, {&s.reduced});
    const int64_t chunks = std::clamp<int64_t>(
        std::min(s.R / kColumnChunkRows, kColumnPartials / s.O), 1, kMaxColumnChunks);
    const int64_t chunk_rows = (s.R + chunks - 1) / chunks;
    const int64_t ranges = (s.O + kColumnRange - 1) / kColumnRange;
    std::vector<double> partial(std::size_t(chunks * s.O), 0.0);
    parallel_for(0, chunks * ranges, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t c = t / ranges, c0 = t % ranges * kColumnRange;
        const int64_t nc = std::min(kColumnRange, s.O - c0);
        double* acc = partial.data() + c * s.O + c0;
        for_each_block(inner, c * chunk_rows, std::min(s.R, (c + 1) * chunk_rows),
                       [&](const auto& off, int64_t n, const auto& st) {
                         vmath::sum_columns(xb + s.kept.offset + off[0] + c0, n, st[0], nc, acc);
                       });
      }
    });
    for (int64_t o = 0; o < s.O; ++o) {
      double acc = 0;
      for (int64_t c = 0; c < chunks; ++c) acc += partial[std::size_t(c * s.O + o)];
      ob[o] = T(acc);
    }
    return true;
  }
  return false;
}

// Float max and min of outputs whose reduced positions are one contiguous run of at most a
// chunk (the last axis: a softmax's or a nearest centroid's row): vmath::extreme per output,
// the rows it declines (a NaN, a zero extreme) by the scalar reducer. The same bits as
// reduce_rows. Returns false (nothing written) for other layouts.
template <bool Less, class T>
bool fast_extreme(const RawTensor& out, const RawTensor& x, const Split& s) {
  if (s.R > kReduceChunk || !unit_run(s.reduced)) return false;
  const T* xb = base_ptr<T>(x);
  T* ob = base_ptr<T>(out) + out.offset();
  const std::vector<int64_t> starts = run_starts(s);
  parallel_for(0, s.O, std::max<int64_t>(1, kGrain / s.R), [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) ob[o] = row_extreme<Less>(xb + starts[std::size_t(o)], s.R);
  });
  return true;
}

template <class R, class T>
void run(const RawTensor& out, const RawTensor& x, const Shape& axes) {
  const Split s = split_axes(x, axes);
  if constexpr (std::is_same_v<R, scalar::SumReducer<T>> && std::is_floating_point_v<T>) {
    if (s.R > 0 && fast_sum<T>(out, x, s)) return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<R, scalar::ExtremeReducer<T, false>>) {
      if (s.R > 0 && fast_extreme<false, T>(out, x, s)) return;
    }
    if constexpr (std::is_same_v<R, scalar::ExtremeReducer<T, true>>) {
      if (s.R > 0 && fast_extreme<true, T>(out, x, s)) return;
    }
  }
  // Columns pay off when every reduced stride is wider than some kept stride.
  if (s.O > 1 && s.R > 1 && min_abs_stride(s.reduced) > min_abs_stride(s.kept)) {
    reduce_columns<R, T>(out, x, s);
  } else {
    reduce_rows<R, T>(out, x, s);
  }
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const RawTensor& out, const RawTensor& x, const Shape& axes) {
  visit_dtype(x.dtype(), op_name(op), [&]<class T>(type_tag<T>) {
    scalar::visit_reduce<T>(op, [&]<class R>(type_tag<R>) { run<R, T>(out, x, axes); });
  });
}

}  // namespace strata::detail
