// SPDX-License-Identifier: MIT
// vmath kernels for AVX2 with FMA (this file is compiled with -mavx2 -mfma).
#include <immintrin.h>
#include <sleef.h>
#include <cstdint>
#include <cstring>

#define ISA_NS avx2
#define ISA_ENUM Isa::avx2
#define VF __m256
#define VD __m256d
#define SLEEF_F(name, u) Sleef_##name##f8_##u##avx2
#define SLEEF_D(name, u) Sleef_##name##d4_##u##avx2

namespace strata::detail::vmath::avx2 {
constexpr int kLanesF = 8, kLanesD = 4;
inline __m256 loadf(const float* p) { return _mm256_loadu_ps(p); }
inline void storef(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
inline __m256d loadd(const double* p) { return _mm256_loadu_pd(p); }
inline void stored(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
inline __m256 sqrtf_v(__m256 v) { return _mm256_sqrt_ps(v); }
inline __m256 fmaf_v(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
inline __m256d fmad_v(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
inline __m256d widen_lo(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
inline __m256d widen_hi(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
inline __m256 narrow_join(__m256d lo, __m256d hi) {
  return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}
inline __m256 maxf_v(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
inline __m256 minf_v(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
inline __m256d sqrtd_v(__m256d v) { return _mm256_sqrt_pd(v); }
inline void stream_fill(void* dst, int64_t blocks, const void* pattern) {
  const __m256i v0 = _mm256_loadu_si256(static_cast<const __m256i*>(pattern));
  const __m256i v1 = _mm256_loadu_si256(static_cast<const __m256i*>(pattern) + 1);
  auto* d = static_cast<__m256i*>(dst);
  for (int64_t i = 0; i < blocks; ++i) {
    _mm256_stream_si256(d + 2 * i, v0);
    _mm256_stream_si256(d + 2 * i + 1, v1);
  }
  _mm_sfence();
}
// One 64-byte line from src to dst (64-byte aligned), non-temporal: two 32-byte stores.
inline void stream_line(char* dst, const char* src) {
  auto* d = reinterpret_cast<__m256i*>(dst);
  const auto* s = reinterpret_cast<const __m256i*>(src);
  _mm256_stream_si256(d, _mm256_loadu_si256(s));
  _mm256_stream_si256(d + 1, _mm256_loadu_si256(s + 1));
}
// dst[b * ldd + a] = src[a * lds + b] for an 8 x 8 block of 4-byte elements:
// pairs interleaved, then pairs of pairs, then the 128-bit halves swapped.
inline void transpose8(const float* s, int64_t lds, float* d, int64_t ldd) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(d + j * ldd, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
    _mm256_storeu_ps(d + (4 + j) * ldd, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
  }
}
// dst[b * ldd + a] = src[a * lds + b] for a 16 x 16 block of 4-byte elements.
inline void transpose16(const char* src, int64_t lds, char* dst, int64_t ldd) {
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  for (int a = 0; a < 16; a += 8) {
    for (int b = 0; b < 16; b += 8) transpose8(s + a * lds + b, lds, d + b * ldd + a, ldd);
  }
}
// dst[b * ldd + a] = src[a * lds + b] for an 8 x 8 block of 8-byte elements, as
// four 4 x 4 blocks: pairs interleaved, then the 128-bit halves exchanged.
inline void transpose8d(const char* src, int64_t lds, char* dst, int64_t ldd) {
  const auto* s = reinterpret_cast<const double*>(src);
  auto* d = reinterpret_cast<double*>(dst);
  for (int a = 0; a < 8; a += 4) {
    for (int b = 0; b < 8; b += 4) {
      const double* q = s + a * lds + b;
      double* o = d + b * ldd + a;
      __m256d r[4], t[4];
      for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_pd(q + i * lds);
      t[0] = _mm256_unpacklo_pd(r[0], r[1]);
      t[1] = _mm256_unpackhi_pd(r[0], r[1]);
      t[2] = _mm256_unpacklo_pd(r[2], r[3]);
      t[3] = _mm256_unpackhi_pd(r[2], r[3]);
      _mm256_storeu_pd(o, _mm256_permute2f128_pd(t[0], t[2], 0x20));
      _mm256_storeu_pd(o + ldd, _mm256_permute2f128_pd(t[1], t[3], 0x20));
      _mm256_storeu_pd(o + 2 * ldd, _mm256_permute2f128_pd(t[0], t[2], 0x31));
      _mm256_storeu_pd(o + 3 * ldd, _mm256_permute2f128_pd(t[1], t[3], 0x31));
    }
  }
}
}  // namespace strata::detail::vmath::avx2

#include "raw/cpu/vmath_impl.hpp"
