// SPDX-License-Identifier: MIT
// Tests for jit/jit.hpp and jit/plan.hpp on several threads: one jitted function called from
// several threads at once (its cache and its plan shared, the fused groups' blocks split over
// the pool), and traces recorded on several threads at once (each thread's recorder is its
// own). Run under ThreadSanitizer by `make test-tsan`.
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <thread>
#include <vector>

#include "jit/jit.hpp"
#include "support/same_bits.hpp"

namespace st = strata;
using strata::testing::same_bits;

namespace {

/// A loss long enough that its elementwise chains are fused and, at 2^17 elements, split into
/// pieces over the pool's threads.
auto loss = [](const auto& x) {
  auto y = st::tanh(x) * st::exp(x * 0.25) + x * x;
  return st::sum(st::sqrt(y * y + 1.0)) + st::sum(st::sin(x)) * 0.5;
};

constexpr int kThreads = 4;
constexpr int kCalls = 6;

}  // namespace

TEST_CASE("jit: one jitted function called from several threads at once", "[jit][threads]") {
  const st::Shape shape{int64_t(1) << 17};
  std::vector<st::Tensor> xs, expected;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(st::randn(shape, uint64_t(40 + t), st::f32));
    expected.push_back(st::grad(loss)(xs.back()));
  }
  auto g = st::jit(st::grad(loss));
  REQUIRE(same_bits(g(xs[0]), expected[0]));  // traced here: the threads below replay the plan
  st::reset_jit_stats();

  std::array<int, kThreads> wrong{};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kCalls; ++k) {
        if (!same_bits(g(xs[std::size_t(t)]), expected[std::size_t(t)])) ++wrong[std::size_t(t)];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(wrong[std::size_t(t)] == 0);
  const st::JitStats s = st::jit_stats();
  CHECK(s.traces == 0);
  CHECK(s.hits == uint64_t(kThreads * kCalls));
}

TEST_CASE("jit: traces recorded on several threads at once stay apart", "[jit][threads]") {
  // Each thread traces its own jitted function (its own shape, so its own plan) while the
  // others trace theirs: a raw call is recorded by its own thread's recorder only.
  std::array<int, kThreads> wrong{};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const st::Tensor x = st::randn({int64_t(1000 + 97 * t)}, uint64_t(60 + t), st::f64);
      const st::Tensor y = st::randn({int64_t(1000 + 97 * t)}, uint64_t(70 + t), st::f64);
      auto g = st::jit(st::value_and_grad(loss));
      for (const st::Tensor& v : {x, y, x}) {
        auto [value, grad] = g(v);
        auto [value_eager, grad_eager] = st::value_and_grad(loss)(v);
        if (!same_bits(value, value_eager) || !same_bits(grad, grad_eager)) ++wrong[std::size_t(t)];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(wrong[std::size_t(t)] == 0);
}
