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

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/loops.hpp"
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
      // that measured faster (gather_streams()).
      const std::size_t out_bytes = std::size_t(J * rest) * sizeof(T);
      const bool stream = gather_streams() && out_bytes >= (std::size_t{8} << 20) &&
                          (rest * int64_t(sizeof(T))) % 16 == 0 &&
                          (sj * int64_t(sizeof(T))) % 16 == 0 &&
                          reinterpret_cast<std::uintptr_t>(ob + plan.offsets[0]) % 16 == 0;
      parallel_for(0, J, grain, [&](int64_t lo, int64_t hi) {
        // Rows are scattered over the table: fetch some ahead, so their cache
        // misses overlap instead of stalling one after another (16 rows took
        // 0.89 ms on Zen 5 where 8 took 1.02, and 32 no less than 16).
        constexpr int64_t kAhead = 16;
        const int64_t row_bytes = rest * int64_t(sizeof(T));
        for (int64_t j = lo; j < hi; ++j) {
          if (j + kAhead < hi) {
            const char* next =
                reinterpret_cast<const char*>(xb + plan.offsets[1] + pos[j + kAhead] * sa);
            for (int64_t b = 0; b < row_bytes && b < 1024; b += 64) __builtin_prefetch(next + b);
          }
          T* dst = ob + plan.offsets[0] + j * sj;
          const T* src = xb + plan.offsets[1] + pos[j] * sa;
          if (stream) {
            // Streaming stores: the result is written once and read later,
            // so skip reading its lines into the cache first (SSE2, baseline).
            auto* d = reinterpret_cast<__m128i*>(dst);
            const auto* v = reinterpret_cast<const char*>(src);
            for (int64_t b = 0; b < row_bytes; b += 16) {
              _mm_stream_si128(d++, _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + b)));
            }
          } else {
            std::memcpy(dst, src, std::size_t(rest) * sizeof(T));
          }
        }
        if (stream) _mm_sfence();
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
