// SPDX-License-Identifier: MIT
// st::grad given a function written for const st::Tensor& rather than a generic lambda.
// expect: write the function as a generic lambda, \[\]\(const auto& x\) { \.\.\. }
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  const st::Tensor g = st::grad([](const st::Tensor& t) { return st::sum(t * t); }, x);
  return 0;
}
