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
