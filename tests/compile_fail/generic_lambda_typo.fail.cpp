// SPDX-License-Identifier: MIT
// A generic lambda with a mistake inside its body (a misspelt method): the
// compiler reports the mistake, and nothing else. The transform's hint to
// write a generic lambda would be false here: the lambda is one.
// expect: sinn
// expect-not: write the function as a generic lambda
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  const st::Tensor g = st::grad([](const auto& t) { return st::sum(t.sinn() * t); }, x);
  return 0;
}
