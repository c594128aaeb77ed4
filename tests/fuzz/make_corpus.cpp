// SPDX-License-Identifier: MIT
// Writes the fuzzers' seed corpus with strata's own save functions, so no
// binary file is committed: make_corpus <dir> fills <dir>/safetensors (valid
// checkpoints: every dtype, scalars, empty and strided tensors, metadata)
// and <dir>/json (tensors in their JSON form).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <strata.hpp>
#include <string>
#include <vector>

#include "nn/json.hpp"

namespace st = strata;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_corpus <dir>\n";
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::create_directories(dir / "safetensors");
  fs::create_directories(dir / "json");

  const st::Tensor f32 = st::randn({2, 3}, /*seed=*/1);
  const st::Tensor f64 = st::randn({4}, /*seed=*/2, st::f64);
  const st::Tensor i32 = st::from_vector(std::vector<int32_t>{7, -3, 0, 2147483647}, {2, 2});
  const st::Tensor i64 = st::arange(-2, 3);
  const st::Tensor b8 = st::from_vector(std::vector<bool>{true, false, true}, {3});
  const st::Tensor scalar = st::full({}, 2.5, st::f64);
  const st::Tensor empty = st::zeros({0, 3});
  const st::Tensor strided = st::randn({3, 4}, /*seed=*/3).transpose(0, 1);
  const st::Tensor rank5 = st::rand({1, 2, 1, 2, 1}, /*seed=*/4);

  using Map = std::map<std::string, st::Tensor>;
  const std::map<std::string, std::pair<Map, std::map<std::string, std::string>>> files = {
      {"one_f32", {{{"w", f32}}, {}}},
      {"every_dtype", {{{"a", f32}, {"b", f64}, {"c", i32}, {"d", i64}, {"e", b8}}, {}}},
      {"scalar_empty", {{{"s", scalar}, {"empty", empty}}, {}}},
      {"strided_rank5", {{{"t", strided}, {"r", rank5}}, {}}},
      {"metadata", {{{"w", f64}}, {{"format", "pt"}, {"step", "12"}}}},
      {"metadata_only", {{}, {{"note", "no tensors"}}}},
      {"nothing", {{}, {}}},
  };
  for (const auto& [name, content] : files) {
    st::save_safetensors((dir / "safetensors" / (name + ".safetensors")).string(), content.first,
                         content.second);
  }
  const Map tensors = {{"f32", f32},     {"f64", f64},         {"i32", i32},
                       {"i64", i64},     {"bool", b8},         {"scalar", scalar},
                       {"empty", empty}, {"strided", strided}, {"rank5", rank5}};
  for (const auto& [name, t] : tensors) {
    const nlohmann::json j = t;
    std::ofstream(dir / "json" / (name + ".json")) << j.dump();
  }
  return 0;
}
