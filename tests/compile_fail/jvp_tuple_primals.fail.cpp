// SPDX-License-Identifier: MIT
// st::jvp given a function of two parameters and a tuple of primals: jvp passes the tuple as
// one argument (a tree), unlike JAX's jvp and torch's, which unpack it.
// expect: pass a tree \(a tuple of tensors\) as ONE argument
#include <strata.hpp>
#include <tuple>
namespace st = strata;

int main() {
  const st::Tensor x = st::randn({3}, 1, st::f64);
  auto f = [](const auto& a, const auto& b) { return st::sum(a * b); };
  auto [y, dy] = st::jvp(f, std::make_tuple(x, x), std::make_tuple(x, x));
  return 0;
}
