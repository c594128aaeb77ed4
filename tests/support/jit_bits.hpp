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

/// How many run steps of a plan's listing call a primitive, inside fused groups and alone.
struct StepCount {
  int fused = 0;  ///< run inside a fused group
  int alone = 0;  ///< run by their own kernel
};
/// The run steps of `plan` (a listing from explain()) calling `op` ("reduce", "pad").
inline StepCount count_steps(const std::string& plan, const std::string& op) {
  StepCount c;
  const std::string call = " " + op + "(";
  for (std::size_t at = plan.find(call); at != std::string::npos; at = plan.find(call, at + 1)) {
    const std::size_t line = plan.rfind('\n', at);
    const std::string head = plan.substr(line + 1, at - line - 1);
    if (head.find(" run") == std::string::npos) continue;  // folded or dropped
    (head.find("fused:") != std::string::npos ? c.fused : c.alone) += 1;
  }
  return c;
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
