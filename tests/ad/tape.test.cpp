// SPDX-License-Identifier: MIT
// Tests for the reverse-mode tape (ad/tape.hpp, ad/reverse.hpp): a node keeps
// only the residuals its rule declares (ad/rules/elementwise.hpp, rules::Binary::keeps), so what a
// recorded function keeps alive and which in-place writes break its backward
// pass follow from the rules, not from the op's arity.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/device.hpp"

namespace st = strata;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kFloatsPerMiB = kMiB / 4;

std::size_t bytes_in_use() { return st::testing::test_allocator().stats().bytes_in_use; }

/// Bytes held by the recorded tape of f at x: allocator bytes in use after
/// st::vjp has recorded f (before any backward pass), minus those in use
/// before, minus f's output itself.
template <class F>
double retained_mib(F f, const st::Tensor& x) {
  const std::size_t before = bytes_in_use();
  auto [y, pullback] = st::vjp(f, x);
  const std::size_t after = bytes_in_use();
  const double out = double(y.numel()) * double(st::dtype_size(y.dtype()));
  return (double(after) - double(before) - out) / double(kMiB);
}

}  // namespace

TEST_CASE("the tape keeps only the residuals the rules declare", "[ad]") {
  const st::Tensor x = st::randn({kFloatsPerMiB}, 7, st::f32);  // one 1 MiB leaf
  const st::Tensor c = st::randn({kFloatsPerMiB}, 8, st::f32);  // a captured 1 MiB constant

  SECTION("a chain of 1000 adds of 1 MiB tensors keeps O(1) tensors") {
    auto chain = [&](const auto& a) {
      auto y = a + c;
      for (int i = 0; i < 999; ++i) y = y + a;
      return y;
    };
    CHECK(retained_mib(chain, x) <= 2.0);
    // And the gradient is still right: d/dx of x + c + 999 x is 1000.
    auto [y, pullback] = st::vjp(chain, x);
    const std::vector<float> g = pullback(st::ones({kFloatsPerMiB}, st::f32)).to_vector<float>();
    CHECK(g.front() == 1000.0f);
    CHECK(g.back() == 1000.0f);
  }
  SECTION("sub and neg keep nothing either") {
    auto chain = [&](const auto& a) {
      auto y = a - c;
      for (int i = 0; i < 200; ++i) y = -(y - a);
      return y;
    };
    CHECK(retained_mib(chain, x) <= 2.0);
  }
  SECTION("a chain of tanh keeps every output (the measure sees what is kept)") {
    auto chain = [](const auto& a) {
      auto y = a;
      for (int i = 0; i < 20; ++i) y = st::tanh(y);
      return y;
    };
    const double kept = retained_mib(chain, x);
    CHECK(kept >= 19.0);
    CHECK(kept <= 22.0);
  }
  SECTION("multiplying by a constant keeps the constant, not the chain") {
    // Each mul's only differentiable input is the chain value; its rule reads
    // the other operand (c), which is one shared tensor.
    auto chain = [&](const auto& a) {
      auto y = a;
      for (int i = 0; i < 50; ++i) y = y * c;
      return y;
    };
    CHECK(retained_mib(chain, x) <= 2.0);
  }
}

TEST_CASE("in-place writes after recording break only the rules that read the value", "[ad]") {
  const std::vector<double> xv = {0.5, -1.0, 2.0}, wv = {1.5, 0.25, -2.0};
  const st::Tensor seed = st::ones({3}, st::f64);

  SECTION("writing into an add's input is harmless") {
    st::Tensor w = st::from_vector(wv, {3});
    auto [y, pullback] = st::vjp([&](const auto& a) { return a + w; }, st::from_vector(xv, {3}));
    w.mul_(st::full({}, 2.0, st::f64));
    CHECK(pullback(seed).to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
  }
  SECTION("writing into the leaf of an add chain is harmless") {
    st::Tensor x = st::from_vector(xv, {3});
    auto [y, pullback] = st::vjp([](const auto& a) { return (a + a) - a; }, x);
    x.add_(st::full({}, 1.0, st::f64));
    CHECK(pullback(seed).to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
  }
  SECTION("writing into a mul's input still raises") {
    st::Tensor w = st::from_vector(wv, {3});
    auto [y, pullback] = st::vjp([&](const auto& a) { return a * w; }, st::from_vector(xv, {3}));
    w.mul_(st::full({}, 2.0, st::f64));
    CHECK_THROWS_AS(pullback(seed), st::ValueError);
  }
  SECTION("a rule that reads its output does not mind its input being written") {
    // exp keeps exp(x), not x: the gradient is the saved output.
    st::Tensor x = st::from_vector(xv, {3});
    auto [y, pullback] = st::vjp([](const auto& a) { return st::exp(a); }, x);
    x.add_(st::full({}, 1.0, st::f64));
    const std::vector<double> g = pullback(seed).to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) CHECK(g[i] == Approx(std::exp(xv[i])));
  }
  SECTION("a rule that reads its input raises when the input is written") {
    st::Tensor x = st::from_vector(xv, {3});
    auto [y, pullback] = st::vjp([](const auto& a) { return st::sin(a); }, x);
    x.add_(st::full({}, 1.0, st::f64));
    CHECK_THROWS_AS(pullback(seed), st::ValueError);
  }
}
