// SPDX-License-Identifier: MIT
// vmath kernels for SSE2, which every x86-64 CPU has (no extra compile flags).
#include <immintrin.h>
#include <sleef.h>
#include <cstdint>
#include <cstring>

#define ISA_NS sse2
#define ISA_ENUM Isa::sse2
#define VF __m128
#define VD __m128d
#define SLEEF_F(name, u) Sleef_##name##f4_##u##sse2
#define SLEEF_D(name, u) Sleef_##name##d2_##u##sse2

namespace strata::detail::vmath::sse2 {
constexpr int kLanesF = 4, kLanesD = 2;
inline __m128 loadf(const float* p) { return _mm_loadu_ps(p); }
inline void storef(float* p, __m128 v) { _mm_storeu_ps(p, v); }
inline __m128d loadd(const double* p) { return _mm_loadu_pd(p); }
inline void stored(double* p, __m128d v) { _mm_storeu_pd(p, v); }
inline __m128 sqrtf_v(__m128 v) { return _mm_sqrt_ps(v); }
// SSE2 has no fused multiply-add: a product, rounded, then a sum.
inline __m128 fmaf_v(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
inline __m128d fmad_v(__m128d a, __m128d b, __m128d c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
inline __m128d widen_lo(__m128 v) { return _mm_cvtps_pd(v); }
inline __m128d widen_hi(__m128 v) { return _mm_cvtps_pd(_mm_movehl_ps(v, v)); }
inline __m128 narrow_join(__m128d lo, __m128d hi) {
  return _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi));
}
inline __m128 maxf_v(__m128 a, __m128 b) { return _mm_max_ps(a, b); }
inline __m128 minf_v(__m128 a, __m128 b) { return _mm_min_ps(a, b); }
inline __m128d sqrtd_v(__m128d v) { return _mm_sqrt_pd(v); }
inline void stream_fill(void* dst, int64_t blocks, const void* pattern) {
  const auto* q = static_cast<const __m128i*>(pattern);
  const __m128i v0 = _mm_loadu_si128(q), v1 = _mm_loadu_si128(q + 1);
  const __m128i v2 = _mm_loadu_si128(q + 2), v3 = _mm_loadu_si128(q + 3);
  auto* d = static_cast<__m128i*>(dst);
  for (int64_t i = 0; i < blocks; ++i) {
    _mm_stream_si128(d + 4 * i, v0);
    _mm_stream_si128(d + 4 * i + 1, v1);
    _mm_stream_si128(d + 4 * i + 2, v2);
    _mm_stream_si128(d + 4 * i + 3, v3);
  }
  _mm_sfence();
}
// One 64-byte line from src to dst (64-byte aligned), non-temporal: four 16-byte stores.
inline void stream_line(char* dst, const char* src) {
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* s = reinterpret_cast<const __m128i*>(src);
  _mm_stream_si128(d, _mm_loadu_si128(s));
  _mm_stream_si128(d + 1, _mm_loadu_si128(s + 1));
  _mm_stream_si128(d + 2, _mm_loadu_si128(s + 2));
  _mm_stream_si128(d + 3, _mm_loadu_si128(s + 3));
}
// dst[b * ldd + a] = src[a * lds + b] for a 16 x 16 block of 4-byte elements.
inline void transpose16(const char* src, int64_t lds, char* dst, int64_t ldd) {
  for (int64_t a = 0; a < 16; ++a) {
    for (int64_t b = 0; b < 16; ++b)
      std::memcpy(dst + (b * ldd + a) * 4, src + (a * lds + b) * 4, 4);
  }
}
// dst[b * ldd + a] = src[a * lds + b] for an 8 x 8 block of 8-byte elements, in
// 2 x 2 blocks (one register per row pair half).
inline void transpose8d(const char* src, int64_t lds, char* dst, int64_t ldd) {
  const auto* s = reinterpret_cast<const double*>(src);
  auto* d = reinterpret_cast<double*>(dst);
  for (int a = 0; a < 8; a += 2) {
    for (int b = 0; b < 8; b += 2) {
      const __m128d r0 = _mm_loadu_pd(s + a * lds + b), r1 = _mm_loadu_pd(s + (a + 1) * lds + b);
      _mm_storeu_pd(d + b * ldd + a, _mm_unpacklo_pd(r0, r1));
      _mm_storeu_pd(d + (b + 1) * ldd + a, _mm_unpackhi_pd(r0, r1));
    }
  }
}
}  // namespace strata::detail::vmath::sse2

#include "raw/cpu/vmath_impl.hpp"
