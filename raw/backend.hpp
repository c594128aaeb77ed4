// SPDX-License-Identifier: MIT
#pragma once
/// The Backend interface: the kernels of one device, destination-passing.
///
/// raw/ops.cpp validates every argument (shapes, dtypes, devices, axes),
/// computes output shapes, allocates outputs and only then calls a backend,
/// so a backend implements arithmetic and nothing else. Inputs may have any
/// strides (zero, negative, offsets); outputs are fresh contiguous tensors
/// unless a method says otherwise.
#include <cstdint>

#include "core/allocator.hpp"
#include "raw/primitives.hpp"
#include "raw/raw_tensor.hpp"

namespace strata {

enum class RandomKind : uint8_t { uniform, normal };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual CachingAllocator& allocator() = 0;

  /// out[...] = value (out may be any non-overlapping view).
  virtual void fill(const RawTensor& out, double value) = 0;
  /// out[...] = cast(x[...]); same shape, dtypes may differ; out any non-overlapping view.
  virtual void copy(const RawTensor& out, const RawTensor& x) = 0;
  /// out[i] = start + i * step, for the flat index i of contiguous out.
  virtual void arange(const RawTensor& out, double start, double step) = 0;
  /// out[i] = Philox draw i under seed (core/random.hpp); float out.
  virtual void random(const RawTensor& out, RandomKind kind, uint64_t seed) = 0;
  /// Contiguous out <- host bytes in row-major order.
  virtual void from_host(const RawTensor& out, const void* src) = 0;
  /// Host bytes in row-major order <- x (any layout).
  virtual void to_host(const RawTensor& x, void* dst) = 0;

  virtual void unary(UnaryOp op, const RawTensor& out, const RawTensor& x) = 0;
  /// out may be a view aliasing a exactly (in-place ops); a and b have out's shape.
  virtual void binary(BinaryOp op, const RawTensor& out, const RawTensor& a,
                      const RawTensor& b) = 0;
  virtual void where(const RawTensor& out, const RawTensor& cond, const RawTensor& a,
                     const RawTensor& b) = 0;
  /// out has x's shape with the reduced axes set to 1 (keepdims); axes sorted, unique.
  virtual void reduce(ReduceOp op, const RawTensor& out, const RawTensor& x, const Shape& axes) = 0;
  /// out[..., m, n] = a[..., m, k] @ b[..., k, n]; a and b already expanded to out's batch dims.
  virtual void matmul(const RawTensor& out, const RawTensor& a, const RawTensor& b) = 0;
  /// out = x with `axis` replaced by idx's dims; idx integer, entries in [-n, n) (else IndexError).
  virtual void index_select(const RawTensor& out, const RawTensor& x, int64_t axis,
                            const RawTensor& idx) = 0;
  /// out (a contiguous copy of the base) += src scattered along axis by idx; duplicates add up.
  virtual void index_add(const RawTensor& out, int64_t axis, const RawTensor& idx,
                         const RawTensor& src) = 0;
};

/// The backend of a device; throws DeviceError when the device is not available.
Backend& backend_for(Device device);

/// Whether this build has the CUDA backend (CMake found the CUDA Toolkit).
bool cuda_built();
/// How many CUDA devices this build can use (0 without the backend or a GPU).
int cuda_device_count();

}  // namespace strata
