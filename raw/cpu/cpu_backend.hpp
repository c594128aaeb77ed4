// SPDX-License-Identifier: MIT
#pragma once
/// The CPU backend. Its kernels are split by kind over raw/cpu/*.cpp:
/// elementwise.cpp (fill, copy/cast, creation, unary, binary, where),
/// reduce.cpp, matmul.cpp, index.cpp, fold.cpp, and linalg_*.cpp (the factorisations,
/// through OpenBLAS's LAPACK: lapack.hpp).
#include "raw/backend.hpp"

namespace strata {

/// The process-wide CPU backend.
Backend& cpu_backend();

namespace detail {

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::cpu(); }
  CachingAllocator& allocator() override;
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
  // Linear algebra: linalg_factor.cpp, linalg_solve.cpp, linalg_spectral.cpp.
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
};

}  // namespace detail
}  // namespace strata
