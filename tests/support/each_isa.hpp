// SPDX-License-Identifier: MIT
#pragma once
/// Test support: a vmath kernel test run once per instruction set this CPU and build run.
#include <catch2/catch.hpp>

#include "raw/cpu/vmath.hpp"

namespace strata::testing {

/// Calls f(kernels) for every instruction set with kernels here (SSE2, AVX2, AVX-512), the
/// set's name in the messages of f's assertions; returns how many ran.
template <class F>
int for_each_isa(F f) {
  namespace vm = strata::detail::vmath;
  int ran = 0;
  for (const vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const vm::Kernels* k = vm::kernels_for(isa);
    if (!k) continue;
    INFO(vm::isa_name(isa));
    ++ran;
    f(*k);
  }
  return ran;
}

}  // namespace strata::testing
