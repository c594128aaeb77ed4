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
#include <cstddef>
#include <cstdint>
#include <type_traits>

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

/// Eigen's packing buffers (its blocks of A and B), kept per thread.
///
/// For one product Eigen's GEMM packs panels of A and B into two blocks,
/// which it takes from the stack up to EIGEN_STACK_ALLOCATION_LIMIT (128 KiB)
/// and otherwise mallocs and frees on every call. glibc hands blocks that big
/// back to the system when they are freed, so every such product paid a page
/// fault per 4 KiB of its blocks, which on CPUs where touching fresh memory is
/// slow cost more than the product.
/// KeptBlocking computes Eigen's own block sizes (those of gemm_blocking_space
/// for a row-major result on one thread) and points Eigen at a buffer this
/// thread keeps, so the kernel, the blocking and so the bits are Eigen's.
/// Eigen 3.4's internal level3_blocking API: other versions take Eigen's path.
template <class T>
class KeptBlocking : public Eigen::internal::level3_blocking<T, T> {
 public:
  /// Eigen's block sizes for the (rows x depth) * (depth x cols) product.
  KeptBlocking(int64_t rows, int64_t cols, int64_t depth) {
    // A row-major result is computed as its col-major transpose (Eigen swaps m and n).
    this->m_mc = cols;
    this->m_nc = rows;
    this->m_kc = depth;
    Eigen::internal::computeProductBlockingSizes<T, T, 1>(this->m_kc, this->m_mc, this->m_nc,
                                                          Eigen::Index{1});
  }
  /// Whether Eigen would malloc a block (larger than its stack limit) and the two
  /// fit the kept buffer's cap; then points the blocks at this thread's buffer.
  bool use_kept_buffer() {
    const std::size_t a = bytes(this->m_mc), b = bytes(this->m_nc);
    constexpr std::size_t kStack = EIGEN_STACK_ALLOCATION_LIMIT, kCap = std::size_t{8} << 20;
    if ((a <= kStack && b <= kStack) || a + b > kCap) return false;
    char* buf = kept_buffer(a + b);
    this->m_blockA = reinterpret_cast<T*>(buf);
    this->m_blockB = reinterpret_cast<T*>(buf + a);
    return true;
  }

 private:
  // A block of kc x n elements, rounded up to whole cache lines (B's block stays aligned).
  std::size_t bytes(Eigen::Index n) const {
    return (std::size_t(this->m_kc * n) * sizeof(T) + 63) / 64 * 64;
  }
  // This thread's buffer of at least `size` bytes, 64-byte aligned; it only grows.
  static char* kept_buffer(std::size_t size) {
    struct Buffer {
      void* data = nullptr;
      std::size_t size = 0;
      ~Buffer() { Eigen::internal::aligned_free(data); }
    };
    thread_local Buffer kept;
    if (kept.size < size) {
      Eigen::internal::aligned_free(kept.data);
      kept.data = nullptr;
      kept.size = 0;
      kept.data = Eigen::internal::aligned_malloc(size);  // throws std::bad_alloc, as Eigen's would
      kept.size = size;
    }
    return static_cast<char*>(kept.data);
  }
};

/// c[rows r0..r1, cols c0..c1] = a[r0..r1, :] * b[:, c0..c1], c row-major with
/// leading dimension ldc, through Eigen's GEMM (single-threaded).
template <class T>
void eigen_gemm(const Mat<T>& a, const Mat<T>& b, T* c, int64_t ldc, int64_t r0, int64_t r1,
                int64_t c0, int64_t c1) {
  using Out = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                         Eigen::OuterStride<>>;
  const int64_t k = a.cols;
  Out C(c + r0 * ldc + c0, r1 - r0, c1 - c0, Eigen::OuterStride<>(ldc));
  const int64_t m = r1 - r0, n = c1 - c0;
  auto with_a = [&](const auto& A) {
    auto with_b = [&](const auto& B) {
#if EIGEN_VERSION_AT_LEAST(3, 4, 0) && !EIGEN_VERSION_AT_LEAST(3, 4, 90)
      // Eigen's own GEMM path (not its vector or coefficient-wise one) with the kept blocks.
      if (m > 1 && n > 1 && k > 0 && k + m + n >= EIGEN_GEMM_TO_COEFFBASED_THRESHOLD) {
        KeptBlocking<T> blocking(m, n, k);
        if (blocking.use_kept_buffer()) {
          using AType = std::decay_t<decltype(A)>;
          using BType = std::decay_t<decltype(B)>;
          constexpr int kA = AType::IsRowMajor ? Eigen::RowMajor : Eigen::ColMajor;
          constexpr int kB = BType::IsRowMajor ? Eigen::RowMajor : Eigen::ColMajor;
          using Gemm =
              Eigen::internal::general_matrix_matrix_product<Eigen::Index, T, kA, false, T, kB,
                                                             false, Eigen::RowMajor, 1>;
          C.setZero();
          Gemm::run(m, n, k, a.data + (a.row_major ? r0 * a.ld : r0), a.ld,
                    b.data + (b.row_major ? c0 : c0 * b.ld), b.ld, C.data(), 1, ldc, T(1),
                    blocking);
          return;
        }
      }
#endif
      C.noalias() = A.middleRows(r0, m) * B.middleCols(c0, n);
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
