// SPDX-License-Identifier: MIT
// Tests for diff/debug_nans.hpp: st::DebugNans, st::debug_nans_enabled and the check each
// value-computing primitive of Prims<Tensor> makes while the switch is on.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <strata.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/device.hpp"
#include "support/diff_ref.hpp"

namespace st = strata;
using st::testing::diff_ref::kInf;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

st::Tensor vec(std::vector<double> v) { return st::from_vector(v).to(st::f32); }

/// What this process started with: STRATA_DEBUG_NANS == "1" (ctest sets it for one run only).
bool env_on() { return st::detail::parse_debug_nans_env(std::getenv("STRATA_DEBUG_NANS")); }

/// The ValueError f throws (FAIL when it throws none).
template <class F>
std::string debug_nans_error(F&& f) {
  try {
    f();
  } catch (const st::ValueError& e) {
    return e.what();
  }
  FAIL("no ValueError thrown");
  return "";
}

/// A two-layer MLP's cross-entropy loss: matmul, add, tanh, relu, log_softmax (max, exp, log,
/// sum), index_select through the labels.
template <class A, class B, class C>
auto mlp_loss(const A& w1, const B& b1, const C& w2, const st::Tensor& x, const st::Tensor& y) {
  const auto h = st::relu(st::tanh(st::matmul(x, w1) + b1));
  return st::nn::cross_entropy(st::matmul(h, w2), y);
}

}  // namespace

TEST_CASE("debug_nans: off by default, NaNs flow silently", "[diff]") {
  REQUIRE(st::debug_nans_enabled() == env_on());
  if (env_on()) return;  // the run under STRATA_DEBUG_NANS=1 checks the other side
  const st::Tensor y = st::log(vec({-1.0, 2.0}));
  CHECK(std::isnan(y.to_vector<float>()[0]));
}

// Run by ctest as its own test with STRATA_DEBUG_NANS=1 in the environment (hidden otherwise).
TEST_CASE("debug_nans: STRATA_DEBUG_NANS=1 switches it on from the start",
          "[.][debug_nans_env][threads]") {
  REQUIRE(env_on());
  CHECK(st::debug_nans_enabled());
  CHECK(debug_nans_error([] { (void)st::log(vec({-1.0})); }).find("debug_nans: log") == 0);
  bool other_enabled = false;
  std::thread t([&] { other_enabled = st::debug_nans_enabled(); });
  t.join();
  CHECK(other_enabled);  // every thread starts from the environment
  {
    st::DebugNans off(false);
    CHECK_FALSE(st::debug_nans_enabled());
  }
  CHECK(st::debug_nans_enabled());
}

TEST_CASE("debug_nans: the guard switches on, nests and restores", "[diff]") {
  st::DebugNans base(false);  // a known starting point, whatever the environment says
  {
    st::DebugNans on;
    CHECK(st::debug_nans_enabled());
    {
      st::DebugNans off(false);
      CHECK_FALSE(st::debug_nans_enabled());
      CHECK_NOTHROW((void)st::log(vec({-1.0})));  // off inside: no check
      {
        st::DebugNans again;
        CHECK(st::debug_nans_enabled());
      }
      CHECK_FALSE(st::debug_nans_enabled());
    }
    CHECK(st::debug_nans_enabled());
  }
  CHECK_FALSE(st::debug_nans_enabled());
  // An exception leaving the scope restores the state too.
  try {
    st::DebugNans on;
    (void)st::log(vec({-1.0}));
  } catch (const st::ValueError&) {
  }
  CHECK_FALSE(st::debug_nans_enabled());
}

TEST_CASE("debug_nans: the switch is per thread", "[diff][threads]") {
  if (env_on()) return;  // another thread starts from the environment: on
  st::DebugNans on;
  bool other_enabled = true, other_threw = true;
  std::thread t([&] {
    const st::DefaultDevice on(st::testing::test_device());  // a new thread starts on the CPU
    other_enabled = st::debug_nans_enabled();
    try {
      (void)st::log(vec({-1.0}));
      other_threw = false;
    } catch (const st::ValueError&) {
    }
  });
  t.join();
  CHECK_FALSE(other_enabled);
  CHECK_FALSE(other_threw);
  CHECK(st::debug_nans_enabled());
}

TEST_CASE("debug_nans: a forward primitive that makes a NaN throws", "[diff]") {
  st::DebugNans on;
  SECTION("log(-1)") {
    const st::Tensor x = st::full({3, 4}, -1.0);
    const std::string msg = debug_nans_error([&] { (void)st::log(x); });
    CHECK(msg ==
          "debug_nans: log produced NaN in the forward pass from inputs without NaN "
          "(input f32[3, 4]; output f32[3, 4])");
  }
  SECTION("sqrt(-1), f64") {
    const std::string msg = debug_nans_error([] {
      (void)st::sqrt(st::from_vector(std::vector<double>{4, -1}));
    });
    CHECK(msg ==
          "debug_nans: sqrt produced NaN in the forward pass from inputs without NaN "
          "(input f64[2]; output f64[2])");
  }
  SECTION("inf - inf") {
    const std::string msg = debug_nans_error([] { (void)(vec({kInf, 1}) - vec({kInf, 1})); });
    CHECK(msg ==
          "debug_nans: sub produced NaN in the forward pass from inputs without NaN "
          "(inputs f32[2], f32[2]; output f32[2])");
  }
  SECTION("0 / 0") {
    const std::string msg = debug_nans_error([] { (void)(vec({0, 1}) / vec({0, 2})); });
    CHECK(msg.find("debug_nans: div produced NaN in the forward pass") == 0);
  }
  SECTION("0 * inf") {
    const std::string msg = debug_nans_error([] { (void)(vec({0}) * vec({kInf})); });
    CHECK(msg.find("debug_nans: mul produced NaN") == 0);
  }
  SECTION("a sum of inf and -inf") {
    const std::string msg = debug_nans_error([] { (void)st::sum(vec({kInf, -kInf})); });
    CHECK(msg ==
          "debug_nans: sum produced NaN in the forward pass from inputs without NaN "
          "(input f32[2]; output f32[])");
  }
  SECTION("matmul of inf and 0") {
    const st::Tensor a = vec({kInf, 1}).reshape({1, 2}), b = vec({0, 1}).reshape({2, 1});
    const std::string msg = debug_nans_error([&] { (void)st::matmul(a, b); });
    CHECK(msg ==
          "debug_nans: matmul produced NaN in the forward pass from inputs without NaN "
          "(inputs f32[1, 2], f32[2, 1]; output f32[1, 1])");
  }
  SECTION("index_add of inf and -inf") {
    const st::Tensor idx = st::from_vector(std::vector<int64_t>{0, 0});
    const std::string msg = debug_nans_error([&] {
      (void)st::Prims<st::Tensor>::index_add(vec({0}), 0, idx, vec({kInf, -kInf}));
    });
    CHECK(msg ==
          "debug_nans: index_add produced NaN in the forward pass from inputs without NaN "
          "(inputs f32[1], i64[2], f32[2]; output f32[1])");
  }
}

TEST_CASE("debug_nans: NaN-free results and NaN inputs do not throw", "[diff]") {
  st::DebugNans on;
  SECTION("a NaN input propagates") {
    const st::Tensor y = vec({kNaN, 1}) + 1.0;
    CHECK(std::isnan(y.to_vector<float>()[0]));
    CHECK_NOTHROW(st::sum(y));
    CHECK_NOTHROW(st::exp(y));
    CHECK_NOTHROW(st::concat(std::vector<st::Tensor>{y, vec({2})}, 0));
    CHECK_NOTHROW(st::where(vec({1, 0}) > 0.0, y, vec({0, 0})));
  }
  SECTION("safe_mul and safe_div make no NaN from 0 and inf") {
    using P = st::Prims<st::Tensor>;
    const st::Tensor zero = vec({0, 0}), inf = vec({kInf, kInf});
    CHECK(P::binary(st::BinaryOp::safe_mul, zero, inf).to_vector<float>() ==
          std::vector<float>{0, 0});
    CHECK(P::binary(st::BinaryOp::safe_div, zero, zero).to_vector<float>() ==
          std::vector<float>{0, 0});
  }
  SECTION("inf, integer and bool results are not NaN") {
    CHECK_NOTHROW(vec({1}) / vec({0}));
    CHECK_NOTHROW(st::log(vec({0})));
    CHECK_NOTHROW(st::arange(0, 4) + st::arange(0, 4));
    CHECK_NOTHROW(st::argmax(vec({kInf, -kInf}), 0));
    CHECK_NOTHROW(vec({kNaN}) == vec({kNaN}));
    CHECK_NOTHROW(st::sum(st::zeros({0}, st::f32)));
  }
}

TEST_CASE("debug_nans: a NaN first made by the backward pass names it", "[diff]") {
  // Forward: sqrt(0) - sqrt(0) = 0, no NaN. Backward: sqrt's pullbacks give +inf and -inf
  // (1 / (2 sqrt(0))), and the tape adds them into x's cotangent: inf + -inf = NaN.
  auto f = [](const auto& x) { return st::sum(st::sqrt(x) - st::sqrt(x)); };
  const st::Tensor x = vec({0, 1});
  {
    st::DebugNans off(false);
    const st::Tensor g = st::grad(f, x);  // off: the NaN gradient comes back silently
    CHECK(std::isnan(g.to_vector<float>()[0]));
  }
  st::DebugNans on;
  CHECK_NOTHROW(f(x));
  const std::string msg = debug_nans_error([&] { (void)st::grad(f, x); });
  CHECK(msg ==
        "debug_nans: add produced NaN in the backward pass from inputs without NaN "
        "(inputs f32[2], f32[2]; output f32[2])");
  // The pass flag ends with the backward pass: a forward NaN afterwards says "forward".
  CHECK(debug_nans_error([] { (void)st::log(vec({-1})); }).find("forward pass") !=
        std::string::npos);
}

TEST_CASE("debug_nans: a correct program runs unchanged with the switch on", "[diff]") {
  const st::Tensor x = st::randn({16, 5}, 1), w1 = st::randn({5, 8}, 2) * 0.5,
                   b1 = st::randn({8}, 3) * 0.1, w2 = st::randn({8, 3}, 4) * 0.5;
  const st::Tensor y =
      st::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0});
  auto loss = [&](const auto& a, const auto& b, const auto& c) { return mlp_loss(a, b, c, x, y); };
  st::DebugNans off(false);
  const auto [off1, off2, off3] = st::grad(loss, w1, b1, w2);
  st::DebugNans on;
  const auto [on1, on2, on3] = st::grad(loss, w1, b1, w2);
  const st::Tensor h = st::hessian([&](const auto& b) { return loss(w1, b, w2); }, b1);
  CHECK(h.shape() == st::Shape{8, 8});
  CHECK(on1.to_vector<float>() == off1.to_vector<float>());
  CHECK(on2.to_vector<float>() == off2.to_vector<float>());
  CHECK(on3.to_vector<float>() == off3.to_vector<float>());
}

TEST_CASE("debug_nans: STRATA_DEBUG_NANS is on for exactly \"1\"", "[diff]") {
  CHECK(st::detail::parse_debug_nans_env("1"));
  CHECK_FALSE(st::detail::parse_debug_nans_env(nullptr));
  CHECK_FALSE(st::detail::parse_debug_nans_env(""));
  CHECK_FALSE(st::detail::parse_debug_nans_env("0"));
  CHECK_FALSE(st::detail::parse_debug_nans_env("yes"));
  CHECK_FALSE(st::detail::parse_debug_nans_env("true"));
  CHECK_FALSE(st::detail::parse_debug_nans_env("10"));
  CHECK_FALSE(st::detail::parse_debug_nans_env(" 1"));
  const std::string huge(10000, '1');
  CHECK_FALSE(st::detail::parse_debug_nans_env(huge.c_str()));
}
