// SPDX-License-Identifier: MIT
// The CUDA test runner: the device-parity suites run only where a CUDA
// device exists. Elsewhere it says why and exits 77, which ctest reports as
// "Skipped" (SKIP_RETURN_CODE), never as passed.
#include <iostream>
#include <strata.hpp>

#include "support/catch_session.hpp"

int main(int argc, char** argv) {
  if (strata::cuda_device_count() == 0) {
    std::cout << "strata_cuda_tests: SKIPPED, no CUDA device ("
              << (strata::cuda_built() ? "the CUDA backend is built, but no GPU was found"
                                       : "this build has no CUDA backend")
              << "); none of these tests ran\n";
    return 77;
  }
  return strata::testing::run_catch_session(argc, argv);
}
