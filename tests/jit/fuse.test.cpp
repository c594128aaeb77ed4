// SPDX-License-Identifier: MIT
// Tests for jit/fuse.hpp: a plan's fused elementwise chains give eager's bits on every fused
// pattern (dense and broadcast operands, comparisons into where, the NaN-safe products of the
// backward pass, integer dtypes, values read after the chain, blocks split across threads,
// lengths that are no multiple of a block or a vector), and the chains fuse as described.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <strata.hpp>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "support/jit_bits.hpp"
#include "support/naive.hpp"
#include "support/same_bits.hpp"

namespace st = strata;
using strata::testing::require_eager_bits;
using strata::testing::same_bits;
using strata::testing::special;

namespace {

/// Ten unary and binary ops with broadcast constants: the bench row's chain.
auto chain10 = [](const st::Tensor& v) {
  st::Tensor y = v * 1.5 + 0.25;
  y = st::tanh(y) * v;
  y = st::exp(y * -0.5) + y;
  y = st::sqrt(st::abs(y)) - v;
  return y * y;
};

}  // namespace

TEST_CASE("fused chains give eager's bits on every length and dtype", "[jit]") {
  for (const st::DType dtype : {st::f32, st::f64}) {
    // One element, one vector, a tail, a block and a tail, and enough blocks for two threads.
    for (const int64_t n : {1, 7, 16, 2049, 4096 * 9 + 3, 2048 * 40 + 11}) {
      const std::string plan =
          require_eager_bits(chain10, special(n, dtype, 1), special(n, dtype, 2));
      CHECK(plan.find("in 1 fused groups") != std::string::npos);
    }
  }
}

TEST_CASE("fused chains: two NaNs meeting give eager's NaN", "[jit]") {
  // w is NaN where v is, with the other sign: every op below meets two NaNs there, where the
  // result's payload is the hardware's choice of operand (the vector kernels fall back to
  // the eager code for such a block).
  auto f = [](const st::Tensor& v) {
    const st::Tensor w = -v * 3.0;
    return st::maximum(v * w, w / v) + (w - v) * st::minimum(w, v) + (v + w);
  };
  for (const st::DType dtype : {st::f32, st::f64}) {
    for (const int64_t n : {7, 2049, 2048 * 3}) {
      INFO(st::dtype_name(dtype) << " n " << n);
      require_eager_bits(f, special(n, dtype, 1), special(n, dtype, 2));
    }
  }
}

TEST_CASE("fused chains: comparisons, where, logical ops and integers", "[jit]") {
  auto relu_mix = [](const st::Tensor& v) {
    const st::Tensor pos = st::where(v > 0.0, v, st::zeros_like(v));
    const st::Tensor neg = st::where(v < -1.0, v * 2.0, v);
    return st::maximum(pos, neg) + st::minimum(pos, neg) * 0.5;
  };
  require_eager_bits(relu_mix, special(5000, st::f32, 3), special(5000, st::f32, 4));
  auto ints = [](const st::Tensor& v) { return st::maximum((v * 3 + 7) * v, v) - st::abs(v); };
  const st::Tensor i0 = (st::randn({3001}, 5, st::f64) * 100).to(st::i32);
  const st::Tensor i1 = (st::randn({3001}, 6, st::f64) * 100).to(st::i32);
  require_eager_bits(ints, i0, i1);
  auto logical = [](const st::Tensor& v) {
    return st::where(st::logical_and(v > 0.5, st::logical_not(v > 2.0)), v, -v) * 2.0;
  };
  require_eager_bits(logical, special(777, st::f64, 7), special(777, st::f64, 8));
}

TEST_CASE("fused chains: casts between every pair of dtypes", "[jit]") {
  // Floats (with inf, NaN, -0 and values past every integer's range, which saturate) through
  // every dtype and back, inside one chain.
  for (const st::DType from : {st::f32, st::f64}) {
    for (const st::DType to : {st::f32, st::f64, st::i32, st::i64, st::bool_}) {
      auto f = [to](const st::Tensor& v) {
        const st::Tensor w = (v * 1e9).to(to);
        return (w.to(st::f64) + v.to(st::f64)) * 0.5;
      };
      const std::string plan =
          require_eager_bits(f, special(3000, from, 11), special(3000, from, 12));
      INFO(plan);
      CHECK(plan.find("in 1 fused groups") != std::string::npos);
    }
  }
  // Integers and bools into floats, and a comparison's mask cast to a float.
  auto ints = [](const st::Tensor& v) {
    const st::Tensor mask = (v > 3).to(st::f32);
    return v.to(st::f32) * mask + v.to(st::f64).to(st::f32) - (v - 3).to(st::bool_).to(st::f32);
  };
  const st::Tensor i0 = (st::randn({2500}, 13, st::f64) * 50).to(st::i64);
  const st::Tensor i1 = (st::randn({2500}, 14, st::f64) * 50).to(st::i64);
  require_eager_bits(ints, i0, i1);
}

TEST_CASE("fused backward passes: NaN-safe products and many-output chains", "[jit]") {
  // grad of a function whose backward pass multiplies by zeros and infinities.
  auto f = [](const auto& x) { return st::sum(st::sqrt(st::abs(x)) * st::exp(-x * x) + x); };
  const st::Tensor x0 = special(4099, st::f64, 9), x1 = special(4099, st::f64, 10);
  auto g = st::jit(st::grad(f));
  (void)g(x0);
  REQUIRE(same_bits(g(x1), st::grad(f)(x1)));
  // One element, thousands of ops: the AD-overhead chain, value and gradient.
  auto longchain = [](const auto& x0) {
    auto x = x0;
    for (int i = 0; i < 300; ++i) x = st::sin(x) * x + 1.0;
    return x;
  };
  auto vg = st::jit(st::value_and_grad(longchain));
  const st::Tensor y0 = st::full({1}, 0.5, st::f32), y1 = st::full({1}, -1.25, st::f32);
  (void)vg(y0);
  auto [v, d] = vg(y1);
  auto [ve, de] = st::value_and_grad(longchain)(y1);
  REQUIRE(same_bits(v, ve));
  REQUIRE(same_bits(d, de));
  CHECK(st::jit_stats().steps_run > 1000);
}

TEST_CASE("a chain's values read after it are written, the rest are not", "[jit]") {
  // y is returned and also read inside the chain; z only inside.
  auto f = [](const st::Tensor& v) {
    const st::Tensor y = st::exp(v) + 1.0;
    const st::Tensor z = y * y;
    return std::make_pair(y, z - y);
  };
  auto jf = st::jit(f);
  const st::Tensor x0 = special(3000, st::f32, 11), x1 = special(3000, st::f32, 12);
  (void)jf(x0);
  auto [y, r] = jf(x1);
  auto [ye, re] = f(x1);
  REQUIRE(same_bits(y, ye));
  REQUIRE(same_bits(r, re));
  // A step that reads the chain through a view ends it: the transpose reads y as a matrix.
  auto g = [](const st::Tensor& v) {
    const st::Tensor y = st::exp(v) * 2.0;
    return st::transpose(y.reshape({50, 60}), 0, 1) + 1.0;
  };
  const std::string plan =
      require_eager_bits(g, special(3000, st::f32, 13), special(3000, st::f32, 14));
  CHECK(plan.find("fused:0") != std::string::npos);
}

TEST_CASE("fused chains gather broadcast, transposed and strided operands", "[jit]") {
  const st::Tensor bias = st::randn({37}, 20, st::f32);
  const st::Tensor w = st::randn({37, 50}, 21, st::f32);
  const st::Tensor tall = st::randn({100, 37}, 22, st::f32);
  auto f = [&](const st::Tensor& v) {                 // v [50, 37]
    const st::Tensor h = st::maximum(v + bias, 0.0);  // bias read as a row broadcast
    const st::Tensor c = h - st::sum(h, 1, true);     // the row sums as a column broadcast
    const st::Tensor every_other = tall.ix(st::slice(0, 100, 2));  // rows 0, 2, ...: strided
    return st::tanh(c) * st::transpose(w, 0, 1) + every_other * c;
  };
  const std::string plan = require_eager_bits(f, special(50 * 37, st::f32, 23).reshape({50, 37}),
                                              special(50 * 37, st::f32, 24).reshape({50, 37}));
  CHECK(plan.find("fused:0 reduce") != std::string::npos);  // the row sums join the chain
}

TEST_CASE("fused chains gather operands of every rank, blocks starting inside a row", "[jit]") {
  // [30, 20, 7]: 4200 elements, more than one block, and blocks start inside rows of 7.
  const st::Tensor across = st::randn({30, 1, 7}, 30, st::f64);    // broadcast along axis 1
  const st::Tensor wide = st::randn({30, 20, 14}, 31, st::f64);    // its [..., :7]: rows of 7
  const st::Tensor flipped = st::randn({7, 20, 30}, 32, st::f64);  // permuted: no axis merges
  const st::Tensor per_row = st::randn({30, 1, 1}, 33, st::f64);   // one value per 140
  auto f = [&](const st::Tensor& v) {
    const st::Tensor left = wide.ix(st::ellipsis, st::slice(0, 7));
    const st::Tensor turned = st::permute(flipped, {2, 1, 0});
    return ((v + across) * left - turned) * per_row + st::tanh(v) * left;
  };
  const auto shape = st::Shape{30, 20, 7};
  const std::string plan = require_eager_bits(f, special(4200, st::f64, 34).reshape(shape),
                                              special(4200, st::f64, 35).reshape(shape));
  CHECK(plan.find("fused:0") != std::string::npos);
  CHECK(plan.find("fused:1") == std::string::npos);  // one chain
}
