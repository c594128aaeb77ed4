// SPDX-License-Identifier: MIT
#include "raw/backend.hpp"

#include "core/error.hpp"
#include "raw/cpu/cpu_backend.hpp"
#ifdef STRATA_HAS_CUDA
#include "raw/cuda/cuda_backend.hpp"
#endif

namespace strata {

#ifdef STRATA_HAS_CUDA
bool cuda_built() { return true; }
int cuda_device_count() { return detail::cuda_devices(); }
#else
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
#endif

namespace detail {

std::size_t checked_bytes(const Shape& shape, DType dtype, std::string_view op) {
  const int64_t n = checked_numel(shape, op);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(n), dtype_size(dtype), &bytes)) {
    fail<ValueError>(op, "byte count of shape ", shape, " (", dtype_name(dtype), ") overflows");
  }
  return bytes;
}

RawTensor backend_empty(Backend& be, const Shape& shape, DType dtype) {
  const std::size_t bytes = checked_bytes(shape, dtype, "backend_empty");
  return RawTensor(make_storage(be.allocator(), bytes), Layout::contiguous(shape), dtype);
}

RawTensor backend_contiguous(Backend& be, const RawTensor& x) {
  if (x.is_contiguous()) return x;
  RawTensor out = backend_empty(be, x.shape(), x.dtype());
  if (out.numel() > 0) be.copy(out, x);
  return out;
}

}  // namespace detail

Backend& backend_for(Device device) {
  if (device.is_cpu()) return cpu_backend();
#ifdef STRATA_HAS_CUDA
  return detail::cuda_backend(device.index());
#else
  detail::fail<DeviceError>("device", to_string(device),
                            " is not available: this build of strata has no CUDA backend "
                            "(configure with the CUDA Toolkit installed, STRATA_CUDA=AUTO or ON)");
#endif
}

}  // namespace strata
