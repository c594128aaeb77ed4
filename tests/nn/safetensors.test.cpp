// SPDX-License-Identifier: MIT
// Tests for nn/safetensors.hpp and nn/json.hpp: round trips of every dtype and
// layout, the exact bytes of the format (checked by an independent reader and
// writer here), every malformed file, and atomic saving.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "nn/json.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A fresh empty directory under the system's temporary directory.
fs::path scratch_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("strata_nn_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

/// A file in the format, built here: 8-byte little-endian length, header, data.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char(uint64_t(header.size()) >> (8 * i));
  return out + header + data;
}

template <class T>
std::string le_bytes(const std::vector<T>& v) {
  std::string out(v.size() * sizeof(T), '\0');
  std::memcpy(out.data(), v.data(), out.size());  // the test host is little-endian (x86, arm)
  return out;
}

void require_same(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.shape() == b.shape());
  if (a.dtype() == st::bool_) {
    CHECK(a.to_vector<bool>() == b.to_vector<bool>());
  } else if (a.dtype() == st::i64 || a.dtype() == st::i32) {
    CHECK(a.to_vector<int64_t>() == b.to_vector<int64_t>());
  } else {
    CHECK(a.to_vector<double>() == b.to_vector<double>());  // bit-exact round trip
  }
}

std::map<std::string, st::Tensor> every_kind() {
  const st::Tensor f64 = tensor(random_values(24, 1), {2, 3, 4});
  const st::Tensor f32 = tensor(random_values(30, 2), {5, 6}).to(st::f32);
  std::vector<int64_t> iv{7, -3, 1LL << 40, 0, -1, 42};
  std::vector<int32_t> i32v{1, -2, 2147483647, -2147483647 - 1, 5, 6};
  return {
      {"f64", f64},
      {"f32", f32},
      {"i64", st::from_vector(iv, {2, 3})},
      {"i32", st::from_vector(i32v, {3, 2})},
      {"bool", st::from_vector(std::vector<bool>{true, false, false, true, true}, {5})},
      {"f64_transposed", f64.permute({2, 0, 1})},
      {"f32_sliced", st::slice(st::slice(f32, 0, 1, 5, 2), 1, std::nullopt, std::nullopt, -2)},
      {"i64_transposed", st::from_vector(iv, {2, 3}).transpose(0, 1)},
      {"bool_flipped", st::from_vector(std::vector<bool>{true, false, false}, {3}).flip(0)},
      {"scalar", st::full({}, 2.5, st::f64)},
      {"scalar_i32", st::full({}, -7, st::i32)},
      {"empty", st::zeros({0, 3}, st::f32)},
      {"empty_bool", st::zeros({4, 0}, st::bool_)},
  };
}

}  // namespace

TEST_CASE("safetensors round trip: every dtype, non-contiguous, 0-d and empty", "[nn]") {
  const fs::path dir = scratch_dir("roundtrip");
  const std::string path = (dir / "model.safetensors").string();
  const auto tensors = every_kind();
  st::save_safetensors(path, tensors, {{"format", "pt"}, {"epoch", "3"}});
  const std::map<std::string, st::Tensor> back = st::load_safetensors(path);
  REQUIRE(back.size() == tensors.size());
  for (const auto& [k, v] : tensors) {
    INFO(k);
    require_same(back.at(k), v);
  }
  CHECK(st::load_safetensors_metadata(path) ==
        std::map<std::string, std::string>{{"format", "pt"}, {"epoch", "3"}});
  // The design's exact spelling, and saving over an existing file.
  const st::Tensor a = st::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  st::save_safetensors(path, std::map<std::string, st::Tensor>{{"w", a}});
  std::map<std::string, st::Tensor> m = st::load_safetensors(path);
  REQUIRE(m.size() == 1);
  require_same(m.at("w"), a);
  CHECK(st::load_safetensors_metadata(path).empty());
  fs::remove_all(dir);
}

TEST_CASE("safetensors bytes follow the format (independent reader)", "[nn]") {
  const fs::path dir = scratch_dir("bytes");
  const fs::path path = dir / "x.safetensors";
  const st::Tensor w = tensor(random_values(6, 3), {2, 3});
  const st::Tensor flags = st::from_vector(std::vector<bool>{false, true}, {2});
  st::save_safetensors(path.string(), {{"w", w.transpose(0, 1)}, {"flags", flags}},
                       {{"note", "hi"}});
  const std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() >= 8);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(static_cast<unsigned char>(bytes[std::size_t(i)])) << (8 * i);
  REQUIRE(8 + n <= bytes.size());
  CHECK((8 + n) % 8 == 0);  // data 8-byte aligned, as the reference writer does
  const json h = json::parse(bytes.substr(8, n));
  CHECK(h["__metadata__"] == json{{"note", "hi"}});
  CHECK(h["w"]["dtype"] == "F64");
  CHECK(h["w"]["shape"] == json::array({3, 2}));
  CHECK(h["flags"]["dtype"] == "BOOL");
  const uint64_t wb = h["w"]["data_offsets"][0], we = h["w"]["data_offsets"][1];
  const uint64_t fb = h["flags"]["data_offsets"][0], fe = h["flags"]["data_offsets"][1];
  CHECK(we - wb == 48);
  CHECK(fe - fb == 2);
  CHECK(bytes.size() == 8 + n + 50);
  // The transposed tensor is stored row-major: element (i, j) is w[j, i].
  const Vec wv = w.to_vector<double>();
  Vec want;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) want.push_back(wv[std::size_t(j * 3 + i)]);
  }
  CHECK(bytes.substr(8 + n + wb, 48) == le_bytes(want));
  CHECK(bytes.substr(8 + n + fb, 2) == std::string("\0\1", 2));
  fs::remove_all(dir);
}

TEST_CASE("safetensors written by another tool load (independent writer)", "[nn]") {
  const fs::path dir = scratch_dir("foreign");
  const fs::path path = dir / "foreign.safetensors";
  // Data in a different order from the names, no padding, metadata last.
  const std::vector<float> a{1.5f, -2.25f, 3.0f, 4.0f};
  const std::vector<int32_t> b{9, -8, 7};
  const std::string data = le_bytes(b) + le_bytes(a);
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[12,28]},)"
      R"("b":{"data_offsets":[0,12],"shape":[3],"dtype":"I32"},"__metadata__":{"k":"v"}})";
  write_bytes(path, make_file(header, data));
  const auto m = st::load_safetensors(path.string());
  REQUIRE(m.size() == 2);
  CHECK(m.at("a").dtype() == st::f32);
  CHECK(m.at("a").shape() == st::Shape{2, 2});
  CHECK(m.at("a").to_vector<float>() == a);
  CHECK(m.at("b").to_vector<int32_t>() == b);
  CHECK(st::load_safetensors_metadata(path.string()).at("k") == "v");
  fs::remove_all(dir);
}

TEST_CASE("malformed safetensors files throw, naming the file and the problem", "[nn]") {
  const fs::path dir = scratch_dir("malformed");
  const fs::path path = dir / "bad.safetensors";
  const std::string p = path.string();
  const std::string eight(8, 'x');
  auto load_msg = [&]<class E = st::ValueError>(const std::string& file_bytes) {
    write_bytes(path, file_bytes);
    const std::string msg = message_of<E>([&] { st::load_safetensors(p); });
    CHECK_THAT(msg, Contains(p) && Contains("load_safetensors"));
    return msg;
  };
  const std::string ok_entry = R"("w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]})";

  SECTION("a file shorter than the length field") {
    CHECK_THAT(load_msg("abc"), Contains("8-byte"));
  }
  SECTION("a header length beyond the file") {
    std::string f = make_file("{" + ok_entry + "}", eight);
    f[0] = char(200);
    CHECK_THAT(load_msg(f), Contains("header length 200"));
  }
  SECTION("an absurd header length") {
    std::string f = make_file("{}", "");
    for (int i = 0; i < 8; ++i) f[std::size_t(i)] = char(0xff);
    CHECK_THAT(load_msg(f), Contains("header length"));
  }
  SECTION("bad JSON") { CHECK_THAT(load_msg(make_file("{\"w\": [1, 2", "")), Contains("JSON")); }
  SECTION("JSON that is not an object") {
    CHECK_THAT(load_msg(make_file("[1, 2]", "")), Contains("object"));
  }
  SECTION("an entry that is not an object, or lacks a field") {
    CHECK_THAT(load_msg(make_file(R"({"w": 3})", "")), Contains("'w'"));
    CHECK_THAT(load_msg(make_file(R"({"w":{"dtype":"F64","shape":[1]}})", eight)),
               Contains("data_offsets"));
  }
  SECTION("unknown and unsupported dtypes") {
    const std::string m1 = load_msg.operator()<st::DTypeError>(
        make_file(R"({"w":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", eight));
    CHECK_THAT(m1, Contains("F16") && Contains("'w'"));
    CHECK_THAT(load_msg.operator()<st::DTypeError>(
                   make_file(R"({"w":{"dtype":"Q7","shape":[1],"data_offsets":[0,8]}})", eight)),
               Contains("Q7"));
    CHECK_THAT(load_msg(make_file(R"({"w":{"dtype":5,"shape":[1],"data_offsets":[0,8]}})", eight)),
               Contains("dtype"));
  }
  SECTION("bad shapes") {
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F64","shape":[-1],"data_offsets":[0,8]}})", eight)),
        Contains("shape"));
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F64","shape":"1","data_offsets":[0,8]}})", eight)),
        Contains("shape"));
    CHECK_THAT(
        load_msg(make_file(
            R"({"w":{"dtype":"F64","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}})",
            eight)),
        Contains("overflow"));
  }
  SECTION("offsets out of range (truncated data)") {
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})", eight)),
        Contains("[0, 16]") && Contains("past"));
  }
  SECTION("a file cut short inside the data") {
    const st::Tensor t = tensor(random_values(8, 4), {8});
    st::save_safetensors(p, {{"t", t}});
    const std::string full = read_bytes(path);
    CHECK_THAT(load_msg(full.substr(0, full.size() - 5)), Contains("past"));
  }
  SECTION("reversed and malformed offsets") {
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F64","shape":[0],"data_offsets":[8,0]}})", eight)),
        Contains("reversed"));
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[0]}})", eight)),
        Contains("data_offsets"));
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[-8,0]}})", eight)),
        Contains("non-negative"));
  }
  SECTION("overlapping tensors") {
    const std::string h = R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                          R"("b":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}})";
    CHECK_THAT(load_msg(make_file(h, std::string(24, 'x'))), Contains("overlaps"));
  }
  SECTION("a gap between tensors, and trailing bytes") {
    const std::string h = R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}})";
    CHECK_THAT(load_msg(make_file(h, std::string(24, 'x'))), Contains("belong to no tensor"));
    CHECK_THAT(load_msg(make_file("{" + ok_entry + "}", std::string(12, 'x'))), Contains("cover"));
  }
  SECTION("shape and offsets that disagree on the size") {
    CHECK_THAT(
        load_msg(make_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight)),
        Contains("needs 12 bytes") && Contains("hold 8"));
  }
  SECTION("a BOOL byte other than 0 or 1") {
    CHECK_THAT(load_msg(make_file(R"({"w":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})",
                                  std::string("\1\2", 2))),
               Contains("BOOL"));
  }
  SECTION("a name given twice") {
    CHECK_THAT(load_msg(make_file("{" + ok_entry + "," + ok_entry + "}", eight)),
               Contains("twice"));
  }
  SECTION("bad metadata") {
    CHECK_THAT(load_msg(make_file(R"({"__metadata__":{"k":1}})", "")), Contains("__metadata__"));
  }
  SECTION("a missing file, and a directory") {
    const std::string missing = (dir / "nope.safetensors").string();
    CHECK_THAT(message_of<st::ValueError>([&] { st::load_safetensors(missing); }),
               Contains(missing) && Contains("cannot open"));
    CHECK_THROWS_AS(st::load_safetensors(dir.string()), st::ValueError);
  }
  fs::remove_all(dir);
}

TEST_CASE("an interrupted save leaves the previous checkpoint intact", "[nn]") {
  const fs::path dir = scratch_dir("atomic");
  const std::string path = (dir / "ckpt.safetensors").string();
  const st::Tensor v1 = tensor(random_values(10, 5), {10});
  st::save_safetensors(path, {{"w", v1}});
  const std::string before = read_bytes(path);
  std::string temp_seen;
  st::detail::safetensors_before_rename = [&](const std::string& tmp) {
    temp_seen = tmp;
    CHECK(fs::exists(tmp));  // the new data is fully written, just not in place
    CHECK(fs::path(tmp).parent_path() == fs::path(path).parent_path());
    throw std::runtime_error("simulated crash before rename");
  };
  const st::Tensor v2 = tensor(random_values(1000, 6), {1000});
  CHECK_THROWS_WITH(st::save_safetensors(path, {{"w", v2}, {"extra", v2}}),
                    Contains("simulated crash"));
  st::detail::safetensors_before_rename = nullptr;
  CHECK(read_bytes(path) == before);
  require_same(st::load_safetensors(path).at("w"), v1);
  CHECK_FALSE(temp_seen.empty());
  CHECK_FALSE(fs::exists(temp_seen));  // cleaned up
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  // Bad input to save fails before touching the file.
  CHECK_THROWS_AS(st::save_safetensors(path, {{"w", st::Tensor()}}), st::ValueError);
  CHECK_THROWS_AS(st::save_safetensors(path, {{"__metadata__", v1}}), st::ValueError);
  CHECK_THROWS_AS(st::save_safetensors(path, {{"", v1}}), st::ValueError);
  CHECK(read_bytes(path) == before);
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::save_safetensors((dir / "no" / "such" / "x").string(), {{"w", v1}});
             }),
             Contains("temporary file"));
  fs::remove_all(dir);
}

TEST_CASE("to_json / from_json for one tensor", "[nn]") {
  for (const auto& [name, t] : every_kind()) {
    INFO(name);
    const json j = t;
    CHECK(j["shape"].size() == std::size_t(t.ndim()));
    require_same(j.get<st::Tensor>(), t);
  }
  const json j = st::from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  CHECK(j == json::parse(R"({"dtype":"F64","shape":[2,2],"data":[1.0,2.0,3.0,4.0]})"));
  auto bad = [](const char* text) { return json::parse(text).get<st::Tensor>(); };
  CHECK_THROWS_AS(bad(R"([1, 2])"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[2]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[3],"data":[1,2]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[-1],"data":[]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"I64","shape":[1],"data":[1.5]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"I32","shape":[1],"data":[4294967296]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"BOOL","shape":[1],"data":[1]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[1],"data":["x"]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"U8","shape":[1],"data":[1]})"), st::DTypeError);
}
