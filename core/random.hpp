// SPDX-License-Identifier: MIT
#pragma once
/// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
/// Element i of a random tensor depends only on (seed, i), never on thread
/// count or device, so every backend produces the same stream for a seed.
#include <array>
#include <cmath>
#include <cstdint>

#include "core/hd.hpp"

namespace strata::detail {

/// Ten Philox rounds on a 128-bit counter under a 64-bit key.
STRATA_HD inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c,
                                                    std::array<uint32_t, 2> k) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * c[0];
    const uint64_t p1 = uint64_t{kM1} * c[2];
    const uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    const uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kW0;
    k[1] += kW1;
  }
  return c;
}

/// The four words for element `i` under `seed`.
STRATA_HD inline std::array<uint32_t, 4> philox_words(uint64_t seed, uint64_t i) {
  return philox4x32({uint32_t(i), uint32_t(i >> 32), 0u, 0u},
                    {uint32_t(seed), uint32_t(seed >> 32)});
}

/// 53 random bits from two words, as a double in [0, 1).
STRATA_HD inline double unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = ((uint64_t{hi} << 32) | lo) >> 11;
  return double(bits) * 0x1.0p-53;
}

/// Element i of uniform [0, 1) under seed (computed in double, rounded to T;
/// an f32 result that rounds up to 1 is clamped just below it).
template <class T>
STRATA_HD inline T philox_uniform(uint64_t seed, uint64_t i) {
  const auto w = philox_words(seed, i);
  const T u = T(unit_double(w[0], w[1]));
  return u < T(1) ? u : T(1) - T(1) / T(1 << 24);
}

/// Element i of a standard normal under seed (Box-Muller on two 53-bit uniforms).
template <class T>
STRATA_HD inline T philox_normal(uint64_t seed, uint64_t i) {
  const auto w = philox_words(seed, i);
  const double u1 = 1.0 - unit_double(w[0], w[1]);  // (0, 1]: log stays finite
  const double u2 = unit_double(w[2], w[3]);
  return T(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

}  // namespace strata::detail
