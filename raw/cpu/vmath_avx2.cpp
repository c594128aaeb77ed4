// SPDX-License-Identifier: MIT
// vmath kernels for AVX2 with FMA (this file is compiled with -mavx2 -mfma).
#include <immintrin.h>
#include <sleef.h>

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
inline __m256d sqrtd_v(__m256d v) { return _mm256_sqrt_pd(v); }
}  // namespace strata::detail::vmath::avx2

#include "raw/cpu/vmath_impl.hpp"
