// SPDX-License-Identifier: MIT
#pragma once
/// Eigen's GEMM on one tile of a product: the one place strata calls it. It is
/// compiled three times: in raw/cpu/matmul.cpp for the baseline x86-64 (SSE2),
/// and in raw/cpu/gemm_avx2.cpp and gemm_avx512.cpp with those instruction
/// sets, chosen at run time like the vmath kernels. Eigen vectorises for the
/// flags a file is compiled with, so the baseline build multiplies f64 two
/// lanes at a time; the AVX-512 build, eight.
///
/// The ISA builds instantiate the same Eigen templates under the same names as
/// the baseline one; if the linker merged them, a CPU without AVX could run an
/// AVX copy. cmake/strata_cpu_deps.cmake therefore compiles each ISA object
/// with hidden symbols, then dissolves its section groups (COMDAT, which the
/// linker would merge by name) and makes every hidden symbol local (objcopy);
/// the test isa_gemm_symbols checks that only its kGemm table stays global.
#include <cstdint>

#define EIGEN_DONT_PARALLELIZE  // never Eigen's own OpenMP threads, even under -fopenmp
#include <Eigen/Core>

#include "raw/cpu/vmath.hpp"

namespace strata::detail {

/// One matrix operand: pointer to element (0, 0), rows, cols and how to read it.
template <class T>
struct Mat {
  const T* data;
  int64_t rows, cols;
  int64_t ld;      // leading dimension (stride between rows or columns)
  bool row_major;  // true: element (i, j) at i * ld + j; false: at i + j * ld
};

/// A read-only strided view of a matrix stored in Eigen order Order.
template <class T, int Order>
using EigenMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, 0,
                            Eigen::OuterStride<>>;

/// c[rows r0..r1, cols c0..c1] = a[r0..r1, :] * b[:, c0..c1], c row-major with
/// leading dimension ldc, through Eigen's GEMM (single-threaded).
template <class T>
void eigen_gemm(const Mat<T>& a, const Mat<T>& b, T* c, int64_t ldc, int64_t r0, int64_t r1,
                int64_t c0, int64_t c1) {
  using Out = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                         Eigen::OuterStride<>>;
  const int64_t k = a.cols;
  Out C(c + r0 * ldc + c0, r1 - r0, c1 - c0, Eigen::OuterStride<>(ldc));
  auto with_a = [&](const auto& A) {
    auto with_b = [&](const auto& B) {
      C.noalias() = A.middleRows(r0, r1 - r0) * B.middleCols(c0, c1 - c0);
    };
    if (b.row_major) {
      with_b(EigenMap<T, Eigen::RowMajor>(b.data, k, b.cols, Eigen::OuterStride<>(b.ld)));
    } else {
      with_b(EigenMap<T, Eigen::ColMajor>(b.data, k, b.cols, Eigen::OuterStride<>(b.ld)));
    }
  };
  if (a.row_major) {
    with_a(EigenMap<T, Eigen::RowMajor>(a.data, a.rows, k, Eigen::OuterStride<>(a.ld)));
  } else {
    with_a(EigenMap<T, Eigen::ColMajor>(a.data, a.rows, k, Eigen::OuterStride<>(a.ld)));
  }
}

/// eigen_gemm for f32 and f64, compiled for one instruction set.
struct GemmKernels {
  void (*f32)(const Mat<float>& a, const Mat<float>& b, float* c, int64_t ldc, int64_t r0,
              int64_t r1, int64_t c0, int64_t c1);
  void (*f64)(const Mat<double>& a, const Mat<double>& b, double* c, int64_t ldc, int64_t r0,
              int64_t r1, int64_t c0, int64_t c1);
};

#if defined(STRATA_HAVE_ISA_GEMM)
namespace gemm_avx2 {
/// eigen_gemm built with -mavx2 -mfma (raw/cpu/gemm_avx2.cpp).
[[gnu::visibility("default")]] extern const GemmKernels kGemm;
}  // namespace gemm_avx2
namespace gemm_avx512 {
/// eigen_gemm built with -mavx512f -mavx2 -mfma (raw/cpu/gemm_avx512.cpp).
[[gnu::visibility("default")]] extern const GemmKernels kGemm;
}  // namespace gemm_avx512
#endif

/// The build for instruction set `isa` (sse2: the baseline build), or nullptr
/// when this CPU or this build lacks it (raw/cpu/matmul.cpp).
const GemmKernels* gemm_kernels_for(vmath::Isa isa);

}  // namespace strata::detail
