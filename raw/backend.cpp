// SPDX-License-Identifier: MIT
#include "raw/backend.hpp"

#include "core/error.hpp"
#include "raw/cpu/cpu_backend.hpp"

namespace strata {

Backend& backend_for(Device device) {
  if (device.is_cpu()) return cpu_backend();
  detail::fail<DeviceError>("device", to_string(device),
                            " is not available: this build of strata has no CUDA backend");
}

}  // namespace strata
