// SPDX-License-Identifier: MIT
// The function-returning form, st::grad(f)(x), of a function written for const st::Tensor&.
// expect: write the function as a generic lambda, \[\]\(const auto& x\) { \.\.\. }
#include <strata.hpp>
namespace st = strata;

st::Tensor loss(const st::Tensor& t) { return st::sum(t * t); }

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  const st::Tensor g = st::grad(loss)(x);
  return 0;
}
