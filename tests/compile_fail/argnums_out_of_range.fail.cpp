// SPDX-License-Identifier: MIT
// st::argnums naming an argument past the last one (two arguments: indices 0 and 1).
// expect: st::argnums: an argument index is out of range
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  auto f = [](const auto& a, const auto& b) { return st::sin(a) * st::sum(b); };
  auto j = st::jacrev(f, st::argnums<2>, x, x);
  (void)j;
  return 0;
}
