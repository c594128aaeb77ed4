// SPDX-License-Identifier: MIT
// Derivative tests of vectorized indexing, masks and repeated indices (diff/index.hpp):
// check_grads against f64 finite differences, exact accumulation of repeated
// indices, and the symmetry of a Hessian through a gather.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;

namespace {

st::Tensor normal(const st::Shape& s, uint64_t seed) { return st::randn(s, seed, st::f64); }
st::Tensor i64s(const std::vector<int64_t>& v, const st::Shape& s) { return st::from_vector(v, s); }

}  // namespace
TEST_CASE("indexing derivatives: vectorized indexing and masks", "[ad][index]") {
  const st::Tensor x = normal({4, 3, 2}, 303);
  const st::Tensor i = i64s({2, 2, 0, -1}, {2, 2});
  const st::Tensor j = i64s({1, 1}, {1, 2});
  check_grads([&](const auto& x) { return st::sin(x.vix(i, j)); }, {x}, 3);
  check_grads(
      [&](const auto& x) {
        return x.vix(st::all, j, i64s({1, 0}, {2, 1})).pow(2.0);
      },
      {x}, 2);
  const st::Tensor mask = normal({3, 2}, 304) > 0.0;
  check_grads([&](const auto& x) { return st::tanh(x.oix(st::all, mask)); }, {x}, 3);
  check_grads([&](const auto& x) { return x.vix(st::all, mask.ix(st::all, 0), 1) * x.ix(0, 0, 0); },
              {x}, 2);
  // A mask built from the value itself (a constant of every level).
  check_grads([](const auto& x) { return st::exp(x.oix(st::plain(x) > 0.0)); }, {x}, 2);
}

TEST_CASE("indexing derivatives: repeated indices accumulate exactly", "[ad][index]") {
  const st::Tensor x = normal({5, 2}, 305);
  const st::Tensor idx = i64s({4, 1, 4, 4, 0, 1}, {6});
  // d/dx sum(x[idx] * w) = sum over repeats of w's rows.
  const st::Tensor w = normal({6, 2}, 306);
  const st::Tensor g = st::grad([&](const auto& x) { return st::sum(x.vix(idx) * w); }, x);
  const std::vector<double> wv = w.to_vector<double>();
  const std::vector<int64_t> iv = idx.to_vector<int64_t>();
  std::vector<double> expected(10, 0.0);
  for (std::size_t r = 0; r < iv.size(); ++r)
    for (std::size_t c = 0; c < 2; ++c) expected[std::size_t(iv[r]) * 2 + c] += wv[r * 2 + c];
  const std::vector<double> gv = g.to_vector<double>();
  for (std::size_t k = 0; k < gv.size(); ++k) CHECK(gv[k] == Approx(expected[k]).epsilon(1e-14));
  // Row 2 and 3 are never selected: exactly zero.
  CHECK(gv[4] == 0.0);
  CHECK(gv[7] == 0.0);
  // Forward and reverse Jacobians of a gather agree exactly.
  auto f = [&](const auto& x) { return x.oix(idx, st::all).ix(st::slice(1, 5)); };
  const st::Tensor jf = st::jacfwd(f, x), jr = st::jacrev(f, x);
  REQUIRE(jf.shape() == st::Shape{4, 2, 5, 2});
  REQUIRE(jf.to_vector<double>() == jr.to_vector<double>());
}

TEST_CASE("indexing derivatives: Hessian through a gather is symmetric", "[ad][index]") {
  const st::Tensor x = normal({6}, 307);
  const st::Tensor i = i64s({0, 5, 5, 2}, {4});
  const st::Tensor j = i64s({1, 1, 3, 2}, {4});
  auto f = [&](const auto& x) { return st::sum(st::tanh(x.vix(i) * x.vix(j))); };
  const st::Tensor H = st::hessian(f, x);
  REQUIRE(H.shape() == st::Shape{6, 6});
  const std::vector<double> h = H.to_vector<double>();
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b)
      CHECK(h[std::size_t(a * 6 + b)] == Approx(h[std::size_t(b * 6 + a)]));
  // x[4] is never read: its row and column are zero.
  for (int b = 0; b < 6; ++b) CHECK(h[std::size_t(4 * 6 + b)] == 0.0);
}
