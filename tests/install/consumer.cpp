// SPDX-License-Identifier: MIT
// Built against an installed strata: the umbrella header and strata::strata suffice.
#include <cstdio>
#include <iostream>
#include <strata.hpp>
#include <string>

namespace st = strata;

int main() {
  const double data[] = {1, 2, 3, 4};
  st::RawTensor a = st::raw::from_host(data, {2, 2}, st::f64);
  st::RawTensor p = st::raw::matmul(a, a);  // [[7, 10], [15, 22]]
  double out[4];
  st::raw::to_host(p, out);
  bool ok = out[0] == 7 && out[1] == 10 && out[2] == 15 && out[3] == 22;

  // The nn layer: a gradient through a Linear layer, and a checkpoint round trip.
  const st::nn::Linear lin(2, 1, true, st::f64);
  st::nn::Params params = lin.init(0);
  const st::Tensor x = st::Tensor(a);
  const st::nn::Params g =
      st::grad([&](const auto& q) { return st::sum(lin(q, x)); }, params);  // d/db = 2 rows
  ok = ok && g.at("bias").item<double>() == 2.0;
  const std::string file = "strata_consumer_check.safetensors";
  st::save_safetensors(file, params);
  ok = ok && st::load_safetensors(file).at("weight").to_vector<double>() ==
                 params.at("weight").to_vector<double>();
  std::remove(file.c_str());

  std::cout << p << "\n" << (ok ? "consumer ok" : "consumer WRONG") << "\n";
  return ok ? 0 : 1;
}
