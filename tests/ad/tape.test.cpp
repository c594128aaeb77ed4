// SPDX-License-Identifier: MIT
// Tests for the reverse-mode tape (ad/tape.hpp, ad/reverse.hpp): a node keeps
// only the residuals its rule declares (ad/rules/elementwise.hpp, rules::Binary::keeps), so what a
// recorded function keeps alive and which in-place writes break its backward
// pass follow from the rules, not from the op's arity.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <strata.hpp>
#include <thread>
#include <tuple>
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

TEST_CASE("tapes recycle their arrays per thread, across threads and repeated calls",
          "[ad][threads]") {
  // f(x, y) = sum(sin(x) * y) + sum(x * x): df/dx = cos(x) y + 2x, df/dy = sin(x).
  const std::vector<double> xv = {0.3, -1.2, 2.5, 0.7}, yv = {1.5, -0.4, 0.9, 2.2};
  auto f = [](const auto& x, const auto& y) { return st::sum(st::sin(x) * y) + st::sum(x * x); };
  auto check_gx = [&](const st::Tensor& gx) {
    const std::vector<double> a = gx.to_vector<double>();
    for (std::size_t i = 0; i < xv.size(); ++i) {
      CHECK(a[i] == Approx(std::cos(xv[i]) * yv[i] + 2 * xv[i]).epsilon(1e-14));
    }
  };
  auto check = [&](const st::Tensor& gx, const st::Tensor& gy) {
    check_gx(gx);
    const std::vector<double> b = gy.to_vector<double>();
    for (std::size_t i = 0; i < xv.size(); ++i)
      CHECK(b[i] == Approx(std::sin(xv[i])).epsilon(1e-14));
  };
  const st::Tensor x = st::from_vector(xv, {4}), y = st::from_vector(yv, {4});

  SECTION("tapes of growing and shrinking length in a row give the same gradients") {
    // Each tape takes over the arrays the previous one gave back.
    for (int reps : {1, 200, 3, 50, 1}) {
      auto g = [&](const auto& a, const auto& b) {
        auto acc = f(a, b);
        for (int i = 1; i < reps; ++i) acc = acc + 0.0 * st::sum(a * b);
        return acc;
      };
      const auto [gx, gy] = st::grad(g, x, y);
      check(gx, gy);
    }
  }
  SECTION("a pullback recorded on one thread runs and dies on another") {
    std::function<st::Tensor(const st::Tensor&)> pullback;
    std::thread recorder([&] {
      auto [out, pb] = st::vjp([&](const auto& a) { return f(a, y); }, x);
      pullback = pb;
    });
    recorder.join();  // the recording thread (and its pools) are gone
    check_gx(pullback(st::full({}, 1.0, st::f64)));
    pullback = nullptr;  // the tape dies here, on this thread
  }
  SECTION("threads recording at once") {
    std::vector<std::thread> threads;
    std::vector<st::Tensor> gx(4), gy(4);
    for (std::size_t t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 20; ++rep) {
          std::tie(gx[t], gy[t]) = st::grad(f, x, y);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (std::size_t t = 0; t < 4; ++t) check(gx[t], gy[t]);
  }
}
