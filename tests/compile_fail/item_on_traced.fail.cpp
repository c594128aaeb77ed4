// SPDX-License-Identifier: MIT
// x.item<double>() on a traced value (here spelled out as Reverse<Tensor>, outside a
// generic lambda, where C++ can parse it): a static_assert naming st::item instead.
// expect: x.item<T>\(\) reads a plain st::Tensor, but x is a traced value
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  const st::Tensor g = st::grad(
      [](const st::Reverse<st::Tensor>& t) {
        if (t.ix(0).item<double>() > 0) return st::sum(t * t);
        return st::sum(t);
      },
      x);
  return 0;
}
