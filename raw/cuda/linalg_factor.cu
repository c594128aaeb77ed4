// SPDX-License-Identifier: MIT
// CUDA Cholesky, LU, triangular solves and inverses from LU factors
// (Backend::cholesky, lu, triangular_solve, lu_inverse): cuSOLVER's potrf and
// getrf, cuBLAS's trsm.
//
// Batches of small matrices (n <= kBatchedMax) go to one batched call
// (potrfBatched, cuBLAS getrfBatched, trsmBatched); larger ones to a loop of
// the single-matrix routines, which are the fast ones for them.
// - cholesky: A is copied into L's row-major buffer, which cuSOLVER reads as
//   the upper triangle of the column-major A: potrf(UPPER) leaves U^T = L there.
// - lu: A is copied column-major into scratch, factorised there and copied
//   back row-major.
// - triangular_solve: b is copied into x (row-major: the column-major x^T);
//   A is read in place when it is row- or column-major, else copied
//   (raw/cpu/linalg_solve.cpp derives the trsm arguments for each case).
// - lu_inverse: the factors are copied row-major (the column-major packed^T:
//   U^T below, L^T above), x^T = P^T L^-T U^-T is two trsm on the identity,
//   and P^T's row order is a scatter.
// Every status is checked; NaNs, infinities, zero pivots and cuSOLVER's
// devInfo are merged into the info tensor (raw/cuda/linalg_common.cuh).
#include "raw/cuda/linalg_common.cuh"

namespace strata::detail {
namespace {

constexpr int64_t kBatchedMax = 64;

// Typed entry points (S for float, D for double).
cusolverStatus_t potrf_size(cusolverDnHandle_t h, int n, float* a, int* lw) {
  return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, a, n, lw);
}
cusolverStatus_t potrf_size(cusolverDnHandle_t h, int n, double* a, int* lw) {
  return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, n, a, n, lw);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* a, float* w, int lw, int* info) {
  return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_UPPER, n, a, n, w, lw, info);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* a, double* w, int lw, int* info) {
  return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, n, a, n, w, lw, info);
}
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float** a, int* info, int count) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_UPPER, n, a, n, info, count);
}
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double** a, int* info, int count) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_UPPER, n, a, n, info, count);
}
cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, float* a, int* lw) {
  return cusolverDnSgetrf_bufferSize(h, n, n, a, n, lw);
}
cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, double* a, int* lw) {
  return cusolverDnDgetrf_bufferSize(h, n, n, a, n, lw);
}
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, float* a, float* w, int* piv, int* info) {
  return cusolverDnSgetrf(h, n, n, a, n, w, piv, info);
}
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, double* a, double* w, int* piv, int* info) {
  return cusolverDnDgetrf(h, n, n, a, n, w, piv, info);
}
cublasStatus_t getrf_batched(cublasHandle_t h, int n, float** a, int* piv, int* info, int count) {
  return cublasSgetrfBatched(h, n, a, n, piv, info, count);
}
cublasStatus_t getrf_batched(cublasHandle_t h, int n, double** a, int* piv, int* info, int count) {
  return cublasDgetrfBatched(h, n, a, n, piv, info, count);
}
struct TrsmArgs {
  cublasSideMode_t side;
  cublasFillMode_t uplo;
  cublasOperation_t trans;
  cublasDiagType_t diag;
  int m, n, lda, ldb;
};
cublasStatus_t trsm(cublasHandle_t h, const TrsmArgs& t, const float* a, float* b) {
  const float one = 1;
  return cublasStrsm(h, t.side, t.uplo, t.trans, t.diag, t.m, t.n, &one, a, t.lda, b, t.ldb);
}
cublasStatus_t trsm(cublasHandle_t h, const TrsmArgs& t, const double* a, double* b) {
  const double one = 1;
  return cublasDtrsm(h, t.side, t.uplo, t.trans, t.diag, t.m, t.n, &one, a, t.lda, b, t.ldb);
}
cublasStatus_t trsm_batched(cublasHandle_t h, const TrsmArgs& t, float* const* a, float* const* b,
                            int count) {
  const float one = 1;
  return cublasStrsmBatched(h, t.side, t.uplo, t.trans, t.diag, t.m, t.n, &one, a, t.lda, b, t.ldb,
                            count);
}
cublasStatus_t trsm_batched(cublasHandle_t h, const TrsmArgs& t, double* const* a, double* const* b,
                            int count) {
  const double one = 1;
  return cublasDtrsmBatched(h, t.side, t.uplo, t.trans, t.diag, t.m, t.n, &one, a, t.lda, b, t.ldb,
                            count);
}

template <class T>
T* first(const RawTensor& t) {
  return static_cast<T*>(t.storage()->data()) + t.offset();
}

/// pivots (0-based, i64) and the permutation they make, from getrf's 1-based int pivots.
__global__ void pivots_from_ipiv(const int* ipiv, int64_t* piv, int64_t* perm, int64_t count,
                                 int64_t n) {
  const int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= count) return;
  for (int64_t i = 0; i < n; ++i) perm[b * n + i] = i;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = ipiv[b * n + i] - 1;
    piv[b * n + i] = p;
    const int64_t t = perm[b * n + i];
    perm[b * n + i] = perm[b * n + p];
    perm[b * n + p] = t;
  }
}

/// flags[b] = kBadPermutation where perm[b] (contiguous [count, n]) is not a permutation of
/// 0..n-1; seen is zeroed scratch of count n ints.
__global__ void check_permutation(const int64_t* perm, int32_t* seen, int32_t* flags, int64_t count,
                                  int64_t n) {
  const int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= count) return;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = perm[b * n + i];
    if (v < 0 || v >= n || seen[b * n + v]++ != 0) {
      flags[b] = kBadPermutation;
      return;
    }
  }
}

/// x[count] = the n x n identity (column- or row-major alike).
template <class T>
__global__ void fill_identity(T* x, int64_t count, int64_t n) {
  const int64_t total = count * n * n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    x[e] = (e % (n * n)) / n == e % n ? T(1) : T(0);
  }
}

/// Column-major dst[b][perm[b][i], j] = src[b][i, j]; rows whose perm entry is out of range
/// (flagged by check_permutation) are skipped.
template <class T>
__global__ void scatter_rows(T* dst, const T* src, const int64_t* perm, int64_t count, int64_t n) {
  const int64_t total = count * n * n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t b = e / (n * n), i = e % n, j = (e % (n * n)) / n;
    const int64_t p = perm[b * n + i];
    if (p >= 0 && p < n) dst[b * n * n + p + j * n] = src[e];
  }
}

template <class T>
void cholesky_typed(CudaBackend& be, const RawTensor& l, const RawTensor& a,
                    const RawTensor& info) {
  const int64_t count = info.numel();
  const int n = dim(l.shape()[l.ndim() - 1], "cholesky");
  be.copy(l, a);
  T* base = first<T>(l);
  RawTensor hold;
  T** ptrs = pointer_array<T>(be, l, packed_offsets(count, int64_t(n) * n), hold);
  const RawTensor flags = zeroed_ints(be, count), dev = zeroed_ints(be, count);
  const int64_t elems = count * n * n;
  scan_nonfinite<T><<<grid_for(elems), kThreads>>>(Matrices<const T>{ptrs, n, n, n, 1}, count,
                                                   Part::lower, kNonFinite, first<int32_t>(flags));
  STRATA_CUDA_LAUNCHED();
  cusolverDnHandle_t h = solver(be);
  int* dev_info = first<int>(dev);
  if (count > 1 && n <= kBatchedMax) {
    STRATA_CUSOLVER_CHECK(potrf_batched(h, n, ptrs, dev_info, int(count)));
  } else {
    int lwork = 0;
    STRATA_CUSOLVER_CHECK(potrf_size(h, n, base, &lwork));
    const RawTensor work = scratch(be, lwork, l.dtype());
    for (int64_t b = 0; b < count; ++b) {
      STRATA_CUSOLVER_CHECK(potrf(h, n, base + b * n * n, first<T>(work), lwork, dev_info + b));
    }
  }
  zero_part<T><<<grid_for(elems), kThreads>>>(base, count, n, n, Part::strict_upper);
  STRATA_CUDA_LAUNCHED();
  merge_info<<<grid_for(count), kThreads>>>(first<int32_t>(info), first<int32_t>(flags), nullptr,
                                            nullptr, dev_info, count);
  STRATA_CUDA_LAUNCHED();
}

template <class T>
void lu_typed(CudaBackend& be, const RawTensor& lu, const RawTensor& pivots, const RawTensor& perm,
              const RawTensor& a, const RawTensor& info) {
  const int64_t count = info.numel();
  const int n = dim(lu.shape()[lu.ndim() - 1], "lu");
  const RawTensor s = backend_empty(be, lu.shape(), lu.dtype());
  be.copy(column_major_view(s, lu.shape()), a);
  T* base = first<T>(s);
  RawTensor hold;
  T** ptrs = pointer_array<T>(be, s, packed_offsets(count, int64_t(n) * n), hold);
  const RawTensor flags = zeroed_ints(be, count), dev = zeroed_ints(be, count);
  const RawTensor ipiv = scratch(be, count * n, DType::i32);
  scan_nonfinite<T><<<grid_for(count * n * n), kThreads>>>(
      Matrices<const T>{ptrs, n, n, 1, n}, count, Part::all, kNonFinite, first<int32_t>(flags));
  STRATA_CUDA_LAUNCHED();
  int* dev_info = first<int>(dev);  // > 0 for a singular matrix: not an error (raw::lu)
  if (count > 1 && n <= kBatchedMax) {
    STRATA_CUBLAS_CHECK(getrf_batched(blas(be), n, ptrs, first<int>(ipiv), dev_info, int(count)));
  } else {
    cusolverDnHandle_t h = solver(be);
    int lwork = 0;
    STRATA_CUSOLVER_CHECK(getrf_size(h, n, base, &lwork));
    const RawTensor work = scratch(be, lwork, lu.dtype());
    for (int64_t b = 0; b < count; ++b) {
      STRATA_CUSOLVER_CHECK(
          getrf(h, n, base + b * n * n, first<T>(work), first<int>(ipiv) + b * n, dev_info + b));
    }
  }
  be.copy(lu, column_major_view(s, lu.shape()));
  pivots_from_ipiv<<<grid_for(count), kThreads>>>(first<int>(ipiv), first<int64_t>(pivots),
                                                  first<int64_t>(perm), count, n);
  STRATA_CUDA_LAUNCHED();
  merge_info<<<grid_for(count), kThreads>>>(first<int32_t>(info), first<int32_t>(flags), nullptr,
                                            nullptr, nullptr, count);
  STRATA_CUDA_LAUNCHED();
}

template <class T>
void triangular_solve_typed(CudaBackend& be, const RawTensor& x, const RawTensor& a,
                            const RawTensor& b, const TriangularSolve& opts,
                            const RawTensor& info) {
  constexpr std::string_view op = "triangular_solve";
  const int64_t count = info.numel(), nd = x.ndim();
  const int rows = dim(x.shape()[nd - 2], op), cols = dim(x.shape()[nd - 1], op);
  const int n = dim(a.shape()[nd - 1], op);
  be.copy(x, b);
  RawTensor hold_x, hold_a, hold_m, copy;
  T** xs = pointer_array<T>(be, x, packed_offsets(count, int64_t(rows) * cols), hold_x);
  T** as = pointer_array<T>(be, a, matrix_offsets(a), hold_a);
  const int64_t rs = a.strides()[nd - 2], cs = a.strides()[nd - 1];
  // How trsm reads A: as M = A (column-major) or M = A^T (row-major), ld its leading dimension.
  T** ms = as;
  bool m_is_a = true;
  int64_t ld = 1;
  if (n > 1 && rs == 1 && cs >= n && cs <= INT_MAX) {
    ld = cs;
  } else if (n > 1 && cs == 1 && rs >= n && rs <= INT_MAX) {
    ld = rs, m_is_a = false;
  } else if (n > 1) {
    copy = backend_empty(be, a.shape(), a.dtype());
    be.copy(copy, a);
    ms = pointer_array<T>(be, copy, packed_offsets(count, int64_t(n) * n), hold_m);
    ld = n, m_is_a = false;
  }
  const Part part = opts.lower ? (opts.unit_diagonal ? Part::strict_lower : Part::lower)
                               : (opts.unit_diagonal ? Part::strict_upper : Part::upper);
  const RawTensor flags = zeroed_ints(be, count), flags_b = zeroed_ints(be, count);
  const RawTensor zero = zeroed_ints(be, count, INT_MAX);
  scan_nonfinite<T><<<grid_for(count * n * n), kThreads>>>(
      Matrices<const T>{as, n, n, rs, cs}, count, part, kNonFinite, first<int32_t>(flags));
  STRATA_CUDA_LAUNCHED();
  if (!opts.unit_diagonal) {
    scan_zero_diagonal<T><<<grid_for(count * n), kThreads>>>(Matrices<const T>{as, n, n, rs, cs},
                                                             count, first<int32_t>(zero));
    STRATA_CUDA_LAUNCHED();
  }
  scan_nonfinite<T><<<grid_for(count * rows * cols), kThreads>>>(
      Matrices<const T>{xs, rows, cols, cols, 1}, count, Part::all, kNonFiniteB,
      first<int32_t>(flags_b));
  STRATA_CUDA_LAUNCHED();
  // x row-major is Xc = x^T (cols x rows, column-major): op(A) X = B is Xc op(A)^T = Bc.
  const TrsmArgs t{opts.left ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT,
                   opts.lower == m_is_a ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                   m_is_a != opts.transpose ? CUBLAS_OP_T : CUBLAS_OP_N,
                   opts.unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT,
                   cols,
                   rows,
                   int(ld),
                   cols};
  if (count == 1) {
    const T* m = copy.defined() ? first<T>(copy)
                                : static_cast<const T*>(a.storage()->data()) + matrix_offsets(a)[0];
    STRATA_CUBLAS_CHECK(trsm(blas(be), t, m, first<T>(x)));
  } else {
    STRATA_CUBLAS_CHECK(trsm_batched(blas(be), t, ms, xs, dim(count, op)));
  }
  merge_info<<<grid_for(count), kThreads>>>(first<int32_t>(info), first<int32_t>(flags),
                                            opts.unit_diagonal ? nullptr : first<int32_t>(zero),
                                            first<int32_t>(flags_b), nullptr, count);
  STRATA_CUDA_LAUNCHED();
}

template <class T>
void lu_inverse_typed(CudaBackend& be, const RawTensor& x, const RawTensor& lu,
                      const RawTensor& perm, const RawTensor& info) {
  constexpr std::string_view op = "lu_inverse";
  const int64_t count = info.numel();
  const int n = dim(x.shape()[x.ndim() - 1], op);
  const int64_t per = int64_t(n) * n;
  const RawTensor f = backend_empty(be, x.shape(), x.dtype());
  be.copy(f, lu);
  const RawTensor p = backend_empty(be, perm.shape(), DType::i64);
  be.copy(p, perm);
  const RawTensor z = backend_empty(be, x.shape(), x.dtype());
  RawTensor hold_f, hold_z;
  T** fs = pointer_array<T>(be, f, packed_offsets(count, per), hold_f);
  T** zs = pointer_array<T>(be, z, packed_offsets(count, per), hold_z);
  const RawTensor flags = zeroed_ints(be, count), seen = zeroed_ints(be, count * n);
  const RawTensor zero = zeroed_ints(be, count, INT_MAX);
  scan_nonfinite<T><<<grid_for(count * per), kThreads>>>(
      Matrices<const T>{fs, n, n, n, 1}, count, Part::all, kNonFinite, first<int32_t>(flags));
  STRATA_CUDA_LAUNCHED();
  scan_zero_diagonal<T><<<grid_for(count * n), kThreads>>>(Matrices<const T>{fs, n, n, n, 1}, count,
                                                           first<int32_t>(zero));
  STRATA_CUDA_LAUNCHED();
  check_permutation<<<grid_for(count), kThreads>>>(first<int64_t>(p), first<int32_t>(seen),
                                                   first<int32_t>(flags), count, n);
  STRATA_CUDA_LAUNCHED();
  fill_identity<T><<<grid_for(count * per), kThreads>>>(first<T>(z), count, n);
  STRATA_CUDA_LAUNCHED();
  // f row-major is the column-major packed^T: U^T is its lower triangle, L^T its upper one.
  const TrsmArgs u_t{
      CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n, n, n};
  const TrsmArgs l_t{
      CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, n, n, n};
  if (count == 1) {
    STRATA_CUBLAS_CHECK(trsm(blas(be), u_t, first<T>(f), first<T>(z)));
    STRATA_CUBLAS_CHECK(trsm(blas(be), l_t, first<T>(f), first<T>(z)));
  } else {
    STRATA_CUBLAS_CHECK(trsm_batched(blas(be), u_t, fs, zs, dim(count, op)));
    STRATA_CUBLAS_CHECK(trsm_batched(blas(be), l_t, fs, zs, dim(count, op)));
  }
  scatter_rows<T>
      <<<grid_for(count * per), kThreads>>>(first<T>(x), first<T>(z), first<int64_t>(p), count, n);
  STRATA_CUDA_LAUNCHED();
  merge_info<<<grid_for(count), kThreads>>>(first<int32_t>(info), first<int32_t>(flags),
                                            first<int32_t>(zero), nullptr, nullptr, count);
  STRATA_CUDA_LAUNCHED();
}

}  // namespace

void CudaBackend::lu_inverse(const RawTensor& x, const RawTensor& lu, const RawTensor& perm,
                             const RawTensor& info) {
  DeviceGuard guard(index_);
  if (x.dtype() == DType::f32) return lu_inverse_typed<float>(*this, x, lu, perm, info);
  lu_inverse_typed<double>(*this, x, lu, perm, info);
}

void CudaBackend::cholesky(const RawTensor& l, const RawTensor& a, const RawTensor& info) {
  DeviceGuard guard(index_);
  if (l.dtype() == DType::f32) return cholesky_typed<float>(*this, l, a, info);
  cholesky_typed<double>(*this, l, a, info);
}

void CudaBackend::lu(const RawTensor& lu, const RawTensor& pivots, const RawTensor& perm,
                     const RawTensor& a, const RawTensor& info) {
  DeviceGuard guard(index_);
  if (lu.dtype() == DType::f32) return lu_typed<float>(*this, lu, pivots, perm, a, info);
  lu_typed<double>(*this, lu, pivots, perm, a, info);
}

void CudaBackend::triangular_solve(const RawTensor& x, const RawTensor& a, const RawTensor& b,
                                   const TriangularSolve& opts, const RawTensor& info) {
  DeviceGuard guard(index_);
  if (x.dtype() == DType::f32) return triangular_solve_typed<float>(*this, x, a, b, opts, info);
  triangular_solve_typed<double>(*this, x, a, b, opts, info);
}

}  // namespace strata::detail
