// SPDX-License-Identifier: MIT
#pragma once
/// What the CUDA factorisations share (raw/cuda/linalg_factor.cu,
/// linalg_spectral.cu): cuSOLVER status checks, the scratch tensors, the
/// batch's pointer arrays, and the kernels around the library calls: the scan
/// for NaNs and infinities in the part of a matrix an op reads, zeroing a
/// triangle, and merging those flags with cuSOLVER's devInfo into the info
/// tensor the front end reads (raw/backend.hpp).
///
/// Layouts: cuSOLVER and cuBLAS are column-major. A contiguous row-major
/// buffer is the column-major transpose, and the backend's strided copy
/// (CudaBackend::copy into a view with the last two strides swapped) turns
/// any input into either, so no op reads an input in a layout it cannot.
#include <cusolverDn.h>

#include <climits>
#include <cstdint>
#include <vector>

#include "core/strided.hpp"
#include "raw/cuda/common.cuh"

namespace strata::detail {

inline void cusolver_check(cusolverStatus_t status, const char* call, const char* file, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS) {
    fail<DeviceError>("cusolver", call, " failed at ", file, ":", line, " (status ", int(status),
                      ")");
  }
}
#define STRATA_CUSOLVER_CHECK(call) \
  ::strata::detail::cusolver_check((call), #call, __FILE__, __LINE__)

/// The cuSOLVER handle of the backend's device (created on first use).
inline cusolverDnHandle_t solver(CudaBackend& be) {
  return static_cast<cusolverDnHandle_t>(be.cusolver());
}
inline cublasHandle_t blas(CudaBackend& be) { return static_cast<cublasHandle_t>(be.cublas()); }

/// The elements of one matrix an op reads (as raw/cpu/linalg_support.hpp's Part).
enum class Part : int { all, lower, upper, strict_lower, strict_upper };

__host__ __device__ inline bool in_part(Part p, int64_t i, int64_t j) {
  switch (p) {
    case Part::all:
      return true;
    case Part::lower:
      return i >= j;
    case Part::upper:
      return i <= j;
    case Part::strict_lower:
      return i > j;
    case Part::strict_upper:
      return i < j;
  }
  return true;
}

/// Batch element b's matrix: element (i, j) at ptrs[b][i * rs + j * cs].
template <class T>
struct Matrices {
  T* const* ptrs;
  int64_t rows, cols, rs, cs;
};

/// flags[b] = code where matrix b holds a NaN or an infinity in `part` (flags start at 0).
template <class T>
__global__ void scan_nonfinite(Matrices<const T> m, int64_t count, Part part, int32_t code,
                               int32_t* flags) {
  const int64_t per = m.rows * m.cols, total = per * count;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t b = e / per, i = (e % per) / m.cols, j = e % m.cols;
    if (in_part(part, i, j) && !isfinite(m.ptrs[b][i * m.rs + j * m.cs])) flags[b] = code;
  }
}

/// first[b] = min(first[b], 1 + i) for every zero diagonal element i of matrix b.
template <class T>
__global__ void scan_zero_diagonal(Matrices<const T> m, int64_t count, int32_t* first) {
  const int64_t total = m.rows * count;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t b = e / m.rows, i = e % m.rows;
    if (m.ptrs[b][i * (m.rs + m.cs)] == T(0)) atomicMin(first + b, int32_t(i + 1));
  }
}

/// Zeroes `part` of the contiguous row-major matrices x[count, rows, cols].
template <class T>
__global__ void zero_part(T* x, int64_t count, int64_t rows, int64_t cols, Part part) {
  const int64_t per = rows * cols, total = per * count;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    if (in_part(part, (e % per) / cols, e % cols)) x[e] = T(0);
  }
}

/// info[b]: the first of flags[b] (a negative LinAlgInfo code), first_zero[b] (when below
/// INT_MAX) and dev_info[b] (cuSOLVER's: positive is a failure, negative, a bad argument,
/// cannot happen after the front end's checks and is passed on as INT_MAX); any may be null.
static __global__ void merge_info(int32_t* info, const int32_t* flags, const int32_t* first_zero,
                                  const int32_t* flags_b, const int* dev_info, int64_t count) {
  const int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= count) return;
  int32_t code = 0;
  if (dev_info && dev_info[b] != 0) code = dev_info[b] > 0 ? dev_info[b] : INT_MAX;
  if (flags_b && flags_b[b] != 0) code = flags_b[b];
  if (first_zero && first_zero[b] != INT_MAX) code = first_zero[b];
  if (flags && flags[b] != 0) code = flags[b];
  info[b] = code;
}

/// A scratch tensor of count elements of dtype on the backend's device.
inline RawTensor scratch(CudaBackend& be, int64_t count, DType dtype) {
  return backend_empty(be, Shape{count > 0 ? count : 1}, dtype);
}

/// A zero-filled i32 scratch of count elements (flags, devInfo).
inline RawTensor zeroed_ints(CudaBackend& be, int64_t count, int value = 0) {
  RawTensor t = scratch(be, count, DType::i32);
  if (value == 0) {
    STRATA_CUDA_CHECK(cudaMemsetAsync(t.storage()->data(), 0, std::size_t(count) * 4));
  } else {
    be.fill(t, double(value));
  }
  return t;
}

/// The storage offsets (elements) of t's matrices, the batch dims (all but the last two)
/// walked in row-major order.
inline std::vector<int64_t> matrix_offsets(const RawTensor& t) {
  Layout batch{Shape(t.shape().begin(), t.shape().end() - 2),
               Strides(t.strides().begin(), t.strides().end() - 2), t.offset()};
  std::vector<int64_t> out;
  out.reserve(std::size_t(batch.numel()));
  for_each_block(make_plan<1>(batch.shape, {&batch}), 0, batch.numel(),
                 [&](const auto& off, int64_t n, const auto& st) {
                   for (int64_t i = 0; i < n; ++i) out.push_back(off[0] + i * st[0]);
                 });
  return out;
}

/// A device array of pointers to t's matrices (at the given storage offsets), for the batched
/// library calls; `holder` keeps its memory.
template <class T>
T** pointer_array(CudaBackend& be, const RawTensor& t, const std::vector<int64_t>& offsets,
                  RawTensor& holder) {
  std::vector<T*> host(offsets.size());
  T* base = static_cast<T*>(t.storage()->data());
  for (std::size_t i = 0; i < offsets.size(); ++i) host[i] = base + offsets[i];
  holder = scratch(be, int64_t(host.size()), DType::i64);
  STRATA_CUDA_CHECK(cudaMemcpy(holder.storage()->data(), host.data(), host.size() * sizeof(T*),
                               cudaMemcpyHostToDevice));
  return static_cast<T**>(holder.storage()->data());
}

/// Offsets of count contiguous matrices of `per` elements.
inline std::vector<int64_t> packed_offsets(int64_t count, int64_t per) {
  std::vector<int64_t> out(static_cast<std::size_t>(count));
  for (int64_t b = 0; b < count; ++b) out[std::size_t(b)] = b * per;
  return out;
}

/// A view of logical shape `shape` ([batch..., rows, cols]) of buf's contiguous matrices of
/// `per` elements each: element (i, j) of matrix b at b per + i rs + j cs.
inline RawTensor matrices_view(const RawTensor& buf, const Shape& shape, int64_t per, int64_t rs,
                               int64_t cs) {
  const int64_t nd = shape.ndim();
  Layout l = Layout::contiguous(shape);
  l.offset = buf.offset();
  l.strides[std::size_t(nd - 2)] = rs;
  l.strides[std::size_t(nd - 1)] = cs;
  int64_t stride = per;
  for (int64_t d = nd - 3; d >= 0; --d) {
    l.strides[std::size_t(d)] = stride;
    stride *= shape[std::size_t(d)];
  }
  return buf.view(l);
}

/// The view of a contiguous buffer of [batch..., rows, cols] elements as column-major
/// matrices of shape `shape` (element (i, j) of matrix b at b rows cols + i + j rows).
inline RawTensor column_major_view(const RawTensor& buf, const Shape& shape) {
  const int64_t nd = shape.ndim(), rows = shape[nd - 2], cols = shape[nd - 1];
  return matrices_view(buf, shape, rows * cols, 1, rows);
}

/// Launches a grid-stride kernel over n elements.
inline unsigned grid_for(int64_t n) { return blocks_for(n > 0 ? n : 1); }

/// cuSOLVER's dimensions are ints.
inline int dim(int64_t n, std::string_view op) {
  if (n > INT_MAX) fail<ValueError>(op, "matrix dimension ", n, " is too large for cuSOLVER");
  return int(n);
}

}  // namespace strata::detail
