// SPDX-License-Identifier: MIT
// st::grad of a function that returns a C++ number, not a tensor.
// expect: your function must return a tensor of the level it was called with
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  const st::Tensor g = st::grad([](const auto& t) { return 0.5 * double(t.numel()); }, x);
  return 0;
}
