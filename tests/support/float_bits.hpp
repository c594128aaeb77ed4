// SPDX-License-Identifier: MIT
#pragma once
/// Test support: floats compared bit for bit, and NaNs with chosen payloads and signs, for the
/// kernels whose results must be another kernel's exact bits.
#include <cstdint>
#include <cstring>

namespace strata::testing {

/// True when a and b have the same bits (NaN payloads and zero signs included).
template <class T>
bool same_float_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// A quiet NaN whose payload is k (and sign bit `negative`), for T float or double.
template <class T>
T nan_with(uint64_t k, bool negative) {
  T v;
  if constexpr (sizeof(T) == 8) {
    const uint64_t bits = (negative ? 0xfff8000000000000ull : 0x7ff8000000000000ull) | k;
    std::memcpy(&v, &bits, sizeof v);
  } else {
    const uint32_t bits = (negative ? 0xffc00000u : 0x7fc00000u) | uint32_t(k);
    std::memcpy(&v, &bits, sizeof v);
  }
  return v;
}

}  // namespace strata::testing
