// SPDX-License-Identifier: MIT
// CUDA eigh, SVD and QR (Backend::eigh, svd, qr) through cuSOLVER.
//
// - eigh: batches of matrices up to 32 x 32 (cuSOLVER's limit) go to one
//   syevjBatched call (Jacobi), anything else to a loop of syevd. A is copied
//   into V's row-major buffer, the column-major A^T = A whose upper triangle is
//   A's lower one; the eigenvectors come back column-major and are copied
//   row-major.
// - svd: the row-major copy of A is the column-major A^T = V S U^T, so the
//   library's U is our V (written straight into Vh's row-major buffer by the
//   economy gesvdj) and its V our U. Batches up to 32 x 32: gesvdjBatched,
//   which makes full U and V, copied down to k columns.
// - qr: a loop of geqrf and orgqr on a column-major copy.
// Statuses, devInfo and the scan for NaNs and infinities are merged into the
// info tensor (raw/cuda/linalg_common.cuh).
#include <algorithm>

#include "raw/cuda/linalg_common.cuh"

namespace strata::detail {
namespace {

constexpr int64_t kJacobiMax = 32;  // syevjBatched and gesvdjBatched take n <= 32
constexpr auto kVectors = CUSOLVER_EIG_MODE_VECTOR;
constexpr auto kUpper = CUBLAS_FILL_MODE_UPPER;

template <class T>
T* first(const RawTensor& t) {
  return static_cast<T*>(t.storage()->data()) + t.offset();
}

/// The parameters of the Jacobi routines, destroyed with the scope.
struct SyevjParams {
  syevjInfo_t p = nullptr;
  SyevjParams() { STRATA_CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&p)); }
  ~SyevjParams() { cusolverDnDestroySyevjInfo(p); }
};
struct GesvdjParams {
  gesvdjInfo_t p = nullptr;
  GesvdjParams() { STRATA_CUSOLVER_CHECK(cusolverDnCreateGesvdjInfo(&p)); }
  ~GesvdjParams() { cusolverDnDestroyGesvdjInfo(p); }
};

// Typed entry points.
#define STRATA_TYPED(name, S, D)              \
  template <class... A>                       \
  cusolverStatus_t name(float*, A... args) {  \
    return S(args...);                        \
  }                                           \
  template <class... A>                       \
  cusolverStatus_t name(double*, A... args) { \
    return D(args...);                        \
  }
STRATA_TYPED(syevd_size, cusolverDnSsyevd_bufferSize, cusolverDnDsyevd_bufferSize)
STRATA_TYPED(syevd, cusolverDnSsyevd, cusolverDnDsyevd)
STRATA_TYPED(syevj_batched_size, cusolverDnSsyevjBatched_bufferSize,
             cusolverDnDsyevjBatched_bufferSize)
STRATA_TYPED(syevj_batched, cusolverDnSsyevjBatched, cusolverDnDsyevjBatched)
STRATA_TYPED(gesvdj_size, cusolverDnSgesvdj_bufferSize, cusolverDnDgesvdj_bufferSize)
STRATA_TYPED(gesvdj, cusolverDnSgesvdj, cusolverDnDgesvdj)
STRATA_TYPED(gesvdj_batched_size, cusolverDnSgesvdjBatched_bufferSize,
             cusolverDnDgesvdjBatched_bufferSize)
STRATA_TYPED(gesvdj_batched, cusolverDnSgesvdjBatched, cusolverDnDgesvdjBatched)
STRATA_TYPED(geqrf_size, cusolverDnSgeqrf_bufferSize, cusolverDnDgeqrf_bufferSize)
STRATA_TYPED(geqrf, cusolverDnSgeqrf, cusolverDnDgeqrf)
STRATA_TYPED(orgqr_size, cusolverDnSorgqr_bufferSize, cusolverDnDorgqr_bufferSize)
STRATA_TYPED(orgqr, cusolverDnSorgqr, cusolverDnDorgqr)
#undef STRATA_TYPED

/// flags[b] = kNonFinite where matrix b (count contiguous ones of rows x cols, element (i, j)
/// at i rs + j cs) holds a NaN or an infinity in part.
template <class T>
RawTensor scan(CudaBackend& be, const RawTensor& buf, int64_t count, int64_t rows, int64_t cols,
               int64_t rs, int64_t cs, Part part) {
  RawTensor hold;
  T** ptrs = pointer_array<T>(be, buf, packed_offsets(count, rows * cols), hold);
  RawTensor flags = zeroed_ints(be, count);
  scan_nonfinite<T><<<grid_for(count * rows * cols), kThreads>>>(
      Matrices<const T>{ptrs, rows, cols, rs, cs}, count, part, kNonFinite, first<int32_t>(flags));
  STRATA_CUDA_LAUNCHED();
  return flags;
}

void merge(const RawTensor& info, const RawTensor& flags, const RawTensor* dev) {
  const int64_t count = info.numel();
  merge_info<<<grid_for(count), kThreads>>>(first<int32_t>(info), first<int32_t>(flags), nullptr,
                                            nullptr, dev ? first<int>(*dev) : nullptr, count);
  STRATA_CUDA_LAUNCHED();
}

template <class T>
void eigh_typed(CudaBackend& be, const RawTensor& w, const RawTensor& v, const RawTensor& a,
                const RawTensor& info) {
  const int64_t count = info.numel();
  const int n = dim(v.shape()[v.ndim() - 1], "eigh");
  be.copy(v, a);
  T* base = first<T>(v);
  T* vals = first<T>(w);
  const RawTensor flags = scan<T>(be, v, count, n, n, n, 1, Part::lower);
  const RawTensor dev = zeroed_ints(be, count);
  int* dev_info = first<int>(dev);
  cusolverDnHandle_t h = solver(be);
  int lwork = 0;
  if (count > 1 && n <= kJacobiMax) {
    SyevjParams params;
    STRATA_CUSOLVER_CHECK(syevj_batched_size(base, h, kVectors, kUpper, n, base, n, vals, &lwork,
                                             params.p, int(count)));
    const RawTensor work = scratch(be, lwork, v.dtype());
    STRATA_CUSOLVER_CHECK(syevj_batched(base, h, kVectors, kUpper, n, base, n, vals, first<T>(work),
                                        lwork, dev_info, params.p, int(count)));
  } else {
    STRATA_CUSOLVER_CHECK(syevd_size(base, h, kVectors, kUpper, n, base, n, vals, &lwork));
    const RawTensor work = scratch(be, lwork, v.dtype());
    for (int64_t b = 0; b < count; ++b) {
      STRATA_CUSOLVER_CHECK(syevd(base, h, kVectors, kUpper, n, base + b * n * n, n, vals + b * n,
                                  first<T>(work), lwork, dev_info + b));
    }
  }
  // The eigenvectors are the columns of column-major matrices: copy them out row-major.
  const RawTensor cols = backend_empty(be, v.shape(), v.dtype());
  be.copy(cols, v);
  be.copy(v, column_major_view(cols, v.shape()));
  merge(info, flags, &dev);
}

template <class T>
void svd_typed(CudaBackend& be, const RawTensor& u, const RawTensor& s, const RawTensor& vh,
               const RawTensor& a, const RawTensor& info) {
  const int64_t count = info.numel(), nd = a.ndim();
  const int m = dim(a.shape()[nd - 2], "svd"), n = dim(a.shape()[nd - 1], "svd");
  const int k = std::min(m, n);
  // The row-major copy of A: the column-major A^T, n x m with leading dimension n.
  const RawTensor at = backend_empty(be, a.shape(), a.dtype());
  be.copy(at, a);
  T* base = first<T>(at);
  T* sv = first<T>(s);
  const RawTensor flags = scan<T>(be, at, count, m, n, n, 1, Part::all);
  const RawTensor dev = zeroed_ints(be, count);
  int* dev_info = first<int>(dev);
  cusolverDnHandle_t h = solver(be);
  GesvdjParams params;
  int lwork = 0;
  if (count > 1 && std::max(m, n) <= kJacobiMax) {
    // Full U' (n x n) and V' (m x m) per matrix; their first k columns are V and U.
    const RawTensor uf = backend_empty(be, Shape{count, n, n}, a.dtype());
    const RawTensor vf = backend_empty(be, Shape{count, m, m}, a.dtype());
    STRATA_CUSOLVER_CHECK(gesvdj_batched_size(base, h, kVectors, n, m, base, n, sv, first<T>(uf), n,
                                              first<T>(vf), m, &lwork, params.p, int(count)));
    const RawTensor work = scratch(be, lwork, a.dtype());
    STRATA_CUSOLVER_CHECK(gesvdj_batched(base, h, kVectors, n, m, base, n, sv, first<T>(uf), n,
                                         first<T>(vf), m, first<T>(work), lwork, dev_info, params.p,
                                         int(count)));
    be.copy(vh, matrices_view(uf, vh.shape(), int64_t(n) * n, n, 1));
    be.copy(u, matrices_view(vf, u.shape(), int64_t(m) * m, 1, m));
  } else {
    // Economy: U' (n x k, leading dimension n) is Vh's row-major buffer itself.
    const RawTensor vk = backend_empty(be, Shape{count, m, k}, a.dtype());
    T* vh_base = first<T>(vh);
    STRATA_CUSOLVER_CHECK(gesvdj_size(base, h, kVectors, 1, n, m, base, n, sv, vh_base, n,
                                      first<T>(vk), m, &lwork, params.p));
    const RawTensor work = scratch(be, lwork, a.dtype());
    for (int64_t b = 0; b < count; ++b) {
      STRATA_CUSOLVER_CHECK(gesvdj(base, h, kVectors, 1, n, m, base + b * m * n, n, sv + b * k,
                                   vh_base + b * k * n, n, first<T>(vk) + b * m * k, m,
                                   first<T>(work), lwork, dev_info + b, params.p));
    }
    be.copy(u, matrices_view(vk, u.shape(), int64_t(m) * k, 1, m));
  }
  merge(info, flags, &dev);
}

template <class T>
void qr_typed(CudaBackend& be, const RawTensor& q, const RawTensor& r, const RawTensor& a,
              const RawTensor& info) {
  const int64_t count = info.numel(), nd = a.ndim();
  const int m = dim(a.shape()[nd - 2], "qr"), n = dim(a.shape()[nd - 1], "qr");
  const int k = std::min(m, n);
  const RawTensor c = backend_empty(be, a.shape(), a.dtype());
  be.copy(column_major_view(c, a.shape()), a);
  T* base = first<T>(c);
  const RawTensor flags = scan<T>(be, c, count, m, n, 1, m, Part::all);
  const RawTensor dev = zeroed_ints(be, count);  // geqrf and orgqr fail only on bad arguments
  const RawTensor tau = backend_empty(be, Shape{count, k}, a.dtype());
  cusolverDnHandle_t h = solver(be);
  int l1 = 0, l2 = 0;
  STRATA_CUSOLVER_CHECK(geqrf_size(base, h, m, n, base, m, &l1));
  STRATA_CUSOLVER_CHECK(orgqr_size(base, h, m, k, k, base, m, first<T>(tau), &l2));
  const int lwork = std::max(l1, l2);
  const RawTensor work = scratch(be, lwork, a.dtype());
  const int64_t per = int64_t(m) * n;
  for (int64_t b = 0; b < count; ++b) {
    STRATA_CUSOLVER_CHECK(geqrf(base, h, m, n, base + b * per, m, first<T>(tau) + b * k,
                                first<T>(work), lwork, first<int>(dev) + b));
  }
  be.copy(r, matrices_view(c, r.shape(), per, 1, m));
  zero_part<T><<<grid_for(r.numel()), kThreads>>>(first<T>(r), count, k, n, Part::strict_lower);
  STRATA_CUDA_LAUNCHED();
  for (int64_t b = 0; b < count; ++b) {
    STRATA_CUSOLVER_CHECK(orgqr(base, h, m, k, k, base + b * per, m, first<T>(tau) + b * k,
                                first<T>(work), lwork, first<int>(dev) + b));
  }
  be.copy(q, matrices_view(c, q.shape(), per, 1, m));
  merge(info, flags, nullptr);
}

}  // namespace

void CudaBackend::eigh(const RawTensor& w, const RawTensor& v, const RawTensor& a,
                       const RawTensor& info) {
  DeviceGuard guard(index_);
  if (v.dtype() == DType::f32) return eigh_typed<float>(*this, w, v, a, info);
  eigh_typed<double>(*this, w, v, a, info);
}

void CudaBackend::svd(const RawTensor& u, const RawTensor& s, const RawTensor& vh,
                      const RawTensor& a, const RawTensor& info) {
  DeviceGuard guard(index_);
  if (u.dtype() == DType::f32) return svd_typed<float>(*this, u, s, vh, a, info);
  svd_typed<double>(*this, u, s, vh, a, info);
}

void CudaBackend::qr(const RawTensor& q, const RawTensor& r, const RawTensor& a,
                     const RawTensor& info) {
  DeviceGuard guard(index_);
  if (q.dtype() == DType::f32) return qr_typed<float>(*this, q, r, a, info);
  qr_typed<double>(*this, q, r, a, info);
}

}  // namespace strata::detail
