// SPDX-License-Identifier: MIT
// NaN in gives NaN out through every composite of diff/ built on where or on
// comparisons (relu, clamp, maximum, abs, softplus, sigmoid, silu, max, min,
// logsumexp, softmax), in f64 and f32.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

namespace {

/// Checks t against fn applied to each input, NaN where the reference is NaN.
void require_nan_aware(const st::Tensor& t, const Dims& shape, const Vec& expected) {
  INFO("shape " << t.shape());
  REQUIRE(t.shape() == st::Shape(shape));
  const Vec got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(got[i] == expected[i]);
    } else {
      CHECK(std::abs(got[i] - expected[i]) <= 1e-6 * (1.0 + std::abs(expected[i])));
    }
  }
}

/// fn of every element; NaN in gives NaN out (what fn does with NaN is not trusted).
Vec map_nan(const Vec& x, const std::function<double(double)>& fn) {
  Vec r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = std::isnan(x[i]) ? NAN : fn(x[i]);
  return r;
}

}  // namespace

TEST_CASE("NaN in gives NaN out through every composite built on where or comparisons", "[diff]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vec x = random_values(12, 77);
  x[1] = nan;
  x[6] = nan;
  x[4] = 0.0;
  x[9] = kInf;
  x[10] = -kInf;
  const Dims shape{3, 4};
  for (st::DType dt : {st::f64, st::f32}) {
    INFO("dtype " << st::dtype_name(dt));
    const st::Tensor t = tensor(x, {3, 4}).to(dt);
    {  // elementwise
      require_nan_aware(st::relu(t), shape, map_nan(x, [](double v) { return v > 0 ? v : 0.0; }));
      require_nan_aware(st::clamp(t, -1.0, 0.5), shape,
                        map_nan(x, [](double v) { return std::min(std::max(v, -1.0), 0.5); }));
      require_nan_aware(st::maximum(t, 0.25), shape,
                        map_nan(x, [](double v) { return std::max(v, 0.25); }));
      require_nan_aware(st::minimum(t, 0.25), shape,
                        map_nan(x, [](double v) { return std::min(v, 0.25); }));
      require_nan_aware(st::maximum(0.25, t), shape,
                        map_nan(x, [](double v) { return std::max(v, 0.25); }));
      require_nan_aware(st::abs(t), shape, map_nan(x, [](double v) { return std::abs(v); }));
      require_nan_aware(st::softplus(t), shape, map_nan(x, softplus_ref));
      require_nan_aware(st::sigmoid(t), shape, map_nan(x, sigmoid_ref));
      require_nan_aware(st::silu(t), shape,
                        map_nan(x, [](double v) { return v * sigmoid_ref(v); }));
    }
    {  // reductions and normalisations: a row with a NaN is NaN, the others are not.
      // Rows: {x0..x3} has x1 = NaN, {x4..x7} has x6 = NaN, {x8..x11} has +inf and -inf.
      require_nan_aware(st::max(t, {1}), {3}, {nan, nan, kInf});
      require_nan_aware(st::min(t, {1}), {3}, {nan, nan, -kInf});
      require_nan_aware(st::logsumexp(t, {1}), {3}, {nan, nan, kInf});
      require_nan_aware(st::softmax(t, 1).ix(st::slice(0, 2)), {2, 4}, Vec(8, nan));
      require_nan_aware(st::log_softmax(t, 1).ix(st::slice(0, 2)), {2, 4}, Vec(8, nan));
      // Column 0 holds no NaN or inf: its max and softmax are ordinary numbers.
      const double c0 = std::max({x[0], x[4], x[8]});
      require_nan_aware(st::max(t.ix(st::all, 0), {0}), {}, {c0});
    }
  }
}
