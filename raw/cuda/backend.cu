// SPDX-License-Identifier: MIT
// The CUDA devices: one backend per device, created on first use and never
// destroyed, each with a caching allocator over cudaMalloc (size classes:
// core/allocator.hpp), a cuBLAS handle, and the host <-> device copies.
#include <cusolverDn.h>

#include <memory>
#include <mutex>
#include <vector>

#include "raw/cuda/common.cuh"

namespace strata {
namespace detail {
namespace {

class CudaAllocator final : public CachingAllocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}
  Device device() const override { return Device::cuda(index_); }

 protected:
  void* system_allocate(std::size_t bytes) override {
    DeviceGuard guard(index_);
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it: the caller empties the cache and retries once
      return nullptr;
    }
    STRATA_CUDA_CHECK(status);
    return p;
  }
  void system_free(void* ptr, std::size_t) override {
    DeviceGuard guard(index_);
    cudaFree(ptr);  // never throws: called from destructors
  }

 private:
  int index_;
};

}  // namespace

CudaBackend::CudaBackend(int index)
    : index_(index), alloc_(std::make_unique<CudaAllocator>(index)) {}

CudaBackend::~CudaBackend() {
  // cuda_backend()'s backends are never destroyed; any other releases its handle
  // unchecked, since at exit the driver may already be gone.
  if (cublas_) cublasDestroy(static_cast<cublasHandle_t>(cublas_));
  if (cusolver_) cusolverDnDestroy(static_cast<cusolverDnHandle_t>(cusolver_));
}

void* CudaBackend::cublas() {
  if (!cublas_) {
    DeviceGuard guard(index_);
    cublasHandle_t h = nullptr;
    STRATA_CUBLAS_CHECK(cublasCreate(&h));
    cublas_ = h;
  }
  return cublas_;
}

void* CudaBackend::cusolver() {
  if (!cusolver_) {
    DeviceGuard guard(index_);
    cusolverDnHandle_t h = nullptr;
    const cusolverStatus_t status = cusolverDnCreate(&h);
    if (status != CUSOLVER_STATUS_SUCCESS) {
      fail<DeviceError>("cusolver", "cusolverDnCreate failed (status ", int(status), ")");
    }
    cusolver_ = h;
  }
  return cusolver_;
}

void CudaBackend::from_host(const RawTensor& out, const void* src) {
  DeviceGuard guard(index_);
  auto* dst = static_cast<char*>(out.storage()->data()) + out.offset() * dtype_size(out.dtype());
  STRATA_CUDA_CHECK(cudaMemcpy(dst, src, std::size_t(out.numel()) * dtype_size(out.dtype()),
                               cudaMemcpyHostToDevice));
}

void CudaBackend::to_host(const RawTensor& x, void* dst) {
  DeviceGuard guard(index_);
  // Any layout: gather into a contiguous device buffer first.
  const RawTensor dense = backend_contiguous(*this, x);
  const auto* src =
      static_cast<const char*>(dense.storage()->data()) + dense.offset() * dtype_size(x.dtype());
  STRATA_CUDA_CHECK(
      cudaMemcpy(dst, src, std::size_t(x.numel()) * dtype_size(x.dtype()), cudaMemcpyDeviceToHost));
}

int cuda_devices() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: clear the sticky error
      return 0;
    }
    return n;
  }();
  return count;
}

Backend& cuda_backend(int index) {
  const int count = cuda_devices();
  if (index < 0 || index >= count) {
    fail<DeviceError>("device", "cuda:", index, " is not available: ",
                      count == 0 ? std::string("no CUDA device was found")
                                 : "this machine has " + std::to_string(count) + " CUDA device(s)");
  }
  // Never destroyed, like cpu_allocator(): a tensor in static storage, constructed
  // before the backend's first use, is destroyed after it at exit and would free its
  // block into a dead allocator (a double free, seen at the first GPU run's exit).
  static std::mutex* const mutex = new std::mutex;
  static auto* const backends = new std::vector<std::unique_ptr<CudaBackend>>(std::size_t(count));
  std::lock_guard<std::mutex> lock(*mutex);
  auto& b = (*backends)[std::size_t(index)];
  if (!b) b = std::make_unique<CudaBackend>(index);
  return *b;
}

}  // namespace detail
}  // namespace strata
