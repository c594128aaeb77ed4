// SPDX-License-Identifier: MIT
// vmath dispatch (the CPU's best instruction set, chosen once) and the
// blocked summation kernels.
#include "raw/cpu/vmath.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace strata::detail::vmath {

#if defined(__x86_64__)
namespace sse2 {
extern const Kernels kKernels;
}
namespace avx2 {
extern const Kernels kKernels;
}
namespace avx512 {
extern const Kernels kKernels;
}
#endif

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::sse2:
      return "sse2";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

const Kernels* kernels_for(Isa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::sse2:
      return &sse2::kKernels;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? &avx2::kKernels
                                                                             : nullptr;
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") ? &avx512::kKernels : nullptr;
  }
#endif
  (void)isa;
  return nullptr;
}

namespace {

const Kernels* choose() {
  int cap = int(Isa::avx512);
  if (const char* env = std::getenv("STRATA_ISA")) {
    for (Isa isa : {Isa::sse2, Isa::avx2, Isa::avx512}) {
      if (std::strcmp(env, isa_name(isa)) == 0) cap = int(isa);
    }
  }
  for (int i = cap; i >= 0; --i) {
    if (const Kernels* k = kernels_for(Isa(i))) return k;
  }
  return nullptr;
}

// The portable build of the sums, for CPUs without any of the vmath builds.
namespace portable {
#include "raw/cpu/vmath_scan.inc"  // first_outside_scan
#include "raw/cpu/vmath_sum.inc"   // sum_blocks, sum_columns_blocks
}  // namespace portable

}  // namespace

const Kernels* best() {
  static const Kernels* const k = choose();
  return k;
}

// The CPU's build of the sums (the same arithmetic in every build), or the
// portable one off x86-64.
double sum(const float* x, int64_t n) {
  if (const Kernels* k = best()) return k->sum_f32(x, n);
  return portable::sum_blocks(x, n);
}
double sum(const double* x, int64_t n) {
  if (const Kernels* k = best()) return k->sum_f64(x, n);
  return portable::sum_blocks(x, n);
}
void sum_columns(const float* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  if (const Kernels* k = best()) return k->sum_columns_f32(x, rows, ld, cols, acc);
  portable::sum_columns_blocks(x, rows, ld, cols, acc);
}
void sum_columns(const double* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  if (const Kernels* k = best()) return k->sum_columns_f64(x, rows, ld, cols, acc);
  portable::sum_columns_blocks(x, rows, ld, cols, acc);
}

bool extreme(const float* x, int64_t n, bool min, float* out) {
  if (const Kernels* k = best()) return k->extreme_f32[min](x, n, out);
  return min ? portable::extreme_blocks<true>(x, n, out)
             : portable::extreme_blocks<false>(x, n, out);
}
bool extreme(const double* x, int64_t n, bool min, double* out) {
  if (const Kernels* k = best()) return k->extreme_f64[min](x, n, out);
  return min ? portable::extreme_blocks<true>(x, n, out)
             : portable::extreme_blocks<false>(x, n, out);
}

int64_t first_outside(const int64_t* v, int64_t n, int64_t lo, int64_t hi) {
  if (const Kernels* k = best()) return k->first_outside(v, n, lo, hi);
  return portable::first_outside_scan(v, n, lo, hi);
}

}  // namespace strata::detail::vmath
