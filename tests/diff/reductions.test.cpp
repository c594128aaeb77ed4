// SPDX-License-Identifier: MIT
// Tests for diff/reductions.hpp and diff/statistics.hpp on plain st::Tensor: sum,
// max, min, mean, var, std over every set of axes with and without keepdims, norm,
// argmax and argmin; logsumexp, softmax and log_softmax on huge and empty rows.
// References: naive f64 loops (tests/support/diff_ref.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

TEST_CASE("reductions with axes and keepdims", "[diff]") {
  const Ref x{{2, 3, 4}, random_values(24, 21)};
  const st::Tensor t = tensor(x.v, {2, 3, 4});
  const auto plus = [](double a, double b) { return a + b; };
  const auto maxf = [](double a, double b) { return std::max(a, b); };
  const auto minf = [](double a, double b) { return std::min(a, b); };
  const std::vector<Dims> axis_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const Dims& axes : axis_sets) {
    for (bool keep : {false, true}) {
      INFO("axes " << st::Shape(axes) << ", keepdims " << keep);
      const st::Shape ax(axes);
      require_ref(st::sum(t, ax, keep), reduce(x, axes, keep, 0.0, plus), 1e-12);
      require_ref(st::max(t, ax, keep), reduce(x, axes, keep, -kInf, maxf), 0);
      require_ref(st::min(t, ax, keep), reduce(x, axes, keep, kInf, minf), 0);
      require_same(t.sum(ax, keep), st::sum(t, ax, keep));
      require_same(t.max(ax, keep), st::max(t, ax, keep));
      require_same(t.min(ax, keep), st::min(t, ax, keep));
      // mean, var (population) and std from the sums.
      const Ref s = reduce(x, axes, keep, 0.0, plus);
      const double count = double(numel(x.shape) / numel(s.shape));
      const Ref mean = map(s, [&](double v) { return v / count; });
      require_ref(st::mean(t, ax, keep), mean, 1e-12);
      // Sum of squared deviations: broadcast the kept-dims mean back over x.
      const Ref mean_kept =
          map(reduce(x, axes, true, 0.0, plus), [&](double v) { return v / count; });
      const Ref sq = broadcast(x, mean_kept, [](double a, double m) { return (a - m) * (a - m); });
      const Ref var = map(reduce(sq, axes, keep, 0.0, plus), [&](double v) { return v / count; });
      require_ref(st::var(t, ax, keep), var, 1e-12);
      require_ref(st::std(t, ax, keep), map(var, [](double v) { return std::sqrt(v); }), 1e-12);
      require_same(t.mean(ax, keep), st::mean(t, ax, keep));
      require_same(t.var(ax, keep), st::var(t, ax, keep));
      require_same(t.std(ax, keep), st::std(t, ax, keep));
    }
  }
  SECTION("norm") {
    double ss = 0;
    for (double v : x.v) ss += v * v;
    require_values(st::norm(t), {}, {std::sqrt(ss)});
    require_same(t.norm(), st::norm(t));
  }
  SECTION("mean of integers is f32") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{1, 2, 3, 5}, {2, 2});
    require_values(st::mean(i), {}, {2.75}, 1e-7, st::f32);
    require_values(st::mean(i, {0}), {2}, {2.0, 3.5}, 1e-7, st::f32);
    require_values(st::sum(i, {1}), {2}, {3, 8}, 0, st::i64);
  }
  SECTION("argmax and argmin, ties give the first position") {
    const st::Tensor m = tensor({1.0, 3.0, 3.0, -1.0, 0.5, -4.0, -4.0, 2.0}, {2, 4});
    require_values(st::argmax(m, 1), {2}, {1, 3}, 0, st::i64);
    require_values(st::argmin(m, 1), {2}, {3, 1}, 0, st::i64);
    require_values(st::argmax(m, 0), {4}, {0, 0, 0, 1}, 0, st::i64);
    require_values(st::argmin(m, 0, true), {1, 4}, {1, 1, 1, 0}, 0, st::i64);
    require_values(st::argmax(m, -1, true), {2, 1}, {1, 3}, 0, st::i64);
    // Against a loop on random data.
    Vec expected;
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t k = 0; k < 4; ++k) {
        int64_t best = 0;
        for (int64_t j = 1; j < 3; ++j) {
          if (x.v[std::size_t((i * 3 + j) * 4 + k)] > x.v[std::size_t((i * 3 + best) * 4 + k)])
            best = j;
        }
        expected.push_back(double(best));
      }
    }
    require_values(st::argmax(t, 1), {2, 4}, expected, 0, st::i64);
  }
}

TEST_CASE("logsumexp, softmax and log_softmax are stable", "[diff]") {
  // Rows of ordinary, huge, hugely negative and mixed values.
  const Vec v = {0.5,    -1.0,   2.0,   0.25,  1000.0, 1000.5, 999.0, 1001.0,
                 -1000., -999.5, -1001, -1000, 1000.0, -1000., 0.0,   3.0};
  const st::Tensor t = tensor(v, {4, 4});
  Vec lse, soft, logsoft;
  for (std::size_t r = 0; r < 4; ++r) {
    const Vec row(v.begin() + std::ptrdiff_t(4 * r), v.begin() + std::ptrdiff_t(4 * r + 4));
    const double l = lse_ref(row);
    lse.push_back(l);
    for (double e : row) {
      soft.push_back(std::exp(e - l));
      logsoft.push_back(e - l);
    }
  }
  require_values(st::logsumexp(t, {1}), {4}, lse);
  require_values(st::logsumexp(t, {1}, true), {4, 1}, lse);
  require_values(st::softmax(t, 1), {4, 4}, soft);
  require_values(st::log_softmax(t, 1), {4, 4}, logsoft);
  require_same(t.logsumexp({1}), st::logsumexp(t, {1}));
  require_same(t.softmax(1), st::softmax(t, 1));
  require_same(t.log_softmax(1), st::log_softmax(t, 1));
  // Along axis 0 and over everything.
  Vec lse0;
  for (std::size_t c = 0; c < 4; ++c)
    lse0.push_back(lse_ref({v[c], v[4 + c], v[8 + c], v[12 + c]}));
  require_values(st::logsumexp(t, {0}), {4}, lse0);
  require_values(st::logsumexp(t), {}, {lse_ref(v)});
  Vec soft0(16);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t c = 0; c < 4; ++c) soft0[r * 4 + c] = std::exp(v[r * 4 + c] - lse0[c]);
  }
  require_values(st::softmax(t, 0), {4, 4}, soft0);
  SECTION("f32 rows of huge values") {
    const st::Tensor t32 = t.to(st::f32);
    require_values(st::logsumexp(t32, {1}), {4}, lse, 1e-6, st::f32);
    require_values(st::softmax(t32, 1), {4, 4}, soft, 1e-6, st::f32);
  }
  SECTION("a row of -inf stays -inf") {
    const st::Tensor n = tensor({-kInf, -kInf, 0.0, 1.0}, {2, 2});
    require_values(st::logsumexp(n, {1}), {2}, {-kInf, lse_ref({0.0, 1.0})});
  }
}

TEST_CASE("softmax, log_softmax and logsumexp over an empty axis", "[diff]") {
  const st::Tensor e = st::zeros({3, 0}, st::f64);
  // An empty axis: softmax and log_softmax are empty of the same shape (NumPy,
  // PyTorch, JAX); logsumexp is the log of an empty sum, -inf.
  require_values(st::softmax(e, 1), {3, 0}, {});
  require_values(st::log_softmax(e, 1), {3, 0}, {});
  require_values(st::logsumexp(e, {1}), {3}, {-kInf, -kInf, -kInf});
  require_values(st::logsumexp(e, {1}, true), {3, 1}, {-kInf, -kInf, -kInf});
  require_values(st::logsumexp(st::zeros({0}, st::f64)), {}, {-kInf});
  // Empty along another axis: every row there is, is empty too.
  const st::Tensor r = st::zeros({0, 3}, st::f64);
  require_values(st::softmax(r, 1), {0, 3}, {});
  require_values(st::log_softmax(r, 1), {0, 3}, {});
  require_values(st::logsumexp(r, {1}), {0}, {});
  require_values(st::softmax(r, 0), {0, 3}, {});
  require_values(st::logsumexp(r, {0}), {3}, {-kInf, -kInf, -kInf});
  // Their derivatives are empty (or zero) too, not an error.
  const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::softmax(x, 1)); }, e);
  CHECK(g.shape() == st::Shape{3, 0});
}
