// SPDX-License-Identifier: MIT
#pragma once
/// Inputs for the derivative tests of tests/ad/: f64 values from fixed seeds,
/// drawn away from the points where a primitive is not differentiable.
#include <cstdint>
#include <strata.hpp>
#include <type_traits>
#include <vector>

namespace strata::testing {

/// Standard normal f64 values of a shape, from a fixed seed.
inline Tensor normal(const Shape& s, uint64_t seed) { return randn(s, seed, f64); }
/// Values in [0.5, 1.5): positive and away from 0.
inline Tensor positive(const Shape& s, uint64_t seed) { return rand(s, seed, f64) + 0.5; }
/// Normal values pushed at least 0.3 away from 0 (for abs and division).
inline Tensor nonzero(const Shape& s, uint64_t seed) {
  const Tensor t = normal(s, seed);
  return t + sign(t) * 0.3;
}
/// An f64 tensor of the given values.
inline Tensor f64s(const std::vector<double>& v, const Shape& s) { return from_vector(v, s); }
/// An i64 tensor of the given values.
inline Tensor i64s(const std::vector<int64_t>& v, const Shape& s) { return from_vector(v, s); }

/// A bool attention mask [3, 4] whose row 1 attends to no key.
inline Tensor attention_bool_mask() {
  return from_vector(std::vector<double>{1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1}, {3, 4}) != 0.0;
}

/// A tensor's values as doubles, in row-major order.
inline std::vector<double> doubles(const Tensor& t) { return t.to_vector<double>(); }

/// The primitive set of a value's type (for calling a primitive directly).
template <class X>
using prims_of = Prims<std::remove_cvref_t<X>>;

}  // namespace strata::testing
