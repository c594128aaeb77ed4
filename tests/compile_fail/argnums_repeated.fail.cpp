// SPDX-License-Identifier: MIT
// st::argnums naming one argument twice.
// expect: st::argnums: an argument index is repeated
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  auto f = [](const auto& a, const auto& b) { return st::sum(st::sin(a) * b); };
  auto g = st::grad(f, st::argnums<1, 1>, x, x);
  (void)g;
  return 0;
}
