// SPDX-License-Identifier: MIT
// vmath kernels for AVX-512F (this file is compiled with -mavx512f -mfma).
#include <immintrin.h>
#include <sleef.h>
#include <cstdint>
#include <cstring>

#define ISA_NS avx512
#define ISA_ENUM Isa::avx512
#define VF __m512
#define VD __m512d
#define SLEEF_F(name, u) Sleef_##name##f16_##u##avx512f
#define SLEEF_D(name, u) Sleef_##name##d8_##u##avx512f
#define ISA_SCALEF(u, n) _mm512_scalef_ps(u, n)

namespace strata::detail::vmath::avx512 {
constexpr int kLanesF = 16, kLanesD = 8;
inline __m512 loadf(const float* p) { return _mm512_loadu_ps(p); }
inline void storef(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
inline __m512d loadd(const double* p) { return _mm512_loadu_pd(p); }
inline void stored(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
inline __m512 sqrtf_v(__m512 v) { return _mm512_sqrt_ps(v); }
inline __m512 fmaf_v(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
inline __m512d fmad_v(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
inline __m512d widen_lo(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
inline __m512d widen_hi(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
inline __m512 narrow_join(__m512d lo, __m512d hi) {
  const __m512d l = _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo)));
  return _mm512_castpd_ps(_mm512_insertf64x4(l, _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
}
inline __m512 maxf_v(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
inline __m512 minf_v(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
inline __m512d sqrtd_v(__m512d v) { return _mm512_sqrt_pd(v); }
inline void stream_fill(void* dst, int64_t blocks, const void* pattern) {
  const __m512i v = _mm512_loadu_si512(pattern);
  auto* d = static_cast<__m512i*>(dst);
  for (int64_t i = 0; i < blocks; ++i) _mm512_stream_si512(d + i, v);
  _mm_sfence();
}
// One 64-byte line from src to dst (64-byte aligned), non-temporal: one store.
inline void stream_line(char* dst, const char* src) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(dst),
                      _mm512_loadu_si512(reinterpret_cast<const void*>(src)));
}
// dst[b * ldd + a] = src[a * lds + b] for a 16 x 16 block of 4-byte elements,
// in registers: 32-bit and 64-bit interleaves within 128-bit lanes, then a
// 4 x 4 transpose of the lanes. (GCC 12 warns inside its own headers that
// the unpack and shuffle builtins' unused merge operand is uninitialised.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
inline void transpose16(const char* src, int64_t lds, char* dst, int64_t ldd) {
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  __m512 r[16], t[16], u[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(s + i * lds);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  auto pd = [](__m512 v) { return _mm512_castps_pd(v); };
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[i]), pd(t[i + 2])));
    u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[i]), pd(t[i + 2])));
    u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[i + 1]), pd(t[i + 3])));
    u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[i + 1]), pd(t[i + 3])));
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 a = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44);
    const __m512 b = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
    const __m512 c = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
    const __m512 e = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
    _mm512_storeu_ps(d + j * ldd, _mm512_shuffle_f32x4(a, c, 0x88));
    _mm512_storeu_ps(d + (4 + j) * ldd, _mm512_shuffle_f32x4(a, c, 0xDD));
    _mm512_storeu_ps(d + (8 + j) * ldd, _mm512_shuffle_f32x4(b, e, 0x88));
    _mm512_storeu_ps(d + (12 + j) * ldd, _mm512_shuffle_f32x4(b, e, 0xDD));
  }
}
// The same for an 8 x 8 block of 8-byte elements: pairs interleaved, then
// 128-bit lanes gathered twice (shuffle_f64x2 0x88: lanes 0 and 2 of each
// operand, 0xDD: lanes 1 and 3).
inline void transpose8d(const char* src, int64_t lds, char* dst, int64_t ldd) {
  const auto* s = reinterpret_cast<const double*>(src);
  auto* d = reinterpret_cast<double*>(dst);
  __m512d r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm512_loadu_pd(s + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0x88);
    u[i + 1] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0x88);
    u[i + 2] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0xDD);
    u[i + 3] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0xDD);
  }
  for (int j = 0; j < 4; ++j) {
    _mm512_storeu_pd(d + j * ldd, _mm512_shuffle_f64x2(u[j], u[4 + j], 0x88));
    _mm512_storeu_pd(d + (4 + j) * ldd, _mm512_shuffle_f64x2(u[j], u[4 + j], 0xDD));
  }
}
#pragma GCC diagnostic pop
}  // namespace strata::detail::vmath::avx512

#include "raw/cpu/vmath_impl.hpp"
