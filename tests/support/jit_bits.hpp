// SPDX-License-Identifier: MIT
#pragma once
/// Test support for the jit suite: a function run eagerly and through its plan must give the
/// same bits, on inputs with every special value the kernels treat apart.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <strata.hpp>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "support/same_bits.hpp"

namespace strata::testing {

/// Runs f eagerly and through a plan (traced on x0, replayed on x) and requires the same bits;
/// returns the plan's listing.
template <class F>
std::string require_eager_bits(F f, const Tensor& x0, const Tensor& x) {
  auto jf = jit(f);
  (void)jf(x0);
  const auto got = jf(x);
  const auto want = f(x);
  REQUIRE(same_bits(got, want));
  return jf.explain(x);
}

/// n values with every special case the kernels treat apart: zeros of both signs, infinities,
/// a NaN, tiny and huge magnitudes, then random normals (times 3) drawn from `seed`.
inline Tensor special(int64_t n, DType dtype, uint64_t seed) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, inf, -inf, std::nan(""), 1e-300, -1e300, 3.5, -2.25};
  const std::vector<double> r = randn({n}, seed, f64).to_vector<double>();
  for (std::size_t i = v.size(); i < std::size_t(n); ++i) v.push_back(r[i] * 3);
  v.resize(std::size_t(n));
  return from_vector(v, {n}).to(dtype);
}

}  // namespace strata::testing
