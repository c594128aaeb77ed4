// SPDX-License-Identifier: MIT
#include "bench/load.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstdint>

namespace bench {
namespace {

/// The highest CPU in this process's affinity mask, or -1.
int last_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  for (int c = CPU_SETSIZE - 1; c >= 0; --c) {
    if (CPU_ISSET(c, &set)) return c;
  }
  return -1;
}

}  // namespace

CompetingLoad::CompetingLoad() : cpu_(last_cpu()) {
  thread_ = std::thread([this] {
    // Integer work with no memory traffic: it takes the core, not the caches' bandwidth.
    volatile uint64_t x = 1;
    while (!stop_.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 4096; ++i) x = x * 6364136223846793005u + 1442695040888963407u;
    }
  });
  if (cpu_ >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu_, &set);
    if (pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set) != 0) cpu_ = -1;
  }
}

CompetingLoad::~CompetingLoad() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

std::string CompetingLoad::describe() const {
  return cpu_ >= 0 ? "one spinning thread pinned to cpu " + std::to_string(cpu_)
                   : "one spinning thread (not pinned)";
}

}  // namespace bench
