// SPDX-License-Identifier: MIT
#include "raw/cpu/tuning.hpp"

namespace strata::detail {
namespace {

// Whether the CPU is an AMD one, from what it reports (CPUID's vendor).
bool cpu_is_amd() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_is("amd") != 0;
#else
  return false;
#endif
}

CpuTuning& settings() {
  static CpuTuning t = CpuTuning::for_this_cpu();
  return t;
}

}  // namespace

CpuTuning CpuTuning::for_this_cpu() {
  CpuTuning t;
  if (cpu_is_amd()) {
    t.stage_tile = {512, 128};
    t.stream_gather_units = false;
  }
  return t;
}

const CpuTuning& cpu_tuning() { return settings(); }

CpuTuning set_cpu_tuning(const CpuTuning& t) {
  const CpuTuning old = settings();
  settings() = t;
  return old;
}

}  // namespace strata::detail
