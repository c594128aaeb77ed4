// SPDX-License-Identifier: MIT
// Built against an installed strata: the umbrella header and strata::strata suffice.
#include <iostream>
#include <strata.hpp>

namespace st = strata;

int main() {
  const double data[] = {1, 2, 3, 4};
  st::RawTensor a = st::raw::from_host(data, {2, 2}, st::f64);
  st::RawTensor p = st::raw::matmul(a, a);  // [[7, 10], [15, 22]]
  double out[4];
  st::raw::to_host(p, out);
  const bool ok = out[0] == 7 && out[1] == 10 && out[2] == 15 && out[3] == 22;
  std::cout << p << "\n" << (ok ? "consumer ok" : "consumer WRONG") << "\n";
  return ok ? 0 : 1;
}
