// SPDX-License-Identifier: MIT
// Reading a traced value's primal for data-dependent control flow (diff/value.hpp):
// st::value_of and st::item at every level (Tensor, Forward, Reverse, nested,
// hessian), a branch and a loop on values inside transforms giving the derivative
// of the branch taken, and the error under st::vmap, where no single value exists.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

namespace st = strata;
using Catch::Matchers::Contains;

TEST_CASE("value_of and item read the primal at every level", "[ad][value_of]") {
  const st::Tensor x = st::from_vector(std::vector<double>{1.5, -2.0});
  std::vector<double> seen;
  auto f = [&](const auto& v) {
    const st::Tensor p = st::value_of(v);
    seen.push_back(p.to_vector<double>()[1]);
    seen.push_back(st::item<double>(v.ix(0)));
    return st::sum(v * v * v);
  };
  (void)f(x);
  (void)st::grad(f, x);                         // Reverse<Tensor>
  (void)st::jvp(f, x, st::ones({2}, st::f64));  // Forward<Tensor>
  (void)st::hessian(f, x);                      // Forward<Reverse<Tensor>> inside
  (void)st::grad([&](const auto& v) { return st::sum(st::grad(f, v)); }, x);  // nested
  REQUIRE(seen.size() >= 10);
  for (std::size_t i = 0; i < seen.size(); i += 2) {
    CHECK(seen[i] == -2.0);
    CHECK(seen[i + 1] == 1.5);
  }
  CHECK(st::item<int64_t>(st::arange(3, 4)) == 3);
  CHECK_THROWS_AS(st::item<double>(x), st::ValueError);  // two elements
}

TEST_CASE("control flow on values gives the derivative of the branch taken", "[ad][value_of]") {
  // Halve until below 1: the derivative is 2^-k for the k halvings the value needed.
  auto shrink = [](const auto& v) {
    auto y = v;
    while (st::item<double>(y) >= 1.0) y = y * 0.5;
    return y;
  };
  const st::Tensor x = st::full({}, 5.0, st::f64);  // 5 -> 2.5 -> 1.25 -> 0.625
  CHECK(shrink(x).item<double>() == 0.625);
  CHECK(st::grad(shrink, x).item<double>() == 0.125);
  auto [y, dy] = st::jvp(shrink, x, st::full({}, 1.0, st::f64));
  CHECK(dy.item<double>() == 0.125);
  // A branch on a norm inside a Hessian.
  auto piece = [](const auto& v) {
    return st::item<double>(st::sum(v * v)) > 1.0 ? st::sum(v * v * v) : st::sum(v * v);
  };
  const st::Tensor big = st::from_vector(std::vector<double>{1.0, 2.0});
  CHECK(st::hessian(piece, big).to_vector<double>() == std::vector<double>{6, 0, 0, 12});
  CHECK(st::hessian(piece, big * 0.1).to_vector<double>() == std::vector<double>{2, 0, 0, 2});
}

TEST_CASE("value_of and item throw under vmap", "[ad][value_of][vmap]") {
  const st::Tensor xs = st::randn({3, 2}, 5, st::f64);
  try {
    (void)st::vmap([](const auto& v) { return v * st::item<double>(v.ix(0)); })(xs);
    FAIL("no error");
  } catch (const st::ValueError& e) {
    CHECK_THAT(e.what(),
               Contains("item") && Contains("batch of examples") && Contains("st::where"));
  }
  CHECK_THROWS_AS(st::vmap([](const auto& v) { return v * st::value_of(v).sum(); })(xs),
                  st::ValueError);
  // An argument vmap does not map still has its single value.
  const st::Tensor w = st::full({}, 2.0, st::f64);
  const st::Tensor out = st::vmap(
      [](const auto& v, const auto& s) { return v * st::item<double>(s); }, {0, st::none})(xs, w);
  CHECK(out.to_vector<double>() == (xs * 2.0).to_vector<double>());
}
