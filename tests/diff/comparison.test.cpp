// SPDX-License-Identifier: MIT
// Tests for diff/comparison.hpp on plain st::Tensor: the comparisons and logical ops
// (bool results, broadcasting) and where, against naive f64 loops
// (tests/support/diff_ref.hpp).
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

TEST_CASE("comparisons and logic return bool tensors", "[diff]") {
  const Ref a{{3, 1}, {1.0, -2.0, 0.5}}, b{{4}, {0.5, 1.0, -2.0, 3.0}};
  const st::Tensor ta = tensor(a.v, {3, 1}), tb = tensor(b.v, {4});
  auto check = [&](const st::Tensor& t, const std::function<bool(double, double)>& fn) {
    require_ref(t, broadcast(a, b, [&](double x, double y) { return fn(x, y) ? 1.0 : 0.0; }), 0,
                st::bool_);
  };
  check(ta > tb, std::greater<>());
  check(ta >= tb, std::greater_equal<>());
  check(ta < tb, std::less<>());
  check(ta <= tb, std::less_equal<>());
  check(ta == tb, std::equal_to<>());
  check(ta != tb, std::not_equal_to<>());
  check(st::gt(ta, tb), std::greater<>());
  check(st::eq(ta, tb), std::equal_to<>());
  require_values(ta > 0.0, {3, 1}, {1, 0, 1}, 0, st::bool_);
  require_values(0.75 < ta, {3, 1}, {1, 0, 0}, 0, st::bool_);
  require_values(ta == 0.5, {3, 1}, {0, 0, 1}, 0, st::bool_);
  // An integer tensor against a fractional scalar compares the values, not a truncation.
  const st::Tensor i = st::from_vector(std::vector<int64_t>{0, 1, 2}, {3});
  require_values(i > 0.5, {3}, {0, 1, 1}, 0, st::bool_);
  require_values(i == 1, {3}, {0, 1, 0}, 0, st::bool_);
  const st::Tensor p = ta > 0.0, q = tb > 0.0;
  check(st::logical_and(p, q), [](double x, double y) { return x > 0 && y > 0; });
  check(st::logical_or(p, q), [](double x, double y) { return x > 0 || y > 0; });
  require_values(st::logical_not(p), {3, 1}, {0, 1, 0}, 0, st::bool_);
}

TEST_CASE("where broadcasts condition and both branches", "[diff]") {
  const st::Tensor cond = st::from_vector(std::vector<bool>{true, false, true}, {3, 1});
  const Vec av = {1.0, 2.0, 3.0, 4.0};
  const st::Tensor a = tensor(av, {4});
  Vec expected;
  for (int r = 0; r < 3; ++r) {
    for (double v : av) expected.push_back(r != 1 ? v : -1.0);
  }
  require_values(st::where(cond, a, -1.0), {3, 4}, expected);
  Vec flipped;
  for (int r = 0; r < 3; ++r) {
    for (double v : av) flipped.push_back(r != 1 ? -1.0 : v);
  }
  require_values(st::where(cond, -1.0, a), {3, 4}, flipped);
  const st::Tensor m = tensor({-1.5, 2.0, 0.0, 3.5, -0.25, 1.0}, {2, 3});
  require_values(st::where(m > 0.0, m, 0.0), {2, 3}, {0, 2, 0, 3.5, 0, 1});
  // Both branches tensors of different shapes, condition a third shape.
  const st::Tensor row = tensor({10.0, 20.0, 30.0}, {3});
  const st::Tensor col = tensor({-1.0, -2.0}, {2, 1});
  require_values(st::where(m > 0.0, row, col), {2, 3}, {-1, 20, -1, 10, -2, 30});
}
