// SPDX-License-Identifier: MIT
// Tests of the derivative checker itself (tests/support/check_grads.hpp): it
// accepts correct derivatives at every order and mode and rejects wrong ones.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <strata.hpp>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::check_grads_error;
using st::testing::f64s;
using st::testing::GradCheckOptions;
using st::testing::i64s;
using st::testing::Modes;
using st::testing::nonzero;
using st::testing::normal;
using st::testing::positive;
using st::testing::prims_of;

TEST_CASE("check_grads: accepts correct derivatives and rejects wrong ones", "[ad]") {
  const st::Tensor x = normal({2, 3}, 1);
  SECTION("a correct function passes at every order and mode") {
    auto f = [](const auto& x) { return st::sum(st::tanh(x) * x); };
    const auto r = check_grads_error<3>(f, {x});
    INFO(r.report);
    CHECK(r.ok());
    CHECK(r.checks == 2 * (2 + 4 + 8));  // (primal + derivative) per check, 14 checks
    CHECK(r.worst < 1e-2);               // finite differences far inside the tolerances
  }
  SECTION("x * stop_gradient(x) is not the derivative of x * x, in either mode") {
    // AD says d/dx = x (the second factor is a constant); the finite difference sees 2x.
    auto bad = [](const auto& x) { return x * st::stop_gradient(x); };
    for (Modes m : {Modes::fwd, Modes::rev}) {
      const auto r = check_grads_error<1>(bad, {x}, m);
      INFO(r.report);
      CHECK_FALSE(r.ok());
      CHECK(r.worst > 1e3);
    }
  }
  SECTION("a derivative right at order 1 but wrong at order 2 is caught by the recursion") {
    // Value x^2; AD's first derivative sg(x) + x = 2x is right, but its own
    // derivative by AD is 1 (stop_gradient strips every level) instead of 2.
    auto bad2 = [](const auto& x) {
      const auto s = st::stop_gradient(x);
      return s * x + (x * x - s * s) * 0.5;
    };
    for (Modes m : {Modes::fwd, Modes::rev}) {
      const auto r1 = check_grads_error<1>(bad2, {x}, m);
      INFO(r1.report);
      CHECK(r1.ok());
      const auto r2 = check_grads_error<2>(bad2, {x}, m);
      INFO(r2.report);
      CHECK_FALSE(r2.ok());
      CHECK(r2.worst > 10);
    }
  }
  SECTION("an error of 1e-4 in a second derivative is caught") {
    // Value x^2 + c (x - sg(x))^2 = x^2; AD's first derivative 2x + 2c (x - sg(x)) = 2x is
    // right, its second 2 + 2c is off by a relative c = 1e-4: far above what the finite
    // differences resolve (1e-9), and below the old tolerance of orders 2 and 3 (1e-3).
    auto bad = [](const auto& x) {
      const auto d = x - st::stop_gradient(x);
      return x * x + d * d * 1e-4;
    };
    for (Modes m : {Modes::fwd, Modes::rev}) {
      const auto r1 = check_grads_error<1>(bad, {x}, m);
      INFO(r1.report);
      CHECK(r1.ok());
      const auto r2 = check_grads_error<2>(bad, {x}, m);
      INFO(r2.report);
      CHECK_FALSE(r2.ok());
    }
  }
  SECTION("a derivative right at orders 1 and 2 but wrong at order 3 is caught") {
    // Value x^3 + (x - sg(x))^3 = x^3; AD's first two derivatives are right (each term of
    // (x - sg(x))^3's is a multiple of x - sg(x) = 0), its third is 6 + 6 instead of 6.
    auto bad3 = [](const auto& x) {
      const auto d = x - st::stop_gradient(x);
      return x * x * x + d * d * d;
    };
    for (Modes m : {Modes::fwd, Modes::rev, Modes::both}) {
      const auto r2 = check_grads_error<2>(bad3, {x}, m);
      INFO(r2.report);
      CHECK(r2.ok());
      const auto r3 = check_grads_error<3>(bad3, {x}, m);
      INFO(r3.report);
      CHECK_FALSE(r3.ok());
      CHECK(r3.worst > 10);
    }
  }
  SECTION("a wrong gradient of one of two arguments is caught") {
    auto bad = [](const auto& a, const auto& b) { return a * st::stop_gradient(b); };
    const auto r = check_grads_error<1>(bad, {x, normal({2, 3}, 2)});
    INFO(r.report);
    CHECK_FALSE(r.ok());
  }
  SECTION("check_grads itself reports through Catch") {
    check_grads<2>([](const auto& x) { return st::exp(x); }, {x});
  }
}
