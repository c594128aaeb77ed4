// SPDX-License-Identifier: MIT
// CPU index_select (gather) and index_add (scatter-add) along one axis.
//
// Letters: x is [P..., A, Q...] (A the indexed axis), idx has J elements in
// any shape, out / src are [P..., J, Q...]. The front end hands over idx as
// contiguous i64 positions already in [0, A) and src contiguous
// (raw/backend.hpp), so nothing here checks or copies them. Both kernels
// walk the "rest" layout [P..., Q...] with one plan built once, shifting its
// base offsets by idx[j] * stride(A) on one side and j * stride(J) on the
// other.
//   index_select: out[p, j, q]  = x[p, idx[j], q]     (parallel over j)
//   index_add:    out[p, idx[j], q] += src[p, j, q]   (parallel over the rest,
//                 or over destination rows when rows are short; j in order
//                 either way, so repeated indices add up deterministically)
#include <emmintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/prefetch.hpp"
#include "raw/cpu/tuning.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"
#include "raw/index_support.hpp"

namespace strata::detail {
namespace {

/// True when a plan walks one unit-stride run in every operand (rows that memcpy).
template <std::size_t N>
bool unit_rows(const StridedPlan<N>& p) {
  if (p.shape.size() != 1) return false;
  for (std::size_t k = 0; k < N; ++k) {
    if (p.strides[k][0] != 1 && p.shape[0] != 1) return false;
  }
  return true;
}

/// memcpy(dst, src, n) for n < 64 as two fixed-size copies of the largest
/// power of two k <= n (the first k bytes and the last k, overlapping).
inline void copy_short(char* dst, const char* src, int64_t n) {
  auto two = [&]<int k>() {
    std::memcpy(dst, src, k);
    std::memcpy(dst + n - k, src + n - k, k);
  };
  if (n >= 32) return two.template operator()<32>();
  if (n >= 16) return two.template operator()<16>();
  if (n >= 8) return two.template operator()<8>();
  if (n >= 4) return two.template operator()<4>();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

/// Copies kBytes (a multiple of 16) as that many 16-byte loads and stores in
/// straight-line code: GCC expands a memcpy of a few hundred bytes or more,
/// fixed size or not, inline as `rep movsq`.
template <int kBytes, std::size_t... I>
inline void copy_units(char* dst, const char* src, std::index_sequence<I...>) {
  (_mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * I),
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * I))),
   ...);
}
template <int kBytes>
inline void copy_fixed(char* dst, const char* src) {
  copy_units<kBytes>(dst, src, std::make_index_sequence<std::size_t(kBytes / 16)>{});
}

/// memcpy(dst, src, row_bytes) for a row of kLines lines (ceil(row_bytes / 64),
/// capped at 16) as fixed-size copies: the first kLines - 1 lines, then the 64
/// bytes that end the row (overlapping the first part where the row is not
/// whole lines); rows under a line by copy_short. The `rep movsq` that GCC
/// made of the memcpy has a start-up cost that dominated short rows. Rows
/// past 1 KiB keep the one memcpy.
template <int kLines>
inline void copy_row(char* dst, const char* src, int64_t row_bytes) {
  if (row_bytes < 64) return copy_short(dst, src, row_bytes);
  if (row_bytes > kLines * 64) {
    std::memcpy(dst, src, std::size_t(row_bytes));
    return;
  }
  if constexpr (kLines > 1) copy_fixed<(kLines - 1) * 64>(dst, src);
  copy_fixed<64>(dst + row_bytes - 64, src + row_bytes - 64);
}

/// Rows [lo, hi) of a gather of whole rows: row_bytes bytes from xc + pos[j] * sab
/// to oc + j * sjb, with streaming stores when `stream` (16-byte units). The rows
/// are scattered over the table, so they are fetched ahead and their cache misses
/// overlap instead of stalling one after another, in two steps: into L2 kFar rows
/// ahead, then into L1 kNear rows ahead (one step into L1 waits on the core's few
/// L1 miss buffers). kLines lines of each row (its first KiB at most; a longer
/// row's later lines are a run the hardware prefetcher follows), a compile-time
/// count: the same prefetches with the count known only at run time were
/// markedly slower.
template <int kLines>
void gather_rows_of(char* oc, int64_t sjb, const char* xc, int64_t sab, const int64_t* pos,
                    int64_t row_bytes, bool stream, int64_t lo, int64_t hi) {
  constexpr int64_t kFar = 32, kNear = 8;
  for (int64_t j = lo; j < hi; ++j) {
    if (j + kFar < hi) prefetch_fixed<0, 2, kLines>(xc + pos[j + kFar] * sab);
    if (j + kNear < hi) prefetch_fixed<0, 3, kLines>(xc + pos[j + kNear] * sab);
    char* const dst = oc + j * sjb;
    const char* const src = xc + pos[j] * sab;
    if (stream) {
      // Streaming stores: the result is written once and read later,
      // so skip reading its lines into the cache first (SSE2, baseline).
      auto* d = reinterpret_cast<__m128i*>(dst);
      for (int64_t b = 0; b < row_bytes; b += 16) {
        _mm_stream_si128(d++, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + b)));
      }
    } else {
      copy_row<kLines>(dst, src, row_bytes);
    }
  }
  if (stream) _mm_sfence();
}

/// gather_rows_of<L + 1> for the row's line count L + 1 (one of 1 to 16).
template <std::size_t... L>
void gather_rows_by_lines(int64_t lines, std::index_sequence<L...>, char* oc, int64_t sjb,
                          const char* xc, int64_t sab, const int64_t* pos, int64_t row_bytes,
                          bool stream, int64_t lo, int64_t hi) {
  (void)((lines == int64_t(L) + 1 &&
          (gather_rows_of<int(L) + 1>(oc, sjb, xc, sab, pos, row_bytes, stream, lo, hi), true)) ||
         ...);
}

/// gather_rows_of for the row's line count (its first KiB: at most 16).
void gather_rows(char* oc, int64_t sjb, const char* xc, int64_t sab, const int64_t* pos,
                 int64_t row_bytes, bool stream, int64_t lo, int64_t hi) {
  const int64_t lines = std::clamp<int64_t>((row_bytes + 63) / 64, 1, 16);
  gather_rows_by_lines(lines, std::make_index_sequence<16>{}, oc, sjb, xc, sab, pos, row_bytes,
                       stream, lo, hi);
}

}  // namespace

void CpuBackend::index_select(const RawTensor& out, const RawTensor& x, int64_t axis,
                              const RawTensor& idx) {
  const int64_t* pos = base_ptr<int64_t>(idx) + idx.offset();
  const int64_t J = idx.numel();
  const Layout of = fold_index_dims(out, axis, idx.ndim(), J);
  const Layout out_rest = drop_axis(of, axis), x_rest = drop_axis(x.layout(), axis);
  const int64_t sj = of.strides[axis], sa = x.strides()[axis];
  const int64_t rest = out_rest.numel();
  if (rest == 0) return;
  visit_dtype(x.dtype(), "index_select", [&]<class T>(type_tag<T>) {
    const StridedPlan<2> plan = make_plan<2>(out_rest.shape, {&out_rest, &x_rest});
    T* ob = base_ptr<T>(out);
    const T* xb = base_ptr<T>(x);
    const int64_t grain = std::max<int64_t>(1, kGrain / rest);
    if (unit_rows(plan)) {
      // Each index copies one contiguous row (the common gather of table rows).
      // Large results whose rows are whole 16-byte units are streamed where
      // that measured faster (cpu_tuning().stream_gather_units).
      const CpuTuning& tuning = cpu_tuning();
      const std::size_t out_bytes = std::size_t(J * rest) * sizeof(T);
      const bool stream = tuning.stream_gather_units && out_bytes >= (std::size_t{8} << 20) &&
                          (rest * int64_t(sizeof(T))) % 16 == 0 &&
                          (sj * int64_t(sizeof(T))) % 16 == 0 &&
                          reinterpret_cast<std::uintptr_t>(ob + plan.offsets[0]) % 16 == 0;
      const int64_t row_bytes = rest * int64_t(sizeof(T));
      char* const oc = reinterpret_cast<char*>(ob + plan.offsets[0]);
      const char* const xc = reinterpret_cast<const char*>(xb + plan.offsets[1]);
      const int64_t sjb = sj * int64_t(sizeof(T)), sab = sa * int64_t(sizeof(T));
      // Rows of whole lines, one after another in an aligned result: streamed
      // a full line at a time (cpu_tuning().stream_gather_lines).
      const vmath::Kernels* k = vmath::best();
      if (k && tuning.stream_gather_lines && out_bytes >= (std::size_t{8} << 20) &&
          row_bytes % 64 == 0 && sjb == row_bytes &&
          reinterpret_cast<std::uintptr_t>(oc) % 64 == 0) {
        return parallel_for(0, J, grain, [&](int64_t lo, int64_t hi) {
          k->gather_lines(oc, xc, sab, pos, row_bytes / 64, lo, hi);
        });
      }
      parallel_for(0, J, grain, [&](int64_t lo, int64_t hi) {
        gather_rows(oc, sjb, xc, sab, pos, row_bytes, stream, lo, hi);
      });
      return;
    }
    parallel_for(0, J, grain, [&](int64_t lo, int64_t hi) {
      StridedPlan<2> p = plan;
      for (int64_t j = lo; j < hi; ++j) {
        p.offsets = {plan.offsets[0] + j * sj, plan.offsets[1] + pos[j] * sa};
        for_each_block(p, 0, rest, [&](const auto& off, int64_t n, const auto& st) {
          T* o = ob + off[0];
          const T* v = xb + off[1];
          for (int64_t i = 0; i < n; ++i) o[i * st[0]] = v[i * st[1]];
        });
      }
    });
  });
}

void CpuBackend::index_add(const RawTensor& out, int64_t axis, const RawTensor& idx,
                           const RawTensor& src) {
  const int64_t size = out.shape()[axis];
  const int64_t* pos = base_ptr<int64_t>(idx) + idx.offset();
  const int64_t J = idx.numel();
  const Layout sf = fold_index_dims(src, axis, idx.ndim(), J);
  const Layout src_rest = drop_axis(sf, axis), out_rest = drop_axis(out.layout(), axis);
  const int64_t sj = sf.strides[axis], sa = out.strides()[axis];
  const int64_t rest = out_rest.numel();
  if (rest == 0) return;
  visit_dtype(out.dtype(), "index_add", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) {
      const StridedPlan<2> plan = make_plan<2>(out_rest.shape, {&out_rest, &src_rest});
      T* ob = base_ptr<T>(out);
      const T* sb = base_ptr<T>(src);
      auto add_run = [](T* o, const T* v, int64_t n, int64_t so, int64_t sv) {
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            o[i * so] = T(U(o[i * so]) + U(v[i * sv]));
          } else {
            o[i * so] += v[i * sv];
          }
        }
      };
      if (unit_rows(plan) && rest < kGrain) {
        // Short rows, many indices (the backward pass of a row gather): split
        // the destination rows between threads; each scans every index and
        // adds the ones landing in its rows, in index order, so repeated
        // indices add up in the same order whatever the thread timing.
        const int64_t grain = std::max<int64_t>(1, kGrain / rest);
        parallel_for(0, size, grain, [&](int64_t lo, int64_t hi) {
          for (int64_t j = 0; j < J; ++j) {
            const int64_t p = pos[j];
            if (p < lo || p >= hi) continue;
            add_run(ob + plan.offsets[0] + p * sa, sb + plan.offsets[1] + j * sj, rest, 1, 1);
          }
        });
        return;
      }
      parallel_for(0, rest, kGrain, [&](int64_t lo, int64_t hi) {
        StridedPlan<2> p = plan;
        for (int64_t j = 0; j < J; ++j) {
          p.offsets = {plan.offsets[0] + pos[j] * sa, plan.offsets[1] + j * sj};
          for_each_block(p, lo, hi, [&](const auto& off, int64_t n, const auto& st) {
            add_run(ob + off[0], sb + off[1], n, st[0], st[1]);
          });
        }
      });
    }
  });
}

}  // namespace strata::detail
