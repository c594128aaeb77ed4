// SPDX-License-Identifier: MIT
// CUDA matmul: out[..., m, n] = a[..., m, k] @ b[..., k, n].
//
// f32/f64 go to cuBLAS. cuBLAS is column-major, so the row-major product is
// computed as out^T = b^T a^T: each operand's last two strides say whether it
// is row-major (op N) or column-major (op T) and give its leading dimension,
// so transposed and column-sliced views are read in place. An operand whose
// strides fit neither (e.g. both > 1) is copied to contiguous first.
// Batch dims are merged (core/strided.hpp): the innermost merged batch dim
// is one strided-batched call (stride 0 for broadcast operands) and any outer
// ones are walked on the host — so permuted or non-uniform batch strides give
// a correct result, never a wrong one (reference/001).
// Integer products use a plain kernel with wrapping arithmetic, like the CPU.
#include "raw/cuda/common.cuh"

namespace strata::detail {
namespace {

/// How cuBLAS can read a rows x cols matrix with strides (s_row, s_col).
struct MatView {
  bool ok = false;
  bool row_major = false;
  int64_t ld = 0;
};

MatView mat_view(int64_t rows, int64_t cols, int64_t s_row, int64_t s_col) {
  const int64_t r = rows > 1 ? rows : 1, c = cols > 1 ? cols : 1;
  if ((cols == 1 || s_col == 1) && (rows == 1 || s_row >= c)) {
    return {true, true, rows == 1 ? c : s_row};
  }
  if ((rows == 1 || s_row == 1) && (cols == 1 || s_col >= r)) {
    return {true, false, cols == 1 ? r : s_col};
  }
  return {};
}

/// The batch part of a layout (all but the last two dims), with its offset.
Layout batch_layout(const Layout& l) {
  Layout b;
  b.offset = l.offset;
  for (int64_t d = 0; d + 2 < l.ndim(); ++d) {
    b.shape.push_back(l.shape[d]);
    b.strides.push_back(l.strides[d]);
  }
  return b;
}

template <class T>
void gemm_batched(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const T* a, MatView va,
                  long long sa, const T* b, MatView vb, long long sb, T* c, long long sc,
                  int64_t count) {
  const T one = 1, zero = 0;
  // out^T (n x m, ld n) = op(b) (n x k) * op(a) (k x m).
  const cublasOperation_t opb = vb.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t opa = va.row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  if constexpr (std::is_same_v<T, float>) {
    STRATA_CUBLAS_CHECK(cublasSgemmStridedBatched_64(h, opb, opa, n, m, k, &one, b, vb.ld, sb, a,
                                                     va.ld, sa, &zero, c, n, sc, count));
  } else {
    STRATA_CUBLAS_CHECK(cublasDgemmStridedBatched_64(h, opb, opa, n, m, k, &one, b, vb.ld, sb, a,
                                                     va.ld, sa, &zero, c, n, sc, count));
  }
}

template <class T>
__global__ void int_matmul_kernel(int64_t count, int64_t m, int64_t n, int64_t k, const T* a,
                                  int64_t sab, int64_t sam, int64_t sak, const T* b, int64_t sbb,
                                  int64_t sbk, int64_t sbn, T* c, int64_t scb) {
  using U = std::make_unsigned_t<T>;
  const int64_t total = count * m * n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t j = t % n, i = (t / n) % m, z = t / (m * n);
    U acc = 0;
    for (int64_t p = 0; p < k; ++p) {
      acc += U(a[z * sab + i * sam + p * sak]) * U(b[z * sbb + p * sbk + j * sbn]);
    }
    c[z * scb + i * n + j] = T(acc);
  }
}

template <class T>
void matmul_t(CudaBackend& be, const RawTensor& out, const RawTensor& a0, const RawTensor& b0) {
  const int64_t nd = out.ndim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a0.shape()[nd - 1];
  if (m == 0 || n == 0) return;
  if (k == 0) return be.fill(out, 0.0);
  RawTensor a = a0, b = b0;
  MatView va = mat_view(m, k, a.strides()[nd - 2], a.strides()[nd - 1]);
  MatView vb = mat_view(k, n, b.strides()[nd - 2], b.strides()[nd - 1]);
  if constexpr (std::is_floating_point_v<T>) {
    if (!va.ok) a = backend_contiguous(be, a), va = mat_view(m, k, k, 1);
    if (!vb.ok) b = backend_contiguous(be, b), vb = mat_view(k, n, n, 1);
  }
  const Layout ob = batch_layout(out.layout()), ab = batch_layout(a.layout()),
               bb = batch_layout(b.layout());
  const StridedPlan<3> plan = make_plan<3>(ob.shape, {&ob, &ab, &bb});
  const std::size_t last = plan.shape.size() - 1;
  const int64_t count = plan.shape[last];
  const int64_t so = plan.strides[0][last], sa = plan.strides[1][last], sb = plan.strides[2][last];
  T* pc = device_ptr<T>(out);
  const T* pa = device_ptr<T>(a);
  const T* pb = device_ptr<T>(b);
  // Walk the outer merged batch dims here; one call covers the innermost.
  Shape idx(last, 0);
  while (true) {
    int64_t oo = plan.offsets[0], ao = plan.offsets[1], bo = plan.offsets[2];
    for (std::size_t d = 0; d < last; ++d) {
      oo += idx[d] * plan.strides[0][d];
      ao += idx[d] * plan.strides[1][d];
      bo += idx[d] * plan.strides[2][d];
    }
    if constexpr (std::is_floating_point_v<T>) {
      gemm_batched<T>(static_cast<cublasHandle_t>(be.cublas()), m, n, k, pa + ao, va, sa, pb + bo,
                      vb, sb, pc + oo, so, count);
    } else {
      const int64_t nd2 = nd - 2;
      int_matmul_kernel<T><<<blocks_for(count * m * n), kThreads>>>(
          count, m, n, k, pa + ao, sa, a.strides()[nd2], a.strides()[nd2 + 1], pb + bo, sb,
          b.strides()[nd2], b.strides()[nd2 + 1], pc + oo, so);
      STRATA_CUDA_LAUNCHED();
    }
    std::size_t d = last;
    for (; d-- > 0;) {
      if (++idx[d] < plan.shape[d]) break;
      idx[d] = 0;
    }
    if (d == std::size_t(-1)) break;
  }
}

}  // namespace

void CudaBackend::matmul(const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "matmul", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) matmul_t<T>(*this, out, a, b);
  });
}

}  // namespace strata::detail
