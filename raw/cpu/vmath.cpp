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

constexpr int64_t kBlock = 1024;  // elements per block of lane sums
constexpr int kLanes = 32;        // independent partial sums (as in vmath_impl.hpp's kSumLanes)

template <class T>
double sum_impl(const T* x, int64_t n) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    const T* p = x + b;
    T acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) acc[j] += p[i + j];
    }
    // Pairwise over the lanes, then the tail.
    for (int w = kLanes / 2; w > 0; w /= 2) {
      for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
    }
    double s = double(acc[0]);
    for (; i < m; ++i) s += double(p[i]);
    total += s;
  }
  return total;
}

template <class T>
void sum_columns_impl(const T* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  constexpr int64_t kRowBlock = 32;  // rows summed in T before adding into acc
  constexpr int64_t kColBlock = 512;
  T part[kColBlock];
  for (int64_t c0 = 0; c0 < cols; c0 += kColBlock) {
    const int64_t nc = std::min(kColBlock, cols - c0);
    for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const int64_t nr = std::min(kRowBlock, rows - r0);
      const T* p = x + r0 * ld + c0;
      for (int64_t j = 0; j < nc; ++j) part[j] = p[j];
      for (int64_t r = 1; r < nr; ++r) {
        const T* q = p + r * ld;
        for (int64_t j = 0; j < nc; ++j) part[j] += q[j];
      }
      double* a = acc + c0;
      for (int64_t j = 0; j < nc; ++j) a[j] += double(part[j]);
    }
  }
}

}  // namespace

const Kernels* best() {
  static const Kernels* const k = choose();
  return k;
}

// The CPU's build of the sums (the same arithmetic in every build), or the
// portable one off x86-64.
double sum(const float* x, int64_t n) {
  if (const Kernels* k = best()) return k->sum_f32(x, n);
  return sum_impl(x, n);
}
double sum(const double* x, int64_t n) {
  if (const Kernels* k = best()) return k->sum_f64(x, n);
  return sum_impl(x, n);
}
void sum_columns(const float* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  if (const Kernels* k = best()) return k->sum_columns_f32(x, rows, ld, cols, acc);
  sum_columns_impl(x, rows, ld, cols, acc);
}
void sum_columns(const double* x, int64_t rows, int64_t ld, int64_t cols, double* acc) {
  if (const Kernels* k = best()) return k->sum_columns_f64(x, rows, ld, cols, acc);
  sum_columns_impl(x, rows, ld, cols, acc);
}

}  // namespace strata::detail::vmath
