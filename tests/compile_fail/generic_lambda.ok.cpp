// SPDX-License-Identifier: MIT
// The fixed versions of the *.fail.cpp snippets: every transform given a
// generic lambda compiles (proof that the harness can pass).
#include <strata.hpp>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  auto f = [](const auto& t) { return st::sum(t * t); };
  auto g = [](const auto& t) { return st::sin(t); };
  const st::Tensor dx = st::grad(f, x);
  const st::Tensor dx2 = st::grad(f)(x);
  auto [v, dv] = st::value_and_grad(f, x);
  auto [y, pullback] = st::vjp(g, x);
  const st::Tensor ct = pullback(x);
  auto [y2, tangent] = st::jvp(g, x, x);
  const st::Tensor jf = st::jacfwd(g, x);
  const st::Tensor jr = st::jacrev(g, x);
  const st::Tensor h = st::hessian(f, x);
  // A captured plain tensor returned as is is a constant of the argument's level.
  const st::Tensor zero = st::grad([x](const auto&) { return st::sum(x); }, x);
  (void)dx, (void)dx2, (void)v, (void)dv, (void)y, (void)ct, (void)y2, (void)tangent;
  (void)jf, (void)jr, (void)h, (void)zero;
  return 0;
}
