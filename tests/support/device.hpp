// SPDX-License-Identifier: MIT
#pragma once
/// Test support: the device the suites run on.
///
/// Every test executable runs its whole session under st::DefaultDevice for the
/// device named by the environment variable STRATA_TEST_DEVICE ("cpu", the
/// default, "cuda" or "cuda:N"; tests/main.cpp). Creation without a device
/// (st::zeros, st::from_vector, raw::empty, ...) therefore lands on it; tests
/// that name a device say test_device(), and read results through to_cpu.
#include <optional>
#include <string>
#include <string_view>

#include <strata.hpp>

namespace strata::testing {

/// The device under test (the CPU unless STRATA_TEST_DEVICE names another).
Device test_device();

/// Sets what test_device() returns; tests/main.cpp calls it once, before any test runs.
void set_test_device(Device device);

/// "cpu", "cuda" (device 0) or "cuda:N" as a Device; nullopt for anything else.
std::optional<Device> parse_device(std::string_view text);

/// A copy on the CPU (x itself when it is there already), to read values from.
inline Tensor to_cpu(const Tensor& x) { return x.to(Device::cpu()); }

/// A copy on the CPU (x itself when it is there already), to read values from.
inline RawTensor to_cpu(const RawTensor& x) { return raw::to_device(x, Device::cpu()); }

/// The caching allocator of the device under test (allocation-count tests read its stats).
inline CachingAllocator& test_allocator() { return backend_for(test_device()).allocator(); }

/// True when the suite runs on the CPU (tests that only make sense there check it).
inline bool testing_cpu() { return test_device().is_cpu(); }

/// What printing a tensor of the device under test appends before its closing parenthesis:
/// "" on the CPU, ", device=cuda:N" elsewhere (raw/print.cpp).
inline std::string device_suffix() {
  return testing_cpu() ? std::string() : ", device=" + to_string(test_device());
}

}  // namespace strata::testing
