// SPDX-License-Identifier: MIT
// Derivatives of cumsum, cumprod, roll, cross and the packed triangles
// (diff/scan.hpp, roll.hpp, cross.hpp, triangle.hpp): check_grads against
// central finite differences in f64 to order 3 on contiguous, transposed and
// sliced inputs; cumprod's exact derivative where x has zeros; st::vmap
// against loops over examples (tests/support/vmap_sweep.hpp).
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/vmap_sweep.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;
using st::testing::positive;

TEST_CASE("derivatives: cumsum and cumprod", "[ad][scan]") {
  // Long enough (20 > 16) to take the pairwise recursion, odd at its second level.
  const st::Tensor x = positive({3, 20}, 501);
  check_grads<3>([](const auto& x) { return st::cumsum(x, 1); }, {x});
  check_grads<3>([](const auto& x) { return st::cumprod(x, -1); }, {x});
  check_grads<3>([](const auto& x) { return st::cumprod(x, 0) * st::cumsum(x, 1); },
                 {positive({3, 4}, 502)});
  // Transposed and strided inputs.
  check_grads<3>([](const auto& x) { return st::cumprod(st::transpose(x, 0, 1), 0); },
                 {positive({5, 3}, 503)});
  check_grads<3>(
      [](const auto& x) { return st::cumsum(x.ix(st::all, st::slice(1, st::none, 2)), 1); },
      {normal({2, 9}, 504)});
}

TEST_CASE("cumprod's derivative is exact where x has zeros", "[ad][scan]") {
  // y_i = prod_{j <= i} x_j, so d sum(y) / d x_k = sum_{i >= k} prod_{j <= i, j != k} x_j:
  // finite at zeros, and a formula dividing by x_k would give NaN there.
  for (int64_t n : {5, 24}) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[std::size_t(i)] = 0.9 + 0.01 * double(i);
    v[2] = 0.0;
    v[std::size_t(n - 1)] = 0.0;
    const st::Tensor x = st::from_vector(v);
    const std::vector<double> g =
        st::grad([](const auto& x) { return st::sum(st::cumprod(x)); }, x).to_vector<double>();
    for (int64_t k = 0; k < n; ++k) {
      double want = 0;
      for (int64_t i = k; i < n; ++i) {
        double p = 1;
        for (int64_t j = 0; j <= i; ++j) p *= j == k ? 1.0 : v[std::size_t(j)];
        want += p;
      }
      INFO("n = " << n << ", k = " << k);
      CHECK(g[std::size_t(k)] == Approx(want).epsilon(1e-12).margin(1e-15));
    }
    // And to third order around the zeros (finite differences see the same polynomial).
    check_grads<3>([](const auto& x) { return st::cumprod(x); }, {x});
  }
}

TEST_CASE("derivatives: roll", "[ad][roll]") {
  const st::Tensor x = normal({3, 5}, 511);
  check_grads<3>([](const auto& x) { return st::sin(st::roll(x, 2, 1)) * x; }, {x});
  check_grads<3>([](const auto& x) { return st::roll(x, -1, 0) * st::roll(x, 4); }, {x});
  check_grads<3>([](const auto& x) { return st::roll(st::transpose(x, 0, 1), 1, 0) * 2.0; }, {x});
  check_grads<3>(
      [](const auto& x) {
        return st::roll(x.ix(st::slice(st::none, st::none, -1)), 3, 1).pow(2.0);
      },
      {x});
}

TEST_CASE("derivatives: cross", "[ad][cross]") {
  const st::Tensor a = normal({4, 3}, 521), b = normal({4, 3}, 522);
  check_grads<3>([](const auto& a, const auto& b) { return st::cross(a, b); }, {a, b});
  check_grads<3>(
      [](const auto& a, const auto& b) {
        return st::cross(st::transpose(a, 0, 1), st::transpose(b, 0, 1), 0);
      },
      {a, b});
  // Mixed levels: a captured plain vector against a traced one.
  const st::Tensor w = normal({3}, 523);
  check_grads<3>([w](const auto& p) { return st::cross(w, p) * p; }, {a});
}

TEST_CASE("derivatives: packed triangles", "[ad][triangle]") {
  check_grads<3>([](const auto& v) { return st::tril_unpack(v, 4, -1); }, {normal({2, 6}, 531)});
  check_grads<3>(
      [](const auto& v) { return st::matmul(st::triu_unpack(v, 3), st::triu_unpack(v, 3)); },
      {normal({6}, 532)});
  check_grads<3>([](const auto& m) { return st::tril_pack(st::transpose(m, -2, -1)).pow(2.0); },
                 {normal({2, 4, 4}, 533)});
  check_grads<3>([](const auto& m) { return st::triu_pack(m.ix(st::slice(1, 4)), 1); },
                 {normal({5, 4}, 534)});
}

TEST_CASE("the scan and triangle ops under st::vmap match loops over examples",
          "[ad][vmap][scan]") {
  using st::testing::vmap_sweep::check;
  check(
      "cumsum, cumprod", {{3, 18}, {18}, 1, 1},
      [](auto a, auto b) { return st::cumsum(a, 1) * st::cumprod(b * 0.5 + 0.6); }, 541);
  check(
      "roll", {{3, 4}, {4}}, [](auto a, auto b) { return st::roll(a, 1, 1) + st::roll(b, -1); },
      542);
  check(
      "cross", {{2, 3}, {3}}, [](auto a, auto b) { return st::cross(a, b); }, 543);
  check(
      "unpack, pack", {{6}, {4, 4}},
      [](auto a, auto b) {
        return st::tril_pack(
            st::matmul(st::tril_unpack(a, 3), b.ix(st::slice(0, 3), st::slice(0, 3))));
      },
      544);
}
