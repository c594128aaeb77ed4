// SPDX-License-Identifier: MIT
// An inner st::grad whose function returns a value of the outer jvp
// (st::Forward<st::Tensor>) that it captured, not of its own argument's level
// (st::Reverse<st::Tensor>, which does not nest with it): the captured value
// has to be passed to the inner transform as an argument instead.
// expect: an inner transform uses a value of an outer transform that it captured
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  auto outer = [&](const auto& a) {
    return st::grad([&](const auto&) { return st::sum(a * a); }, x);
  };
  auto [y, dy] = st::jvp(outer, x, x);
  return 0;
}
