// SPDX-License-Identifier: MIT
#pragma once
/// Test support for the CUDA parity suites (tests/cuda/): the devices present, a CPU tensor's
/// bytes and layout copied to a device, and the comparison of a device result with the CPU's.
#include <cmath>
#include <string>
#include <vector>

#include "raw/ops.hpp"
#include "support/naive.hpp"

namespace strata::testing {

/// The CUDA devices of this machine (none without a GPU).
inline std::vector<strata::Device> cuda_devices() {
  std::vector<strata::Device> d;
  for (int i = 0; i < strata::cuda_device_count(); ++i) d.push_back(strata::Device::cuda(i));
  return d;
}

/// The same storage bytes and layout as the CPU tensor t, on device d.
inline strata::RawTensor same_layout_on(const strata::RawTensor& t, strata::Device d) {
  const std::size_t es = strata::dtype_size(t.dtype());
  const int64_t n = int64_t(t.storage()->bytes() / es);
  const strata::RawTensor flat = strata::raw::from_host(t.storage()->data(), {n}, t.dtype(), d);
  return strata::RawTensor(flat.storage(), t.layout(), t.dtype());
}

/// t's values, read on the host.
inline std::vector<double> host_values(const strata::RawTensor& t) {
  return strata::testing::values(strata::raw::to_device(t, strata::Device::cpu()));
}

/// "" when a (device) equals b (CPU): exactly, or to `tol` relative for floats.
inline std::string compare(const strata::RawTensor& dev, const strata::RawTensor& cpu, double tol) {
  if (dev.shape() != cpu.shape() || dev.dtype() != cpu.dtype()) return "shape or dtype differ";
  const std::vector<double> a = host_values(dev), b = strata::testing::values(cpu);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool both_nan = std::isnan(a[i]) && std::isnan(b[i]);
    const double err = std::abs(a[i] - b[i]);
    if (!both_nan && !(a[i] == b[i] || err <= tol * (1 + std::abs(b[i])))) {
      return "element " + std::to_string(i) + ": device " + std::to_string(a[i]) + " vs cpu " +
             std::to_string(b[i]);
    }
  }
  return "";
}

/// The relative tolerance of a device result against the CPU's: floats to rounding, others
/// exact.
inline double tol_for(strata::DType t) {
  return t == strata::f32 ? 2e-6 : t == strata::f64 ? 1e-13 : 0.0;
}

}  // namespace strata::testing
