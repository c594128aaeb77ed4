// SPDX-License-Identifier: MIT
#pragma once
/// What every CUDA kernel file shares: status checks that throw DeviceError
/// (naming the call, file and line), the device guard, the strided walk (N
/// same-shaped operands of any rank, dims merged on the host by core/strided.hpp;
/// a kernel decodes up to kWalkDims of them and the host walks the rest; each
/// thread takes elements a grid apart) and the elementwise map built on it
/// (launch_map: each thread computes kUnroll elements before it stores any when
/// every operand is unit-stride). Element conversion and the arithmetic are the
/// CPU's functors (raw/scalar_ops.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

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

  /// The offsets of element i, for 0 <= i < the product of shape: the outermost
  /// dim's position is what is left of i, with no division.
  __device__ Offsets<N> at(int64_t i) const {
    Offsets<N> o;
    for (int k = 0; k < N; ++k) o.v[k] = base[k];
    for (int d = ndim - 1; d > 0; --d) {
      const int64_t q = i % shape[d];
      i /= shape[d];
      for (int k = 0; k < N; ++k) o.v[k] += q * strides[k][d];
    }
    if (ndim > 0) {
      for (int k = 0; k < N; ++k) o.v[k] += i * strides[k][0];
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

/// Whether every operand of `plan` is one unit-stride run after merging.
template <std::size_t N>
bool is_linear(const StridedPlan<N>& plan) {
  bool linear = plan.shape.size() == 1;
  for (std::size_t k = 0; k < N && linear; ++k) linear = plan.strides[k][0] == 1;
  return linear;
}

/// Calls f(offsets) on the device for every element of `plan`, where
/// offsets.v[k] is the element's offset in operand k.
template <int N, class F>
void launch_plan(const StridedPlan<N>& plan, F f) {
  if (plan.numel == 0) return;
  const int nd = int(plan.shape.size());
  if (is_linear(plan)) {
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

/// Calls f(offsets) on the device for every element of `shape`, where
/// offsets.v[k] is the element's offset in operand k (layouts[k]).
template <int N, class F>
void launch_walk(const Shape& shape, const std::array<const Layout*, N>& layouts, F f) {
  launch_plan<N>(make_plan<N>(shape, layouts), f);
}

// --- maps: out = f(inputs...), element by element ---------------------------------
/// A map's inputs as untyped pointers, typed by TI when read.
template <class... TI>
struct MapInputs {
  const void* p[sizeof...(TI)];

  /// f of every input's element i.
  template <class F, std::size_t... K>
  __device__ auto linear(const F& f, int64_t i, std::index_sequence<K...>) const {
    return f(static_cast<const TI*>(p[K])[i]...);
  }
  /// f of input K's element at offset at.v[K + 1] (v[0] is the output's).
  template <class F, int N, std::size_t... K>
  __device__ auto walked(const F& f, const Offsets<N>& at, std::index_sequence<K...>) const {
    return f(static_cast<const TI*>(p[K])[at.v[K + 1]]...);
  }
};

/// out[i] = f(in[i]...) over n unit-stride elements, U a thread per round: all U
/// results (so all their loads) come before any store. With one element a round
/// the compiler cannot hoist the next loads above a store that might alias them,
/// and a thread then has one load in flight, too few to fill the memory system.
template <int U, class TO, class F, class... TI>
__global__ void map_kernel(TO* o, MapInputs<TI...> in, int64_t n, F f) {
  constexpr auto K = std::index_sequence_for<TI...>{};
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * step < n; i += U * step) {
    TO r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = in.linear(f, i + u * step, K);
#pragma unroll
    for (int u = 0; u < U; ++u) o[i + u * step] = r[u];
  }
  for (; i < n; i += step) o[i] = in.linear(f, i, K);
}

/// The walk's body for a map whose operands are not all unit-stride.
template <int N, class TO, class F, class... TI>
struct MapStep {
  TO* o;
  MapInputs<TI...> in;
  F f;
  __device__ void operator()(const Offsets<N>& at) const {
    o[at.v[0]] = in.walked(f, at, std::index_sequence_for<TI...>{});
  }
};

/// out = f(in[0], in[1], ...) element by element, the inputs (of element types
/// TI...) already of out's shape (broadcast by their strides): map_kernel when
/// every operand is unit-stride after merging, else the strided walk.
template <class TO, class... TI, class F>
void launch_map(F f, const RawTensor& out, const std::array<const RawTensor*, sizeof...(TI)>& in) {
  constexpr int N = 1 + int(sizeof...(TI));
  constexpr int kUnroll = 4;
  constexpr std::size_t kSize[] = {sizeof(TI)...};
  std::array<const Layout*, N> layouts{&out.layout()};
  for (int k = 1; k < N; ++k) layouts[std::size_t(k)] = &in[std::size_t(k - 1)]->layout();
  const StridedPlan<N> plan = make_plan<N>(out.shape(), layouts);
  if (plan.numel == 0) return;
  MapInputs<TI...> ptrs;
  for (int k = 1; k < N; ++k) ptrs.p[k - 1] = in[std::size_t(k - 1)]->storage()->data();
  TO* o = device_ptr<TO>(out);
  if (!is_linear(plan)) {
    launch_plan<N>(plan, MapStep<N, TO, F, TI...>{o, ptrs, f});
    return;
  }
  for (int k = 1; k < N; ++k) {
    ptrs.p[k - 1] =
        static_cast<const char*>(ptrs.p[k - 1]) + plan.offsets[k] * int64_t(kSize[k - 1]);
  }
  const int64_t rounds = (plan.numel + kUnroll - 1) / kUnroll;
  map_kernel<kUnroll><<<blocks_for(rounds), kThreads>>>(o + plan.offsets[0], ptrs, plan.numel, f);
  STRATA_CUDA_LAUNCHED();
}

}  // namespace strata::detail
