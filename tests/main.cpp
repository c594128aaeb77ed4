// SPDX-License-Identifier: MIT
// The one Catch2 main, compiled once and shared by every test executable.
//
// STRATA_TEST_DEVICE names the device the whole session runs on ("cpu" when
// unset; "cuda" or "cuda:N"): the session runs under st::DefaultDevice for it,
// so every tensor a test creates without naming a device lands there. A CUDA
// device that this machine does not have makes the runner say so and exit 77,
// which ctest reports as skipped (SKIP_RETURN_CODE); a malformed value, or a
// CUDA device in a build without the CUDA backend, is an error (exit 2).
#include <cstdlib>
#include <iostream>
#include <strata.hpp>

#include "support/catch_session.hpp"
#include "support/device.hpp"

int main(int argc, char** argv) {
  namespace st = strata;
  const char* name = std::getenv("STRATA_TEST_DEVICE");
  const std::string text = name && *name ? name : "cpu";
  const std::optional<st::Device> device = st::testing::parse_device(text);
  if (!device) {
    std::cerr << "strata tests: STRATA_TEST_DEVICE='" << text
              << "' is not a device (expected \"cpu\", \"cuda\" or \"cuda:N\")\n";
    return 2;
  }
  if (device->is_cuda() && !st::cuda_built()) {
    std::cerr << "strata tests: STRATA_TEST_DEVICE=" << text
              << " but strata was built without CUDA (configure with -DSTRATA_CUDA=ON)\n";
    return 2;
  }
  if (device->is_cuda() && device->index() >= st::cuda_device_count()) {
    std::cout << "strata tests: SKIPPED, STRATA_TEST_DEVICE=" << text << " but this machine has "
              << st::cuda_device_count() << " CUDA device(s); none of these tests ran\n";
    return 77;
  }
  st::testing::set_test_device(*device);
  const st::DefaultDevice on(*device);
  if (device->is_cuda()) std::cout << "strata tests: running on " << *device << "\n";
  return strata::testing::run_catch_session(argc, argv);
}
