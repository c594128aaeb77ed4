// SPDX-License-Identifier: MIT
#pragma once
// The body of one vmath_<isa>.cpp: included once per instruction set, after
// the including file has defined, for its vector width,
//   VF, VD          the f32 and f64 vector types,
//   kLanesF, kLanesD their lane counts,
//   loadf/storef, loadd/stored  unaligned loads and stores,
//   sqrtf_v/sqrtd_v hardware square roots,
//   fmaf_v, fmad_v  a * b + c for f32 and f64 lanes (fused where the ISA has FMA),
//   widen_lo/widen_hi  the low and high halves of f32 lanes as f64 lanes,
//   narrow_join     two f64 vectors rounded to f32 lanes, the first in the low half,
//   maxf_v/minf_v   maxps/minps: b where either lane is NaN,
//   stream_fill     the non-temporal fill of 64-byte blocks,
//   stream_line     the non-temporal copy of one 64-byte line to an aligned one,
//   transpose16     the transpose of a 16 x 16 block of 4-byte elements,
//   ISA_SCALEF      optionally, u * 2^floor(n) in one instruction (AVX-512),
// and the SLEEF function names through SLEEF_F(name) and SLEEF_D(name).
// Only builtins and SLEEF are used here: no inline library code whose
// ISA-specific instantiation another translation unit could pick up.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "raw/cpu/vmath.hpp"

namespace strata::detail::vmath {
namespace ISA_NS {

template <VF (*F)(VF)>
void run_f32(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanesF <= n; i += kLanesF) storef(y + i, F(loadf(x + i)));
  if (i < n) {
    // The tail through a padded buffer: lanes past n compute f(1), unused.
    float buf[kLanesF];
    for (int k = 0; k < kLanesF; ++k) buf[k] = 1.0f;
    std::memcpy(buf, x + i, std::size_t(n - i) * sizeof(float));
    storef(buf, F(loadf(buf)));
    std::memcpy(y + i, buf, std::size_t(n - i) * sizeof(float));
  }
}

template <VD (*F)(VD)>
void run_f64(const double* x, double* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanesD <= n; i += kLanesD) stored(y + i, F(loadd(x + i)));
  if (i < n) {
    double buf[kLanesD];
    for (int k = 0; k < kLanesD; ++k) buf[k] = 1.0;
    std::memcpy(buf, x + i, std::size_t(n - i) * sizeof(double));
    stored(buf, F(loadd(buf)));
    std::memcpy(y + i, buf, std::size_t(n - i) * sizeof(double));
  }
}

// SLEEF's sin and cos choose one argument reduction for the whole vector, from its largest |x|
// (SLEEF 3.5: f64 below 15, below 1e14, or beyond; f32 below 125 or beyond), and the
// reductions round a few arguments differently: an element's result would depend on its
// neighbours. Eager's thread pieces and a jit plan's blocks put an element beside different
// neighbours, so the bits could differ (and eager's with the thread count). Each lane gets the
// reduction its own |x| picks instead: a vector whose lanes all fall in one range (nearly
// always) is one call; otherwise each range's lanes are computed in a vector of their own,
// the other lanes replaced by a value of that range. The ranges refine every SLEEF version's
// (f32: also 39000 and 1e7); a NaN or an infinity falls in the last.
template <class V, class S, int K>
inline V own_reduction(V x, V (*f)(V), const S (&bounds)[K], const S (&inside)[K + 1]) {
  constexpr int n = int(sizeof(V) / sizeof(S));
  using M = decltype(x < x);
  const V a = x < V{} ? -x : x;
  // The common case first, as one vector compare: every lane below the first bound.
  const M below = a < V{} + bounds[0];
  const M all = M{} - 1;
  if (std::memcmp(&below, &all, sizeof(M)) == 0) return f(x);
  M range{};
  for (int k = 0; k < K; ++k) range -= ~(a < V{} + bounds[k]);  // +1 per bound not below
  bool one = true;
  for (int i = 1; i < n; ++i) one = one && range[i] == range[0];
  if (one) return f(x);
  V out = x;
  for (int r = 0; r <= K; ++r) {
    const M here = range == M{} + r;
    bool any = false;
    for (int i = 0; i < n; ++i) any = any || here[i] != 0;
    if (!any) continue;
    const V y = f(here ? x : V{} + inside[r]);
    out = here ? y : out;
  }
  return out;
}
constexpr float kTrigBoundsF[] = {125.0f, 39000.0f, 1e7f};
constexpr float kTrigInsideF[] = {0.0f, 1000.0f, 1e6f, 1e30f};
constexpr double kTrigBoundsD[] = {15.0, 1e14};
constexpr double kTrigInsideD[] = {0.0, 1000.0, 1e30};
inline VF sleef_sin_f(VF v) { return SLEEF_F(sin, u10)(v); }
inline VF sleef_cos_f(VF v) { return SLEEF_F(cos, u10)(v); }
inline VD sleef_sin_d(VD v) { return SLEEF_D(sin, u10)(v); }
inline VD sleef_cos_d(VD v) { return SLEEF_D(cos, u10)(v); }
inline VF sin_f(VF v) { return own_reduction(v, sleef_sin_f, kTrigBoundsF, kTrigInsideF); }
inline VF cos_f(VF v) { return own_reduction(v, sleef_cos_f, kTrigBoundsF, kTrigInsideF); }
inline VD sin_d(VD v) { return own_reduction(v, sleef_sin_d, kTrigBoundsD, kTrigInsideD); }
inline VD cos_d(VD v) { return own_reduction(v, sleef_cos_d, kTrigBoundsD, kTrigInsideD); }
inline VF log_f(VF v) { return SLEEF_F(log, u10)(v); }
inline VD log_d(VD v) { return SLEEF_D(log, u10)(v); }
inline VD exp_d(VD v) { return SLEEF_D(exp, u10)(v); }
inline VD tanh_d(VD v) { return SLEEF_D(tanh, u10)(v); }

#include "raw/cpu/vmath_inline.inc"  // times_pow2, exp_f, tanh_f

inline VF sqrt_f(VF v) { return sqrtf_v(v); }
inline VD sqrt_d(VD v) { return sqrtd_v(v); }
// The sign bit flipped, NaNs too: the scalar -x's bits.
inline VF neg_f(VF v) { return -v; }
inline VD neg_d(VD v) { return -v; }
// The sign bit cleared, as the scalar functor's fabs: abs(-0) is +0, NaNs lose their sign.
inline VF abs_f(VF v) {
  typedef int32_t VI __attribute__((vector_size(sizeof(VF))));
  return (VF)((VI)v & 0x7fffffff);
}
inline VD abs_d(VD v) {
  typedef int64_t VL __attribute__((vector_size(sizeof(VD))));
  return (VD)((VL)v & 0x7fffffffffffffffLL);
}

// dst[b * ldd + a] = src[a * lds + b] for b < rows, a < cols, elements of kSize
// bytes (bits only): kB x kB blocks by Block (this ISA's register transpose),
// the edges element by element. Blocks go along the source's rows (each kB
// source rows are read left to right, whole lines), prefetching the same
// lines of the next kB rows.
template <int64_t kB, int64_t kSize, void (*Block)(const char*, int64_t, char*, int64_t)>
void transpose_blocks(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows,
                      int64_t cols) {
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  auto move = [&](int64_t a, int64_t b) {
    std::memcpy(d + (b * ldd + a) * kSize, s + (a * lds + b) * kSize, kSize);
  };
  const int64_t rows_b = rows - rows % kB;
  int64_t a0 = 0;
  for (; a0 + kB <= cols; a0 += kB) {
    const bool next = a0 + 2 * kB <= cols;
    for (int64_t b0 = 0; b0 < rows_b; b0 += kB) {
      if (next) {
        for (int64_t a = a0 + kB; a < a0 + 2 * kB; ++a)
          __builtin_prefetch(s + (a * lds + b0) * kSize);
      }
      Block(s + (a0 * lds + b0) * kSize, lds, d + (b0 * ldd + a0) * kSize, ldd);
    }
    for (int64_t a = a0; a < a0 + kB; ++a) {
      for (int64_t b = rows_b; b < rows; ++b) move(a, b);
    }
  }
  for (int64_t a = a0; a < cols; ++a) {
    for (int64_t b = 0; b < rows; ++b) move(a, b);
  }
}

void transpose32(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows, int64_t cols) {
  transpose_blocks<16, 4, transpose16>(src, lds, dst, ldd, rows, cols);
}
void transpose64(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows, int64_t cols) {
  transpose_blocks<8, 8, transpose8d>(src, lds, dst, ldd, rows, cols);
}

// The transposed maps into whole lines (StreamTranspose in vmath.hpp): T the
// element type, V its vector, F the function (ident for a copy), Block this
// ISA's register transpose of a kB x kB block (kB elements: one 64-byte
// line). Each block is transposed into `blk` in L1; then row by row F runs on
// the row in place and the row is stored, so that the streaming stores go out
// between the rows' arithmetic rather than in a burst after the whole block's
// (F inlined here, not the contiguous kernel called through its pointer per
// block). Edge blocks are gathered element by element into a zeroed `blk` (F
// then runs on whole rows, its unused lanes on zeros) and stored plainly.
template <class V>
inline V ident(V v) {
  return v;
}
template <class T, class V, V (*F)(V), void (*Block)(const char*, int64_t, char*, int64_t)>
void stream_transpose(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows,
                      int64_t cols) {
  constexpr int64_t kSize = int64_t(sizeof(T)), kB = 64 / kSize;
  constexpr int64_t kLanes = int64_t(sizeof(V)) / kSize;
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  alignas(64) T blk[kB * kB];
  auto* b = reinterpret_cast<char*>(blk);
  for (int64_t a0 = 0; a0 < cols; a0 += kB) {
    const int64_t na = cols - a0 < kB ? cols - a0 : kB;
    for (int64_t b0 = 0; b0 < rows; b0 += kB) {
      const int64_t nb = rows - b0 < kB ? rows - b0 : kB;
      const char* sb = s + (a0 * lds + b0) * kSize;
      if (na == kB && nb == kB) {
        Block(sb, lds, b, kB);
      } else {
        std::memset(blk, 0, sizeof blk);
        for (int64_t a = 0; a < na; ++a) {
          for (int64_t r = 0; r < nb; ++r) {
            std::memcpy(b + (r * kB + a) * kSize, sb + (a * lds + r) * kSize, kSize);
          }
        }
      }
      for (int64_t r = 0; r < nb; ++r) {
        T* const row = blk + r * kB;
        if constexpr (F != &ident<V>) {
          for (int64_t v = 0; v < kB; v += kLanes) {
            if constexpr (std::is_same_v<T, float>) {
              storef(row + v, F(loadf(row + v)));
            } else {
              stored(row + v, F(loadd(row + v)));
            }
          }
        }
        char* const dr = d + ((b0 + r) * ldd + a0) * kSize;
        if (na == kB && (reinterpret_cast<uintptr_t>(dr) & 63) == 0) {
          stream_line(dr, reinterpret_cast<const char*>(row));
        } else {
          std::memcpy(dr, row, std::size_t(na * kSize));
        }
      }
    }
  }
  _mm_sfence();
}
template <VF (*F)(VF)>
void stream_f32(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows, int64_t cols) {
  stream_transpose<float, VF, F, transpose16>(src, lds, dst, ldd, rows, cols);
}
template <VD (*F)(VD)>
void stream_f64(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows, int64_t cols) {
  stream_transpose<double, VD, F, transpose8d>(src, lds, dst, ldd, rows, cols);
}

void stream_lines(char* dst, const char* src, int64_t lines) {
  for (int64_t c = 0; c < lines * 64; c += 64) stream_line(dst + c, src + c);
}

// Rows [lo, hi) of a gather of whole lines (gather_lines in vmath.hpp), kLines
// lines a row (of 1 to 16; longer rows prefetch their first 16 lines): each
// row prefetched into L2 kFar rows ahead and into L1 kNear rows ahead, as the
// plain gather in raw/cpu/index.cpp does, then streamed out line by line.
// prefetch_row is loops.hpp's prefetch_fixed again: this file may not include
// inline library code (see the top).
template <int Locality, std::size_t... I>
inline void prefetch_row(const char* q, std::index_sequence<I...>) {
  (__builtin_prefetch(q + 64 * int64_t(I), 0, Locality), ...);
}
template <int kLines>
void gather_lines_of(char* dst, const char* src, int64_t sab, const int64_t* pos, int64_t lines,
                     int64_t lo, int64_t hi) {
  constexpr int64_t kFar = 32, kNear = 8;
  constexpr auto seq = std::make_index_sequence<std::size_t(kLines)>{};
  const int64_t row = lines * 64;
  for (int64_t j = lo; j < hi; ++j) {
    if (j + kFar < hi) prefetch_row<2>(src + pos[j + kFar] * sab, seq);
    if (j + kNear < hi) prefetch_row<3>(src + pos[j + kNear] * sab, seq);
    char* const d = dst + j * row;
    const char* const s = src + pos[j] * sab;
    if (lines == kLines) {
      [&]<std::size_t... L>(std::index_sequence<L...>) {
        (stream_line(d + 64 * int64_t(L), s + 64 * int64_t(L)), ...);
      }
      (seq);
    } else {
      for (int64_t c = 0; c < row; c += 64) stream_line(d + c, s + c);
    }
  }
  _mm_sfence();
}
template <std::size_t... L>
void gather_lines_by_count(char* dst, const char* src, int64_t sab, const int64_t* pos,
                           int64_t lines, int64_t lo, int64_t hi, std::index_sequence<L...>) {
  const int64_t fixed = lines < 16 ? lines : 16;
  (void)((fixed == int64_t(L) + 1 &&
          (gather_lines_of<int(L) + 1>(dst, src, sab, pos, lines, lo, hi), true)) ||
         ...);
}
void gather_lines(char* dst, const char* src, int64_t sab, const int64_t* pos, int64_t lines,
                  int64_t lo, int64_t hi) {
  gather_lines_by_count(dst, src, sab, pos, lines, lo, hi, std::make_index_sequence<16>{});
}

#include "raw/cpu/vmath_scan.inc"  // first_outside_scan
#include "raw/cpu/vmath_sum.inc"   // sum_blocks, sum_columns_blocks

double sum_f32(const float* x, int64_t n) { return sum_blocks(x, n); }
double sum_f64(const double* x, int64_t n) { return sum_blocks(x, n); }
void sum_columns_f32(const float* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  sum_columns_blocks(x, rows, ld, cols, acc);
}
void sum_columns_f64(const double* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  sum_columns_blocks(x, rows, ld, cols, acc);
}

#include "raw/cpu/vmath_binary.inc"  // mul_f32 ... div_f64, binary_strided, select_strided

// AdamStep's update (raw/scalar/binary.hpp) of one vector of each array. Compilers contract
// a * b + c into an FMA when FMA is enabled (GCC even between intrinsics, clang within an
// expression): not here, or the bits would differ from the scalar functor's (and from SSE2's,
// which has no FMA). GCC takes the attribute, clang the pragma.
template <class T, class V, V (*Load)(const T*), void (*Store)(T*, V), V (*Sqrt)(V)>
#if !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
inline void
adam_vector(T* p, T* m, T* v, const T* g, const AdamCoefficients<T>& c) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  const V gv = Load(g), pv = Load(p);
  const V s = c.l2 != T(0) ? gv + c.l2 * pv : gv;
  const V pd = pv * c.decay;
  const V mv = c.beta1 * Load(m) + c.one_minus_beta1 * s;
  const V vv = c.beta2 * Load(v) + c.one_minus_beta2 * (s * s);
  Store(m, mv);
  Store(v, vv);
  Store(p, pd + c.neg_step * (mv / (Sqrt(vv) / c.sqrt_bc2 + c.eps)));
}
// The update of n elements: whole vectors, then the tail through padded buffers (the same
// instructions for every element).
template <class T, class V, V (*Load)(const T*), void (*Store)(T*, V), V (*Sqrt)(V), int L>
void adam_run(T* p, T* m, T* v, const T* g, int64_t n, const AdamCoefficients<T>& c) {
  int64_t i = 0;
  for (; i + L <= n; i += L) adam_vector<T, V, Load, Store, Sqrt>(p + i, m + i, v + i, g + i, c);
  if (i == n) return;
  T bp[L] = {}, bm[L] = {}, bv[L] = {}, bg[L] = {};
  const std::size_t bytes = std::size_t(n - i) * sizeof(T);
  std::memcpy(bp, p + i, bytes);
  std::memcpy(bm, m + i, bytes);
  std::memcpy(bv, v + i, bytes);
  std::memcpy(bg, g + i, bytes);
  adam_vector<T, V, Load, Store, Sqrt>(bp, bm, bv, bg, c);
  std::memcpy(p + i, bp, bytes);
  std::memcpy(m + i, bm, bytes);
  std::memcpy(v + i, bv, bytes);
}
void adam_f32(float* p, float* m, float* v, const float* g, int64_t n,
              const AdamCoefficients<float>& c) {
  adam_run<float, VF, loadf, storef, sqrtf_v, kLanesF>(p, m, v, g, n, c);
}
void adam_f64(double* p, double* m, double* v, const double* g, int64_t n,
              const AdamCoefficients<double>& c) {
  adam_run<double, VD, loadd, stored, sqrtd_v, kLanesD>(p, m, v, g, n, c);
}

extern const Kernels kKernels;
const Kernels kKernels = {
    ISA_ENUM,
    {run_f32<exp_f>, run_f32<log_f>, run_f32<sin_f>, run_f32<cos_f>, run_f32<tanh_f>,
     run_f32<sqrt_f>, run_f32<neg_f>, run_f32<abs_f>},
    {run_f64<exp_d>, run_f64<log_d>, run_f64<sin_d>, run_f64<cos_d>, run_f64<tanh_d>,
     run_f64<sqrt_d>, run_f64<neg_d>, run_f64<abs_d>},
    stream_fill,
    gather_lines,
    transpose32,
    transpose64,
    {stream_f32<exp_f>, stream_f32<log_f>, stream_f32<sin_f>, stream_f32<cos_f>, stream_f32<tanh_f>,
     stream_f32<sqrt_f>, stream_f32<neg_f>, stream_f32<abs_f>},
    {stream_f64<exp_d>, stream_f64<log_d>, stream_f64<sin_d>, stream_f64<cos_d>, stream_f64<tanh_d>,
     stream_f64<sqrt_d>, stream_f64<neg_d>, stream_f64<abs_d>},
    stream_f32<ident<VF>>,
    stream_f64<ident<VD>>,
    stream_lines,
    sum_f32,
    sum_f64,
    sum_columns_f32,
    sum_columns_f64,
    {extreme_blocks<false, float>, extreme_blocks<true, float>},
    {extreme_blocks<false, double>, extreme_blocks<true, double>},
    first_outside_scan,
    mul_f32,
    div_f32,
    mul_f64,
    div_f64,
    {binary_strided<AddOp, float>, binary_strided<SubOp, float>, binary_strided<MulOp, float>,
     binary_strided<DivOp, float>, select_strided<true, float>, select_strided<false, float>},
    {binary_strided<AddOp, double>, binary_strided<SubOp, double>, binary_strided<MulOp, double>,
     binary_strided<DivOp, double>, select_strided<true, double>, select_strided<false, double>},
    adam_f32,
    adam_f64,
};

}  // namespace ISA_NS
}  // namespace strata::detail::vmath
