// SPDX-License-Identifier: MIT
// The function given to st::vmap captures a value of the outer st::grad
// (st::Reverse<st::Tensor>) and combines it with its own argument
// (st::Batched<st::Tensor>): the two levels do not nest. The message names
// the fix: pass the captured value to vmap as an argument with in_axes
// st::none (tests/ad/vmap_inside.test.cpp runs that spelling).
// expect: as an argument instead: to st::vmap with in_axes st::none
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor W = st::randn({2, 3}, 1, st::f64), X = st::randn({5, 3}, 2, st::f64);
  auto f = [](const auto& w, const auto& x) { return st::sum(st::tanh(st::matmul(w, x))); };
  const st::Tensor g = st::grad(
      [&](const auto& w) { return st::sum(st::vmap([&](const auto& x) { return f(w, x); })(X)); },
      W);
  return 0;
}
