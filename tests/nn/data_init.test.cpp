// SPDX-License-Identifier: MIT
// Tests for nn/data.hpp (seeded shuffling, batches) and nn/init.hpp (the
// initialisers' bounds and moments against their published formulas).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "helpers.hpp"

using namespace nn_test;
namespace nn = st::nn;

TEST_CASE("permutation is a seeded permutation", "[nn]") {
  const std::vector<int64_t> a = nn::permutation(100, 1), b = nn::permutation(100, 1);
  CHECK(a == b);
  CHECK(a != nn::permutation(100, 2));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) CHECK(sorted[std::size_t(i)] == i);
  CHECK(a != sorted);
  CHECK(nn::permutation(0, 1).empty());
  CHECK_THROWS_AS(nn::permutation(-1, 1), st::ValueError);
  // More positions than a vector can hold: an st::Error, not std::length_error.
  CHECK_THROWS_AS(nn::permutation(std::numeric_limits<int64_t>::max(), 1), st::ValueError);
  CHECK_THROWS_WITH(nn::permutation(std::numeric_limits<int64_t>::max(), 1),
                    Catch::Contains("permutation") && Catch::Contains("out of memory"));
}

TEST_CASE("BatchIterator visits every sample once per epoch, in a seeded order", "[nn]") {
  const int64_t n = 10;
  // x row i is (i, -i); y is i: batches must keep rows and labels together.
  Vec xv;
  for (int64_t i = 0; i < n; ++i) {
    xv.push_back(double(i));
    xv.push_back(-double(i));
  }
  const st::Tensor x = tensor(xv, {n, 2});
  const st::Tensor y = st::arange(0, double(n));
  auto epoch = [](nn::BatchIterator& it) {
    std::vector<std::vector<int64_t>> out;
    while (auto b = it.next()) {
      const Vec bx = b->x.to_vector<double>();
      const std::vector<int64_t> by = b->y.to_vector<int64_t>();
      REQUIRE(b->x.shape() == st::Shape{int64_t(by.size()), 2});
      for (std::size_t r = 0; r < by.size(); ++r) {
        CHECK(bx[2 * r] == double(by[r]));
        CHECK(bx[2 * r + 1] == -double(by[r]));
      }
      out.push_back(by);
    }
    return out;
  };
  nn::BatchIterator it(x, y, 4, 7);
  CHECK(it.num_batches() == 3);
  const auto e0 = epoch(it), e1 = epoch(it);
  CHECK(it.epoch() == 2);
  REQUIRE(e0.size() == 3);
  CHECK(e0[0].size() == 4);
  CHECK(e0[2].size() == 2);
  std::vector<int64_t> all;
  for (const auto& b : e0) all.insert(all.end(), b.begin(), b.end());
  CHECK(std::set<int64_t>(all.begin(), all.end()).size() == std::size_t(n));
  CHECK(e0 != e1);  // a new order each epoch
  nn::BatchIterator again(x, y, 4, 7);
  CHECK(epoch(again) == e0);  // the same seed, the same batches

  nn::BatchIterator ordered(x, y, 3, 7, /*shuffle=*/false, /*drop_last=*/true);
  const auto eo = epoch(ordered);
  CHECK(eo == std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}});
  CHECK(ordered.num_batches() == 3);

  CHECK_THROWS_AS(nn::BatchIterator(x, st::arange(0, 9), 4, 0), st::ShapeError);
  CHECK_THROWS_AS(nn::BatchIterator(x, y, 0, 0), st::ValueError);
  CHECK_THROWS_AS(nn::BatchIterator(x, y, 11, 0, true, true), st::ValueError);
  CHECK_THROWS_AS(nn::BatchIterator(st::zeros({}), st::zeros({}), 1, 0), st::ShapeError);
}

namespace {
struct Moments {
  double mean = 0, sd = 0, lo = INFINITY, hi = -INFINITY;
};
Moments moments(const st::Tensor& t) {
  const Vec v = t.to_vector<double>();
  Moments m;
  for (double e : v) {
    m.mean += e / double(v.size());
    m.lo = std::min(m.lo, e);
    m.hi = std::max(m.hi, e);
  }
  for (double e : v) m.sd += (e - m.mean) * (e - m.mean) / double(v.size());
  m.sd = std::sqrt(m.sd);
  return m;
}
}  // namespace

TEST_CASE("initialisers follow their formulas", "[nn]") {
  namespace init = st::nn::init;
  // A [200, 150] weight: fan_in 150, fan_out 200 (PyTorch's convention).
  const st::Shape w{200, 150};
  CHECK(init::fans(w) == std::pair<int64_t, int64_t>{150, 200});
  CHECK(init::fans({8, 4, 3, 3}) == std::pair<int64_t, int64_t>{36, 72});
  CHECK(init::fans({5}) == std::pair<int64_t, int64_t>{5, 5});
  CHECK_THROWS_AS(init::fans({}), st::ShapeError);
  auto uniform_like = [](const Moments& m, double a) {
    CHECK(m.lo >= -a);
    CHECK(m.hi < a);
    CHECK(m.lo < -0.99 * a);  // the whole range is used
    CHECK(m.hi > 0.99 * a);
    CHECK(std::abs(m.sd - a / std::sqrt(3.0)) < 0.02 * a);
  };
  uniform_like(moments(init::xavier_uniform(w, 1)), std::sqrt(6.0 / 350));
  uniform_like(moments(init::kaiming_uniform(w, 2)), std::sqrt(2.0) * std::sqrt(3.0 / 150));
  uniform_like(moments(init::uniform(w, -0.3, 0.3, 3, st::f64)), 0.3);
  const Moments xn = moments(init::xavier_normal(w, 4, st::f64, 2.0));
  CHECK(std::abs(xn.sd - 2.0 * std::sqrt(2.0 / 350)) < 0.02 * xn.sd);
  CHECK(std::abs(xn.mean) < 0.01 * xn.sd * 10);
  const Moments kn = moments(init::kaiming_normal(w, 5));
  CHECK(std::abs(kn.sd - std::sqrt(2.0 / 150)) < 0.02 * kn.sd);
  const Moments nm = moments(init::normal(w, 3.0, 0.5, 6));
  CHECK(std::abs(nm.mean - 3.0) < 0.01);
  CHECK(std::abs(nm.sd - 0.5) < 0.01);
  // Seeded: the same seed gives the same tensor, in f32 and f64 alike.
  CHECK(init::kaiming_uniform(w, 9).to_vector<double>() ==
        init::kaiming_uniform(w, 9, st::f64).to(st::f32).to_vector<double>());
  CHECK(init::kaiming_uniform(w, 9).to_vector<double>() !=
        init::kaiming_uniform(w, 10).to_vector<double>());
  CHECK_THROWS_AS(init::uniform(w, 1, -1, 0), st::ValueError);
  CHECK_THROWS_AS(init::normal(w, 0, -1, 0), st::ValueError);
  CHECK_THROWS_AS(init::uniform(w, 0, 1, 0, st::i32), st::DTypeError);
  CHECK_THROWS_AS(init::kaiming_normal({0, 0}, 0), st::ValueError);
}
