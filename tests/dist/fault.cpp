// SPDX-License-Identifier: MIT
// A rank that dies or hangs: run by tests/dist/fault.sh under mpirun. After a barrier that
// every rank passes, rank `victim` is killed (SIGKILL) or hangs (sleeps far past the test's
// limits), and every other rank calls all_reduce with a short timeout. Each survivor prints
// the DistError it gets, how long it took, and what the next collective says; the script
// checks those lines. The survivors then call finalize, which, the group having failed,
// ends the job with MPI_Abort (so the hung rank does not outlive it).
//   strata_dist_fault kill|hang TIMEOUT_MS
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dist/dist.hpp>
#include <strata.hpp>
#include <thread>

namespace st = strata;

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "kill") != 0 && std::strcmp(argv[1], "hang") != 0)) {
    std::fprintf(stderr, "usage: %s kill|hang TIMEOUT_MS\n", argv[0]);
    return 2;
  }
  const std::chrono::milliseconds timeout(std::atoi(argv[2]));
  st::dist::init({.timeout = timeout});
  const int rank = st::dist::rank(), world = st::dist::world_size();
  const int victim = world - 1;
  st::dist::barrier();
  if (rank == victim) {
    if (std::strcmp(argv[1], "kill") == 0) std::raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::minutes(10));  // hung; MPI_Abort ends it
    return 3;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    st::dist::all_reduce(st::ones({3, 4}));
    std::printf("rank %d: all_reduce completed without rank %d\n", rank, victim);
    return 1;
  } catch (const st::DistError& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("rank %d: DistError after %.2f s: %s\n", rank, s, e.what());
  }
  try {
    st::dist::barrier();
    std::printf("rank %d: barrier completed after the failure\n", rank);
  } catch (const st::DistError& e) {
    std::printf("rank %d: then: %s\n", rank, e.what());
  }
  std::fflush(stdout);
  // Let every survivor report before the first one's finalize aborts the job.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  st::dist::finalize();
  return 4;  // finalize does not return after a failure
}
