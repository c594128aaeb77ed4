// SPDX-License-Identifier: MIT
// The AdamW update's vector kernels (raw/cpu/vmath.hpp's adam_f32 and adam_f64): the bits of
// the scalar functor raw::adam_step_ runs on strided blocks and on the GPU
// (raw/scalar/binary.hpp's AdamStep) on every instruction set this CPU runs, at every length
// around the vector widths, with and without L2 decay, on values holding NaNs, infinities,
// zeros of both signs, negative second moments and magnitudes near the ends of the range.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "raw/cpu/vmath.hpp"
#include "raw/scalar_ops.hpp"
#include "support/each_isa.hpp"

namespace st = strata;
namespace vm = strata::detail::vmath;

namespace {

/// n values from `seed`: normals of every scale, with the special values spread among them.
template <class T>
std::vector<T> draw(std::size_t n, uint64_t seed, bool nonnegative) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> scale(-30, 30);
  const T inf = std::numeric_limits<T>::infinity();
  const T special[] = {T(0),
                       -T(0),
                       inf,
                       -inf,
                       std::numeric_limits<T>::quiet_NaN(),
                       std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::denorm_min(),
                       std::numeric_limits<T>::min()};
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = i % 7 == 3 ? special[(i / 7) % 8] : T(normal(gen) * std::ldexp(1.0, scale(gen)));
    if (nonnegative && i % 11 != 5) v[i] = std::fabs(v[i]);  // a few negative moments stay
  }
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
void check_isa(const vm::Kernels& k, const st::AdamStepCoefficients& c) {
  const st::detail::scalar::AdamStep<T> step(c);
  const vm::AdamCoefficients<T> coef{
      step.beta1, step.one_minus_beta1, step.beta2, step.one_minus_beta2, step.l2,
      step.decay, step.sqrt_bc2,        step.eps,   step.neg_step};
  for (const std::size_t n : {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1031}) {
    INFO("n " << n);
    const std::vector<T> p0 = draw<T>(n, 1 + n, false), m0 = draw<T>(n, 2 + n, false);
    const std::vector<T> v0 = draw<T>(n, 3 + n, true), g = draw<T>(n, 4 + n, false);
    std::vector<T> p = p0, m = m0, v = v0;
    for (std::size_t i = 0; i < n; ++i) step(p[i], m[i], v[i], g[i]);
    std::vector<T> kp = p0, km = m0, kv = v0;
    if constexpr (sizeof(T) == 4) {
      k.adam_f32(kp.data(), km.data(), kv.data(), g.data(), int64_t(n), coef);
    } else {
      k.adam_f64(kp.data(), km.data(), kv.data(), g.data(), int64_t(n), coef);
    }
    CHECK(same_bits(kp, p));
    CHECK(same_bits(km, m));
    CHECK(same_bits(kv, v));
  }
}

}  // namespace

TEST_CASE("the AdamW vector kernels give the scalar update's bits on every ISA", "[raw]") {
  // Decoupled decay (AdamW), L2 decay (Adam's weight_decay), and neither.
  const st::AdamStepCoefficients adamw{0.9,  0.999, 1e-3 / (1 - 0.9), std::sqrt(1 - 0.999),
                                       1e-8, 0.0,   1 - 1e-3 * 0.01};
  const st::AdamStepCoefficients l2{0.8, 0.99, 0.05, 0.3, 1e-6, 0.02, 1.0};
  const st::AdamStepCoefficients plain{0.5, 0.75, 1.0, 1.0, 0.0, 0.0, 1.0};
  const int ran = strata::testing::for_each_isa([&](const vm::Kernels& k) {
    for (const auto& c : {adamw, l2, plain}) {
      check_isa<float>(k, c);
      check_isa<double>(k, c);
    }
  });
  CHECK(ran >= 1);
}
