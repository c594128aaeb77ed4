// SPDX-License-Identifier: MIT
#pragma once
/// What every CUDA kernel file shares: status checks that throw DeviceError
/// (naming the call, file and line), the device guard, element conversion,
/// and the strided walk — N same-shaped operands of any rank, dims merged on
/// the host (core/strided.hpp), one thread per element.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "core/strided.hpp"
#include "raw/cuda/cuda_backend.hpp"

namespace strata::detail {

// --- status checks ----------------------------------------------------------------
inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    fail<DeviceError>("cuda", call, " failed at ", file, ":", line, ": ", cudaGetErrorName(status),
                      " (", cudaGetErrorString(status), ")");
  }
}
inline void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    fail<DeviceError>("cublas", call, " failed at ", file, ":", line, ": ",
                      cublasGetStatusString(status));
  }
}
#define STRATA_CUDA_CHECK(call) ::strata::detail::cuda_check((call), #call, __FILE__, __LINE__)
#define STRATA_CUBLAS_CHECK(call) ::strata::detail::cublas_check((call), #call, __FILE__, __LINE__)
/// After a kernel launch: a bad configuration shows up here.
#define STRATA_CUDA_LAUNCHED() STRATA_CUDA_CHECK(cudaGetLastError())

/// Makes `index` the current device for its scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index) {
    STRATA_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != index) STRATA_CUDA_CHECK(cudaSetDevice(index));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

template <class T>
T* device_ptr(const RawTensor& t) {
  return static_cast<T*>(t.storage()->data());
}

// --- the strided walk ------------------------------------------------------------
/// Merged dims a kernel decodes; plans with more are split on the host.
constexpr int kWalkDims = 8;
constexpr int kThreads = 256;

template <int N>
struct Offsets {
  int64_t v[N];
};

/// N operands over merged dims, outermost first.
template <int N>
struct Walk {
  int ndim = 0;
  int64_t shape[kWalkDims] = {};
  int64_t strides[N][kWalkDims] = {};
  int64_t base[N] = {};

  __device__ Offsets<N> at(int64_t i) const {
    Offsets<N> o;
    for (int k = 0; k < N; ++k) o.v[k] = base[k];
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i % shape[d];
      i /= shape[d];
      for (int k = 0; k < N; ++k) o.v[k] += q * strides[k][d];
    }
    return o;
  }
};

template <int N, class F>
__global__ void walk_kernel(Walk<N> w, int64_t n, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) f(w.at(i));
}

/// Every operand unit-stride: no index arithmetic beyond one add.
template <int N, class F>
__global__ void linear_kernel(Offsets<N> base, int64_t n, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Offsets<N> o;
    for (int k = 0; k < N; ++k) o.v[k] = base.v[k] + i;
    f(o);
  }
}

inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b < 65536 ? b : 65536);
}

/// Calls f(offsets) on the device for every element of `shape`, where
/// offsets.v[k] is the element's offset in operand k (layouts[k]).
template <int N, class F>
void launch_walk(const Shape& shape, const std::array<const Layout*, N>& layouts, F f) {
  const StridedPlan<N> plan = make_plan<N>(shape, layouts);
  if (plan.numel == 0) return;
  const int nd = int(plan.shape.size());
  bool linear = nd == 1;
  for (int k = 0; k < N && linear; ++k) linear = plan.strides[k][0] == 1;
  if (linear) {
    Offsets<N> base;
    for (int k = 0; k < N; ++k) base.v[k] = plan.offsets[k];
    linear_kernel<N><<<blocks_for(plan.numel), kThreads>>>(base, plan.numel, f);
    STRATA_CUDA_LAUNCHED();
    return;
  }
  // The innermost kWalkDims dims go to the kernel; any outer ones are walked here.
  const int inner = nd < kWalkDims ? nd : kWalkDims, outer = nd - inner;
  Walk<N> w;
  w.ndim = inner;
  int64_t count = 1;
  for (int d = 0; d < inner; ++d) {
    w.shape[d] = plan.shape[std::size_t(outer + d)];
    count *= w.shape[d];
    for (int k = 0; k < N; ++k) w.strides[k][d] = plan.strides[k][std::size_t(outer + d)];
  }
  Shape idx(std::size_t(outer), 0);
  while (true) {
    for (int k = 0; k < N; ++k) {
      w.base[k] = plan.offsets[k];
      for (int d = 0; d < outer; ++d)
        w.base[k] += idx[std::size_t(d)] * plan.strides[k][std::size_t(d)];
    }
    walk_kernel<N><<<blocks_for(count), kThreads>>>(w, count, f);
    STRATA_CUDA_LAUNCHED();
    int d = outer - 1;
    for (; d >= 0; --d) {
      if (++idx[std::size_t(d)] < plan.shape[std::size_t(d)]) break;
      idx[std::size_t(d)] = 0;
    }
    if (d < 0) break;
  }
}

}  // namespace strata::detail
