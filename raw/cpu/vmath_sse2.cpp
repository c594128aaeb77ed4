// SPDX-License-Identifier: MIT
// vmath kernels for SSE2, which every x86-64 CPU has (no extra compile flags).
#include <immintrin.h>
#include <sleef.h>

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
inline __m128d sqrtd_v(__m128d v) { return _mm_sqrt_pd(v); }
}  // namespace strata::detail::vmath::sse2

#include "raw/cpu/vmath_impl.hpp"
