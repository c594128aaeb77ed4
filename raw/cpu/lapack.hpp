// SPDX-License-Identifier: MIT
#pragma once
/// The LAPACK and BLAS routines the CPU's factorisations call: OpenBLAS,
/// loaded at run time on first use (lapack()).
///
/// Why loaded rather than linked: OpenBLAS picks its kernels when it loads,
/// from OPENBLAS_CORETYPE or its own CPU detection, and 0.3.21 (Debian 12)
/// does not know every recent CPU (it falls back to slow generic kernels).
/// Loading it ourselves lets strata set OPENBLAS_CORETYPE to the instruction
/// set its own kernels use (STRATA_ISA caps both), unless the environment
/// already sets it, and load it with one thread (OPENBLAS_NUM_THREADS=1 for
/// the load only, so its thread pool never starts): strata's pool does the
/// parallel work in pieces fixed by the shapes, so that results have the same
/// bits for any thread count (DESIGN §8), which OpenBLAS's own threads do not
/// promise (its parallel potrf and getrf block differently from its serial
/// ones). RTLD_LOCAL keeps its symbols away from a BLAS the program links.
///
/// The routines are the Fortran ones (column-major, 32-bit integers), called
/// with the hidden length arguments of their character arguments, as gfortran
/// compiles them.
#include <cstddef>
#include <string>
#include <string_view>

namespace strata::detail {

/// One precision's routines (T = float: s..., double: d...).
template <class T>
struct LapackFns {
  using Ch = const char*;
  using I = const int*;
  using L = std::size_t;  // a hidden Fortran string length
  void (*potrf)(Ch uplo, I n, T* a, I lda, int* info, L) = nullptr;
  void (*trsm)(Ch side, Ch uplo, Ch transa, Ch diag, I m, I n, const T* alpha, const T* a, I lda,
               T* b, I ldb, L, L, L, L) = nullptr;
  void (*gemm)(Ch transa, Ch transb, I m, I n, I k, const T* alpha, const T* a, I lda, const T* b,
               I ldb, const T* beta, T* c, I ldc, L, L) = nullptr;
  void (*syrk)(Ch uplo, Ch trans, I n, I k, const T* alpha, const T* a, I lda, const T* beta, T* c,
               I ldc, L, L) = nullptr;
  void (*getrf)(I m, I n, T* a, I lda, int* ipiv, int* info) = nullptr;
  void (*laswp)(I n, T* a, I lda, I k1, I k2, const int* ipiv, I incx) = nullptr;
  void (*syevd)(Ch jobz, Ch uplo, I n, T* a, I lda, T* w, T* work, I lwork, int* iwork, I liwork,
                int* info, L, L) = nullptr;
  void (*gesdd)(Ch jobz, I m, I n, T* a, I lda, T* s, T* u, I ldu, T* vt, I ldvt, T* work, I lwork,
                int* iwork, int* info, L) = nullptr;
  void (*geqrf)(I m, I n, T* a, I lda, T* tau, T* work, I lwork, int* info) = nullptr;
  void (*orgqr)(I m, I n, I k, T* a, I lda, const T* tau, T* work, I lwork, int* info) = nullptr;
};

/// The loaded library.
struct Lapack {
  LapackFns<float> s;
  LapackFns<double> d;
  /// Whether several threads may call it at once (false for OpenBLAS's serial build, which
  /// has no locks: strata then calls it from one thread at a time).
  bool concurrent = true;
  std::string path;      ///< the library loaded
  std::string corename;  ///< the kernels OpenBLAS chose ("SkylakeX", "Haswell", ...)

  template <class T>
  const LapackFns<T>& fns() const {
    if constexpr (sizeof(T) == sizeof(float)) {
      return s;
    } else {
      return d;
    }
  }
};

/// OpenBLAS, loaded on the first call (thread-safe); DeviceError naming `op` when it cannot be
/// loaded (the message says which package installs it).
const Lapack& lapack(std::string_view op);

/// The largest dimension LAPACK's 32-bit integers take for an n x n workspace-sized problem;
/// the kernels throw ValueError past it.
inline constexpr long long kLapackMaxDim = 46340;  // 46340^2 < 2^31

}  // namespace strata::detail
