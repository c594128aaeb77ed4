// SPDX-License-Identifier: MIT
// Shared helpers of the nn tests: seeded random values from the standard
// library (independent of strata's Philox), plain f64 loops as references.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/message_of.hpp"

namespace nn_test {

namespace st = strata;
using Vec = std::vector<double>;

/// n values uniform in [lo, hi) from a fixed seed.
inline Vec random_values(std::size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  Vec v(n);
  for (double& x : v) x = lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53;
  return v;
}

inline st::Tensor tensor(const Vec& v, const st::Shape& shape) { return st::from_vector(v, shape); }

/// Every element of t within tol (relative above 1, absolute below) of expected.
inline void require_close(const st::Tensor& t, const Vec& expected, double tol = 1e-12) {
  const Vec got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    REQUIRE(std::abs(got[i] - expected[i]) <= tol * (1.0 + std::abs(expected[i])));
  }
}

/// The message of the exception a call throws (tests/support/message_of.hpp).
using strata::testing::message_of;

}  // namespace nn_test
