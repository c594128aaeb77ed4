// SPDX-License-Identifier: MIT
// Derivative tests of vectorized indexing, masks and repeated indices (diff/index.hpp):
// check_grads against f64 finite differences, exact accumulation of repeated
// indices, and the Hessian through a gather against its closed form.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::i64s;
using st::testing::normal;

TEST_CASE("indexing derivatives: vectorized indexing and masks", "[ad][index]") {
  const st::Tensor x = normal({4, 3, 2}, 303);
  const st::Tensor i = i64s({2, 2, 0, -1}, {2, 2});
  const st::Tensor j = i64s({1, 1}, {1, 2});
  check_grads<3>([&](const auto& x) { return st::sin(x.vix(i, j)); }, {x});
  check_grads<2>(
      [&](const auto& x) {
        return x.vix(st::all, j, i64s({1, 0}, {2, 1})).pow(2.0);
      },
      {x});
  const st::Tensor mask = normal({3, 2}, 304) > 0.0;
  check_grads<3>([&](const auto& x) { return st::tanh(x.oix(st::all, mask)); }, {x});
  check_grads<2>(
      [&](const auto& x) { return x.vix(st::all, mask.ix(st::all, 0), 1) * x.ix(0, 0, 0); }, {x});
  // A mask built from the value itself (a constant of every level).
  check_grads<2>([](const auto& x) { return st::exp(x.oix(st::plain(x) > 0.0)); }, {x});
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

TEST_CASE("indexing derivatives: the Hessian through a gather, exactly", "[ad][index]") {
  const st::Tensor x = normal({6}, 307);
  const std::vector<int64_t> iv{0, 5, 5, 2}, jv{1, 1, 3, 2};
  const st::Tensor i = i64s(iv, {4}), j = i64s(jv, {4});
  auto f = [&](const auto& x) { return st::sum(st::tanh(x.vix(i) * x.vix(j))); };
  // f = sum_k tanh(u_k), u_k = x[i_k] x[j_k], so with t = tanh(u_k):
  //   H = sum_k tanh''(u_k) g_k g_k^T + tanh'(u_k) (e_i e_j^T + e_j e_i^T),
  // g_k = x[j_k] e_i + x[i_k] e_j the gradient of u_k (i = i_k, j = j_k; for i = j both
  // terms land on one element: g = 2 x_i e_i, and e_i e_i^T twice). x[4] is never read.
  const std::vector<double> xv = x.to_vector<double>();
  std::vector<double> want(36, 0.0);
  for (std::size_t k = 0; k < iv.size(); ++k) {
    const std::size_t a = std::size_t(iv[k]), b = std::size_t(jv[k]);
    const double t = std::tanh(xv[a] * xv[b]), d1 = 1 - t * t, d2 = -2 * t * d1;
    std::vector<double> g(6, 0.0);
    g[a] += xv[b];
    g[b] += xv[a];
    for (std::size_t r = 0; r < 6; ++r)
      for (std::size_t c = 0; c < 6; ++c) want[r * 6 + c] += d2 * g[r] * g[c];
    want[a * 6 + b] += d1;
    want[b * 6 + a] += d1;
  }
  auto require_exact = [&](const st::Tensor& H, const char* how) {
    INFO(how);
    REQUIRE(H.shape() == st::Shape{6, 6});
    const std::vector<double> h = H.to_vector<double>();
    for (std::size_t e = 0; e < 36; ++e) {
      INFO("element (" << e / 6 << ", " << e % 6 << ")");
      CHECK(h[e] == Approx(want[e]).epsilon(1e-12).margin(1e-14));
    }
  };
  require_exact(st::hessian(f, x), "hessian (forward over reverse)");
  require_exact(st::jacrev(st::grad(f), x), "reverse over reverse");
  require_exact(st::jacfwd([&](const auto& v) { return st::jacfwd(f, v); }, x),
                "forward over forward");
}
