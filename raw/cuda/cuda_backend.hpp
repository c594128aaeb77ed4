// SPDX-License-Identifier: MIT
#pragma once
/// The CUDA backend (built when CMake finds the CUDA Toolkit; STRATA_CUDA).
/// Its kernels are split by kind over raw/cuda/*.cu: backend.cu (devices,
/// allocator, cuBLAS handle, host copies), elementwise.cu, reduce.cu,
/// matmul.cu, index.cu, fold.cu, and linalg_factor.cu and linalg_spectral.cu (the
/// factorisations, through cuSOLVER). This header needs no CUDA headers.
#include <memory>

#include "raw/backend.hpp"

namespace strata::detail {

/// How many CUDA devices the driver reports (0 without a driver or a GPU).
int cuda_devices();
/// The backend of CUDA device `index`; DeviceError when it does not exist.
Backend& cuda_backend(int index);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index);
  ~CudaBackend() override;
  Device device() const override { return Device::cuda(index_); }
  CachingAllocator& allocator() override { return *alloc_; }
  void fill(const RawTensor& out, double value) override;
  void copy(const RawTensor& out, const RawTensor& x) override;
  void arange(const RawTensor& out, double start, double step) override;
  void random(const RawTensor& out, RandomKind kind, uint64_t seed) override;
  void from_host(const RawTensor& out, const void* src) override;
  void to_host(const RawTensor& x, void* dst) override;
  void unary(UnaryOp op, const RawTensor& out, const RawTensor& x) override;
  void binary(BinaryOp op, const RawTensor& out, const RawTensor& a, const RawTensor& b) override;
  void axpby(const RawTensor& out, double alpha, const RawTensor& x, double beta) override;
  void adam_step(const RawTensor& p, const RawTensor& m, const RawTensor& v, const RawTensor& g,
                 const AdamStepCoefficients& c) override;
  void where(const RawTensor& out, const RawTensor& cond, const RawTensor& a,
             const RawTensor& b) override;
  void reduce(ReduceOp op, const RawTensor& out, const RawTensor& x, const Shape& axes) override;
  void matmul(const RawTensor& out, const RawTensor& a, const RawTensor& b) override;
  void index_select(const RawTensor& out, const RawTensor& x, int64_t axis,
                    const RawTensor& idx) override;
  void index_add(const RawTensor& out, int64_t axis, const RawTensor& idx,
                 const RawTensor& src) override;
  void fold(const RawTensor& out, const RawTensor& y, const Window& w) override;
  // Linear algebra (cuSOLVER, cuBLAS trsm): linalg_factor.cu, linalg_spectral.cu.
  void cholesky(const RawTensor& l, const RawTensor& a, const RawTensor& info) override;
  void triangular_solve(const RawTensor& x, const RawTensor& a, const RawTensor& b,
                        const TriangularSolve& opts, const RawTensor& info) override;
  void lu(const RawTensor& lu, const RawTensor& pivots, const RawTensor& perm, const RawTensor& a,
          const RawTensor& info) override;
  void lu_inverse(const RawTensor& x, const RawTensor& lu, const RawTensor& perm,
                  const RawTensor& info) override;
  void eigh(const RawTensor& w, const RawTensor& v, const RawTensor& a,
            const RawTensor& info) override;
  void svd(const RawTensor& u, const RawTensor& s, const RawTensor& vh, const RawTensor& a,
           const RawTensor& info) override;
  void qr(const RawTensor& q, const RawTensor& r, const RawTensor& a,
          const RawTensor& info) override;

  int index() const { return index_; }
  /// The cuBLAS handle of this device (created on first use).
  void* cublas();
  /// The cuSOLVER (dense) handle of this device (created on first use).
  void* cusolver();

 private:
  int index_;
  std::unique_ptr<CachingAllocator> alloc_;
  void* cublas_ = nullptr;
  void* cusolver_ = nullptr;
};

}  // namespace strata::detail
