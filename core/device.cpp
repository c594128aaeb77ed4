// SPDX-License-Identifier: MIT
#include "core/device.hpp"

#include <ostream>

namespace strata {

namespace {
// Each thread starts on the CPU; only a DefaultDevice guard on that thread changes it.
thread_local Device current_default = Device::cpu();
}  // namespace

Device default_device() { return current_default; }

DefaultDevice::DefaultDevice(Device device) : previous_(current_default) {
  current_default = device;
}

DefaultDevice::~DefaultDevice() { current_default = previous_; }

std::string to_string(Device d) {
  return d.is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(d.index());
}

std::ostream& operator<<(std::ostream& os, Device d) { return os << to_string(d); }

}  // namespace strata
