// SPDX-License-Identifier: MIT
// Writes the fuzzers' seed corpus with strata's own save functions, so no
// binary file is committed: make_corpus <dir> fills <dir>/safetensors (valid
// checkpoints: every dtype, scalars, empty and strided tensors, metadata)
// <dir>/json (tensors in their JSON form) and <dir>/idx (IDX files of every element type,
// plain and gzipped, written byte by byte: strata reads IDX but does not write it).
#include <zlib.h>

#include <cstdint>
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

namespace {

/// An IDX file: the header of type `code` and dims, then `payload` (the elements' bytes).
std::string idx_file(unsigned char code, const std::vector<uint32_t>& dims,
                     const std::string& payload) {
  std::string out = {'\0', '\0', char(code), char(dims.size())};
  for (uint32_t d : dims) {
    for (int i = 3; i >= 0; --i) out.push_back(char((d >> (8 * i)) & 0xff));
  }
  return out + payload;
}

/// bytes as one gzip stream.
std::string gzipped(const std::string& bytes) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, uLong(bytes.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = uInt(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_corpus <dir>\n";
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::create_directories(dir / "safetensors");
  fs::create_directories(dir / "json");
  fs::create_directories(dir / "idx");

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
  const std::map<std::string, std::string> idx = {
      {"u8", idx_file(0x08, {2, 3}, std::string("\x00\x01\x7f\x80\xfe\xff", 6))},
      {"i8", idx_file(0x09, {4}, "\x01\x80\xff\x10")},
      {"i16", idx_file(0x0B, {1, 2}, std::string("\x80\x00\x00\x05", 4))},
      {"i32", idx_file(0x0C, {1}, std::string("\xff\xff\xff\xfe", 4))},
      {"f32", idx_file(0x0D, {2}, std::string("\x3f\xc0\x00\x00\xff\x80\x00\x00", 8))},
      {"f64", idx_file(0x0E, {1, 1, 1}, std::string("\x40\x09\x21\xfb\x54\x44\x2d\x18", 8))},
      {"empty", idx_file(0x08, {0, 28, 28}, "")},
  };
  for (const auto& [name, bytes] : idx) {
    std::ofstream(dir / "idx" / (name + ".idx"), std::ios::binary) << bytes;
    std::ofstream(dir / "idx" / (name + ".idx.gz"), std::ios::binary) << gzipped(bytes);
  }
  return 0;
}
