// SPDX-License-Identifier: MIT
#pragma once
/// Test support: tensors compared element by element with Catch's Approx (a margin, and
/// Approx's default relative epsilon).
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

namespace strata::testing {

/// a and b of one shape, each element of a within margin of b's (or Approx's epsilon).
inline void require_approx(const Tensor& a, const Tensor& b, double margin) {
  REQUIRE(a.shape() == b.shape());
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i] == Approx(y[i]).margin(margin));
}

/// vmap(f)(xs) against f on each example of xs (stacked on axis 0), by require_approx.
template <class F>
void require_vmap_approx_loop(F f, const Tensor& xs, double margin = 1e-12) {
  const Tensor mapped = vmap(f)(xs);
  for (int64_t i = 0; i < xs.shape()[0]; ++i) {
    require_approx(Tensor(mapped.ix(i)), f(Tensor(xs.ix(i))), margin);
  }
}

}  // namespace strata::testing
