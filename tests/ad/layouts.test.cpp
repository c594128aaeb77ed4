// SPDX-License-Identifier: MIT
// Gradients keep the layout of what they differentiate: the reverse rule of
// matmul computes a column-major (transposed) operand's gradient transposed,
// so the gradient of W in x @ W^T is a contiguous [out, in] matrix.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/check_grads.hpp"

namespace st = strata;

TEST_CASE("matmul gradients of transposed operands come out in the operand's layout", "[ad]") {
  const st::Tensor x = st::randn({5, 7}, 401, st::f64);
  const st::Tensor W = st::randn({3, 7}, 402, st::f64);
  const st::Tensor r = st::randn({5, 3}, 403, st::f64);
  // d/dW sum((x W^T) * r) = r^T x, computed here by loops.
  const std::vector<double> xv = x.to_vector<double>(), rv = r.to_vector<double>();
  std::vector<double> expected(3 * 7, 0.0);
  for (int o = 0; o < 3; ++o)
    for (int i = 0; i < 7; ++i)
      for (int b = 0; b < 5; ++b)
        expected[std::size_t(o * 7 + i)] += rv[std::size_t(b * 3 + o)] * xv[std::size_t(b * 7 + i)];
  const auto [gx, gW] = st::grad(
      [&](const auto& x, const auto& W) { return st::sum(st::matmul(x, W.transpose(0, 1)) * r); },
      x, W);
  REQUIRE(gW.shape() == st::Shape{3, 7});
  CHECK(gW.raw().is_contiguous());
  const std::vector<double> g = gW.to_vector<double>();
  for (std::size_t k = 0; k < g.size(); ++k) CHECK(g[k] == Approx(expected[k]).epsilon(1e-12));
  // The left operand too: d/dA sum((A^T y) * s) with A stored [k, m].
  const st::Tensor A = st::randn({7, 5}, 404, st::f64), y = st::randn({7, 3}, 405, st::f64);
  const st::Tensor gA =
      st::grad([&](const auto& A) { return st::sum(st::matmul(A.transpose(0, 1), y) * r); }, A);
  CHECK(gA.raw().is_contiguous());
  // Against finite differences, and the other modes and orders.
  st::testing::check_grads<2>(
      [](const auto& x, const auto& W) { return st::tanh(st::matmul(x, W.transpose(0, 1))); },
      {x, W});
  st::testing::check_grads<2>(
      [&](const auto& A) { return st::matmul(A.transpose(0, 1), y).pow(2.0); }, {A});
}
