// SPDX-License-Identifier: MIT
// vmath kernels for AVX-512F (this file is compiled with -mavx512f -mfma).
#include <immintrin.h>
#include <sleef.h>

#define ISA_NS avx512
#define ISA_ENUM Isa::avx512
#define VF __m512
#define VD __m512d
#define SLEEF_F(name, u) Sleef_##name##f16_##u##avx512f
#define SLEEF_D(name, u) Sleef_##name##d8_##u##avx512f

namespace strata::detail::vmath::avx512 {
constexpr int kLanesF = 16, kLanesD = 8;
inline __m512 loadf(const float* p) { return _mm512_loadu_ps(p); }
inline void storef(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
inline __m512d loadd(const double* p) { return _mm512_loadu_pd(p); }
inline void stored(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
inline __m512 sqrtf_v(__m512 v) { return _mm512_sqrt_ps(v); }
inline __m512d sqrtd_v(__m512d v) { return _mm512_sqrt_pd(v); }
}  // namespace strata::detail::vmath::avx512

#include "raw/cpu/vmath_impl.hpp"
