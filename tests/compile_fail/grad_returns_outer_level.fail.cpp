// SPDX-License-Identifier: MIT
// An inner st::grad whose function returns a value of the outer jvp
// (st::Forward<st::Tensor>), not of its own argument's level: the inner
// transform has to be called on a value of the outer level instead.
// expect: your function must return a tensor of the level it was called with
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
