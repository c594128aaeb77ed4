// SPDX-License-Identifier: MIT
// The Catch2 main of the dist suite, run by every rank under mpirun (tests/CMakeLists.txt:
// 2 ranks, and 4 oversubscribed). Every rank runs every test in the same order, so the
// collectives match; a rank whose test fails early skips collectives the others make, and
// those then fail with DistError after the timeout (STRATA_DIST_TIMEOUT) instead of hanging.
// Every rank exits with the worst result over all ranks.
//
// STRATA_TEST_DEVICE=cuda (or cuda:N) runs the same suite on CUDA tensors through NCCL, under
// st::DefaultDevice; without NCCL in the build or a GPU the runner says why and exits 77
// (ctest: skipped). NCCL needs one GPU per rank, so that run has one rank.
#include <cstdlib>
#include <dist/dist.hpp>
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
    std::cerr << "strata dist tests: STRATA_TEST_DEVICE='" << text << "' is not a device\n";
    return 2;
  }
  if (device->is_cuda() && !st::dist::nccl_built()) {
    std::cout << "strata dist tests: SKIPPED, STRATA_TEST_DEVICE=" << text
              << " but this build has no NCCL backend (it needs the CUDA backend and the "
                 "toolkit's nccl.h and libnccl); none of these tests ran\n";
    return 77;
  }
  if (device->is_cuda() && device->index() >= st::cuda_device_count()) {
    std::cout << "strata dist tests: SKIPPED, STRATA_TEST_DEVICE=" << text
              << " but this machine has " << st::cuda_device_count()
              << " CUDA device(s); none of these tests ran\n";
    return 77;
  }
  st::dist::init({.check_collectives = true});
  st::testing::set_test_device(*device);
  int rc = 0;
  {
    const st::DefaultDevice on(*device);
    rc = strata::testing::run_catch_session(argc, argv);
  }
  // Every rank reports the worst exit status of all (a CPU tensor: barrier-like, via MPI).
  const st::Tensor worst = st::dist::all_reduce(
      st::full({}, double(rc), st::i32, st::Device::cpu()), st::dist::Reduction::max);
  st::dist::finalize();
  return worst.item<int32_t>();
}
