// SPDX-License-Identifier: MIT
// CPU eigh, SVD and QR (Backend::eigh, svd, qr) through OpenBLAS's LAPACK
// (raw/cpu/lapack.hpp): syevd, gesdd and geqrf + orgqr, the routines NumPy
// and PyTorch call. Each matrix is one single-threaded call; batch elements
// are spread over strata's pool, so results do not depend on the thread count.
//
// Layouts (LAPACK is column-major; see raw/cpu/linalg_support.hpp):
// - eigh: A's lower triangle is copied into V's row-major buffer, syevd("U")
//   leaves the eigenvectors there column-major, and V is transposed in place.
// - svd: the row-major copy of A (m x n) is the column-major A^T (n x m), and
//   A^T = V S U^T, so gesdd on it writes its U (n x k, column-major) straight
//   into Vh's row-major buffer and its VT (k x m) into U's: no transposes.
// - qr: A is copied column-major; geqrf leaves R in its upper triangle and
//   orgqr makes Q from the reflectors below it; both are copied out row-major.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/linalg_support.hpp"

namespace strata::detail {
namespace {

template <class T>
void eigh_typed(const RawTensor& w, const RawTensor& v, const RawTensor& a, const RawTensor& info) {
  const Lapack& lib = lapack("eigh");
  const LapackFns<T>& f = lib.fns<T>();
  const int n = lapack_dim(v.shape()[v.ndim() - 1], "eigh");
  const std::vector<int64_t> offsets = batch_offsets(a, a.ndim() - 2);
  T* vals = data_of<T>(w);
  T* vecs = data_of<T>(v);
  int32_t* codes = data_of<int32_t>(info);
  // Workspace sizes from a query (lwork = liwork = -1).
  std::vector<T> probe(static_cast<std::size_t>(n) * n, T(0)), wprobe(static_cast<std::size_t>(n));
  T lwork_q = 0;
  int liwork_q = 0, q_info = 0;
  const int query = -1;
  f.syevd("V", "U", &n, probe.data(), &n, wprobe.data(), &lwork_q, &query, &liwork_q, &query,
          &q_info, 1, 1);
  const int lwork = workspace_size(lwork_q, "eigh"), liwork = std::max(1, liwork_q);
  const double flops = 9.0 * n * n * n;
  for_each_matrix(lib, int64_t(offsets.size()), flops, [&](int64_t lo, int64_t hi) {
    std::vector<T> work(static_cast<std::size_t>(lwork), T(0));
    std::vector<int> iwork(static_cast<std::size_t>(liwork), 0);
    for (int64_t b = lo; b < hi; ++b) {
      T* m = vecs + b * int64_t(n) * n;
      codes[b] = 0;
      if (!copy_part(matrix_at<T>(a, offsets[static_cast<std::size_t>(b)]), Part::lower, m, n, 1)) {
        codes[b] = kNonFinite;
        continue;
      }
      int code = 0;
      f.syevd("V", "U", &n, m, &n, vals + b * n, work.data(), &lwork, iwork.data(), &liwork, &code,
              1, 1);
      codes[b] = code;
      transpose_square(m, n);
    }
  });
}

template <class T>
void svd_typed(const RawTensor& u, const RawTensor& s, const RawTensor& vh, const RawTensor& a,
               const RawTensor& info) {
  const Lapack& lib = lapack("svd");
  const LapackFns<T>& f = lib.fns<T>();
  const int64_t nd = a.ndim();
  const int m = lapack_dim(a.shape()[nd - 2], "svd"), n = lapack_dim(a.shape()[nd - 1], "svd");
  const int k = std::min(m, n);
  const std::vector<int64_t> offsets = batch_offsets(a, nd - 2);
  T *uo = data_of<T>(u), *so = data_of<T>(s), *vo = data_of<T>(vh);
  int32_t* codes = data_of<int32_t>(info);
  // gesdd on A^T: M' = n rows, N' = m columns.
  std::vector<T> probe(static_cast<std::size_t>(m) * n, T(0)), sp(static_cast<std::size_t>(k)),
      up(static_cast<std::size_t>(n) * k), vp(static_cast<std::size_t>(k) * m);
  std::vector<int> ip(static_cast<std::size_t>(8) * k);
  T lwork_q = 0;
  int q_info = 0;
  const int query = -1;
  f.gesdd("S", &n, &m, probe.data(), &n, sp.data(), up.data(), &n, vp.data(), &k, &lwork_q, &query,
          ip.data(), &q_info, 1);
  const int lwork = workspace_size(lwork_q, "svd");
  const double flops = 14.0 * double(std::max(m, n)) * k * k;
  for_each_matrix(lib, int64_t(offsets.size()), flops, [&](int64_t lo, int64_t hi) {
    std::vector<T> copy(static_cast<std::size_t>(m) * n), work(static_cast<std::size_t>(lwork));
    std::vector<int> iwork(static_cast<std::size_t>(8) * k);
    for (int64_t b = lo; b < hi; ++b) {
      codes[b] = 0;
      if (!copy_part(matrix_at<T>(a, offsets[static_cast<std::size_t>(b)]), Part::all, copy.data(),
                     n, 1)) {
        codes[b] = kNonFinite;
        continue;
      }
      int code = 0;
      f.gesdd("S", &n, &m, copy.data(), &n, so + b * k, vo + b * int64_t(k) * n, &n,
              uo + b * int64_t(m) * k, &k, work.data(), &lwork, iwork.data(), &code, 1);
      codes[b] = code;
    }
  });
}

template <class T>
void qr_typed(const RawTensor& q, const RawTensor& r, const RawTensor& a, const RawTensor& info) {
  const Lapack& lib = lapack("qr");
  const LapackFns<T>& f = lib.fns<T>();
  const int64_t nd = a.ndim();
  const int m = lapack_dim(a.shape()[nd - 2], "qr"), n = lapack_dim(a.shape()[nd - 1], "qr");
  const int k = std::min(m, n);
  const std::vector<int64_t> offsets = batch_offsets(a, nd - 2);
  T *qo = data_of<T>(q), *ro = data_of<T>(r);
  int32_t* codes = data_of<int32_t>(info);
  std::vector<T> probe(static_cast<std::size_t>(m) * n, T(0)), tp(static_cast<std::size_t>(k));
  T q1 = 0, q2 = 0;
  int q_info = 0;
  const int query = -1;
  f.geqrf(&m, &n, probe.data(), &m, tp.data(), &q1, &query, &q_info);
  f.orgqr(&m, &k, &k, probe.data(), &m, tp.data(), &q2, &query, &q_info);
  const int lwork = std::max(workspace_size(q1, "qr"), workspace_size(q2, "qr"));
  const double flops = 4.0 * double(m) * n * k;
  for_each_matrix(lib, int64_t(offsets.size()), flops, [&](int64_t lo, int64_t hi) {
    std::vector<T> c(static_cast<std::size_t>(m) * n), tau(static_cast<std::size_t>(k)),
        work(static_cast<std::size_t>(lwork));
    for (int64_t b = lo; b < hi; ++b) {
      codes[b] = 0;
      // Column-major A: (i, j) at c[i + j m].
      if (!copy_column_major(matrix_at<T>(a, offsets[static_cast<std::size_t>(b)]), c.data())) {
        codes[b] = kNonFinite;
        continue;
      }
      int code = 0;
      f.geqrf(&m, &n, c.data(), &m, tau.data(), work.data(), &lwork, &code);
      T* rb = ro + b * int64_t(k) * n;
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < n; ++j)
          rb[i * n + j] = j >= i ? c[static_cast<std::size_t>(i + j * m)] : T(0);
      }
      f.orgqr(&m, &k, &k, c.data(), &m, tau.data(), work.data(), &lwork, &code);
      T* qb = qo + b * int64_t(m) * k;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < k; ++j) qb[i * k + j] = c[static_cast<std::size_t>(i + j * m)];
      }
    }
  });
}

}  // namespace

void CpuBackend::eigh(const RawTensor& w, const RawTensor& v, const RawTensor& a,
                      const RawTensor& info) {
  if (v.dtype() == DType::f32) return eigh_typed<float>(w, v, a, info);
  eigh_typed<double>(w, v, a, info);
}

void CpuBackend::svd(const RawTensor& u, const RawTensor& s, const RawTensor& vh,
                     const RawTensor& a, const RawTensor& info) {
  if (u.dtype() == DType::f32) return svd_typed<float>(u, s, vh, a, info);
  svd_typed<double>(u, s, vh, a, info);
}

void CpuBackend::qr(const RawTensor& q, const RawTensor& r, const RawTensor& a,
                    const RawTensor& info) {
  if (q.dtype() == DType::f32) return qr_typed<float>(q, r, a, info);
  qr_typed<double>(q, r, a, info);
}

}  // namespace strata::detail
