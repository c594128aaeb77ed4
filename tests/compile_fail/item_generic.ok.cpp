// SPDX-License-Identifier: MIT
// st::item<double>(x) and st::value_of(x) in a generic lambda: the spellings that parse
// there (x.item<double>() would need `x.template item<double>()`).
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  const st::Tensor g = st::grad(
      [](const auto& t) {
        const bool big = st::item<double>(st::sum(t)) > 0 && st::value_of(t).numel() == 3;
        return big ? st::sum(t * t) : st::sum(t);
      },
      x);
  return g.numel() == 3 ? 0 : 1;
}
