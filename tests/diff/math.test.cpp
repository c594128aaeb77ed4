// SPDX-License-Identifier: MIT
// Tests for diff/math.hpp and diff/activations.hpp on plain st::Tensor: the
// elementwise functions and activations as free functions and methods, integer
// inputs, large |x|, against f64 references (tests/support/diff_ref.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

TEST_CASE("elementwise functions", "[diff]") {
  const Ref x{{2, 4}, random_values(8, 11, -3.0, 3.0)};
  const st::Tensor t = tensor(x.v, {2, 4});
  const Ref pos = map(x, [](double v) { return std::abs(v) + 0.1; });
  const st::Tensor tp = tensor(pos.v, {2, 4});
  SECTION("math functions as free functions and methods") {
    require_ref(st::exp(t), map(x, [](double v) { return std::exp(v); }));
    require_ref(st::log(tp), map(pos, [](double v) { return std::log(v); }));
    require_ref(st::sin(t), map(x, [](double v) { return std::sin(v); }));
    require_ref(st::cos(t), map(x, [](double v) { return std::cos(v); }));
    require_ref(st::sqrt(tp), map(pos, [](double v) { return std::sqrt(v); }));
    require_ref(st::tanh(t), map(x, [](double v) { return std::tanh(v); }));
    require_ref(st::abs(t), map(x, [](double v) { return std::abs(v); }));
    require_ref(st::sign(t), map(x, [](double v) { return double((v > 0) - (v < 0)); }));
    require_same(t.exp(), st::exp(t));
    require_same(tp.log(), st::log(tp));
    require_same(t.sin(), st::sin(t));
    require_same(t.cos(), st::cos(t));
    require_same(tp.sqrt(), st::sqrt(tp));
    require_same(t.tanh(), st::tanh(t));
    require_same(t.abs(), st::abs(t));
    require_same(t.sign(), st::sign(t));
  }
  SECTION("integer input gives f32") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{0, 1, 2}, {3});
    require_values(st::exp(i), {3}, {1.0, std::exp(1.0), std::exp(2.0)}, 1e-6, st::f32);
    require_values(st::sqrt(i), {3}, {0.0, 1.0, std::sqrt(2.0)}, 1e-6, st::f32);
  }
  SECTION("activations") {
    require_ref(st::sigmoid(t), map(x, sigmoid_ref));
    require_ref(st::relu(t), map(x, [](double v) { return v > 0 ? v : 0.0; }));
    require_ref(st::gelu(t), map(x, gelu_ref));
    require_ref(st::silu(t), map(x, [](double v) { return v * sigmoid_ref(v); }));
    require_ref(st::softplus(t), map(x, softplus_ref));
    require_ref(st::clamp(t, -1.0, 0.5),
                map(x, [](double v) { return std::min(std::max(v, -1.0), 0.5); }));
    require_same(t.sigmoid(), st::sigmoid(t));
    require_same(t.relu(), st::relu(t));
    require_same(t.gelu(), st::gelu(t));
    require_same(t.silu(), st::silu(t));
    require_same(t.softplus(), st::softplus(t));
    require_same(t.clamp(-1.0, 0.5), st::clamp(t, -1.0, 0.5));
  }
  SECTION("large |x| gives no NaN or overflow") {
    const Vec big = {-1000.0, -50.0, 0.0, 50.0, 1000.0};
    const st::Tensor b = tensor(big, {5});
    require_values(st::sigmoid(b), {5}, {0.0, sigmoid_ref(-50), 0.5, 1.0, 1.0}, 1e-12);
    require_values(st::softplus(b), {5}, {0.0, softplus_ref(-50), std::log(2.0), 50.0, 1000.0});
    require_values(st::silu(b), {5}, {0.0, -50 * sigmoid_ref(-50), 0.0, 50.0, 1000.0}, 1e-12);
    require_values(st::gelu(b), {5}, {0.0, 0.0, 0.0, 50.0, 1000.0}, 1e-12);
    const st::Tensor b32 = b.to(st::f32);
    for (const st::Tensor& r : {st::sigmoid(b32), st::softplus(b32), st::silu(b32)}) {
      for (double v : r.to_vector<double>()) CHECK(std::isfinite(v));
    }
  }
  SECTION("relu at exactly 0 and of integers") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{-2, 0, 3}, {3});
    require_values(st::relu(i), {3}, {0, 0, 3}, 0, st::i64);
    require_values(st::clamp(i, -1.0, 2.0), {3}, {-1, 0, 2}, 0, st::f32);
  }
}
