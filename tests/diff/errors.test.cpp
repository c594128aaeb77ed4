// SPDX-License-Identifier: MIT
// The errors of the composite ops of diff/: shapes that do not broadcast, bad split
// sizes, squeeze, matmul, axes out of range; softmax, log_softmax, logsumexp, min, var
// and std name themselves in their messages.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/diff_ref.hpp"
#include "support/message_of.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;
using Catch::Matchers::Contains;
using st::testing::message_of;

TEST_CASE("bad inputs throw the right error", "[diff]") {
  const st::Tensor a = st::zeros({2, 3}, st::f64), c = st::ones({4, 3}, st::f64);
  SECTION("shapes that do not broadcast") {
    const std::string msg = message_of<st::ShapeError>([&] { (void)(a + c); });
    CHECK_THAT(msg, Contains("[2, 3]") && Contains("[4, 3]"));
    CHECK_THAT(message_of<st::ShapeError>([&] { (void)(a * c); }), Contains("[2, 3]"));
    CHECK_THROWS_AS(a - c, st::ShapeError);
    CHECK_THROWS_AS(a / c, st::ShapeError);
    CHECK_THROWS_AS(a < c, st::ShapeError);
    CHECK_THROWS_AS(st::maximum(a, c), st::ShapeError);
    CHECK_THROWS_AS(st::where(a > 0.0, a, c), st::ShapeError);
    CHECK_THROWS_AS(st::where(c > 0.0, a, a), st::ShapeError);
    CHECK_THROWS_AS(st::pow(a, c), st::ShapeError);
  }
  SECTION("split sizes that do not add up") {
    const std::string msg = message_of<st::ShapeError>([&] { st::split(a, {1, 1}, 1); });
    CHECK_THAT(msg, Contains("[2, 3]"));
    CHECK_THROWS_AS(st::split(a, {2, 2}, 1), st::ShapeError);
    CHECK_THROWS_AS(st::split(a, {4, -1}, 1), st::ValueError);
    // Sizes whose int64 sum would wrap around to the axis size (3).
    constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
    CHECK_THAT(message_of<st::ShapeError>([&] {
                 st::split(a, {kBig, kBig, 2, 3}, 1);
               }),
               Contains("more than axis 1"));
    CHECK_THROWS_AS(st::split(a, {2, kBig}, 1), st::ShapeError);
  }
  SECTION("squeeze of an axis that is not 1") {
    CHECK_THAT(message_of<st::ShapeError>([&] { st::squeeze(a, 1); }), Contains("[2, 3]"));
    CHECK_THROWS_AS(st::squeeze(a, 2), st::IndexError);
    CHECK_THROWS_AS(st::unsqueeze(a, 4), st::IndexError);
  }
  SECTION("matmul") {
    const st::Tensor s = st::full({}, 2.0, st::f64);
    CHECK_THAT(message_of<st::ShapeError>([&] { st::matmul(s, a); }), Contains("matmul"));
    CHECK_THROWS_AS(st::matmul(a, s), st::ShapeError);
    CHECK_THROWS_AS(st::matmul(a, a), st::ShapeError);  // [2, 3] x [2, 3]
    CHECK_THROWS_AS(st::dot(st::zeros({3}, st::f64), st::zeros({4}, st::f64)), st::ShapeError);
  }
  SECTION("other bad arguments") {
    CHECK_THROWS_AS(st::stack({a, c}, 0), st::ShapeError);
    CHECK_THROWS_AS(st::concat(std::vector<st::Tensor>{}, 0), st::ValueError);
    CHECK_THROWS_AS(st::concat({a, st::zeros({2, 4}, st::f64)}, 0), st::ShapeError);
    CHECK_THROWS_AS(st::tril(st::zeros({3}, st::f64)), st::ShapeError);
    CHECK_THROWS_AS(st::one_hot(a, 3), st::DTypeError);
    CHECK_THROWS_AS(st::one_hot(st::arange(0, 3), -1), st::ValueError);
    CHECK_THROWS_AS(st::sum(a, {2}), st::IndexError);
    CHECK_THROWS_AS(st::mean(a, {-3}), st::IndexError);
    CHECK_THROWS_AS(st::softmax(a, 2), st::IndexError);
    CHECK_THROWS_AS(st::transpose(a, 0, 2), st::IndexError);
    CHECK_THROWS_AS(st::argmax(a, 5), st::IndexError);
  }
}

TEST_CASE("errors of softmax, log_softmax, logsumexp, min, var and std name that op", "[diff]") {
  const st::Tensor a = tensor(random_values(6, 5), {2, 3});
  const st::Tensor s = st::full({}, 2.0, st::f64);
  using Catch::Matchers::StartsWith;
  CHECK_THAT(message_of<st::IndexError>([&] { st::softmax(s, 0); }), StartsWith("softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::log_softmax(s, 0); }),
             StartsWith("log_softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::softmax(a, 2); }), StartsWith("softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::log_softmax(a, -3); }),
             StartsWith("log_softmax:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::logsumexp(a, {2}); }), StartsWith("logsumexp:"));
  const std::string repeated = message_of<st::IndexError>([&] { st::logsumexp(a, {1, -1}); });
  CHECK_THAT(repeated, StartsWith("logsumexp:"));
  CHECK_THAT(repeated, Contains("repeated"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::min(a, {3}); }), StartsWith("min:"));
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::min(st::zeros({2, 0}, st::f64), {1});
             }),
             StartsWith("min:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::var(a, {2}); }), StartsWith("var:"));
  CHECK_THAT(message_of<st::IndexError>([&] { st::std(a, {-3}); }), StartsWith("std:"));
}
