// SPDX-License-Identifier: MIT
// Tests for nn/safetensors.hpp: round trips of every dtype and layout, the
// exact bytes of the format (checked by an independent reader and writer
// here), every malformed or hostile file, and atomic saving.
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "file_cases.hpp"
#include "helpers.hpp"
#include "nn/file_io.hpp"
#include "support/files.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using st::testing::read_bytes;
using st::testing::scratch_dir;
using st::testing::write_bytes;

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
    CHECK_THAT(msg, StartsWith("load_safetensors: '" + p + "': "));
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
  st::detail::before_atomic_rename = [&](const std::string& tmp) {
    temp_seen = tmp;
    CHECK(fs::exists(tmp));  // the new data is fully written, just not in place
    CHECK(fs::path(tmp).parent_path() == fs::path(path).parent_path());
    throw std::runtime_error("simulated crash before rename");
  };
  const st::Tensor v2 = tensor(random_values(1000, 6), {1000});
  // The hook's std::runtime_error leaves as an st::Error naming the op and file.
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::save_safetensors(path, {{"w", v2}, {"extra", v2}});
             }),
             StartsWith("save_safetensors: '" + path + "': ") && Contains("simulated crash"));
  st::detail::before_atomic_rename = nullptr;
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

TEST_CASE("hostile safetensors files are refused: deep nesting, long names, huge shapes", "[nn]") {
  const fs::path dir = scratch_dir("hostile");
  const fs::path path = dir / "bad.safetensors";
  const std::string p = path.string();
  auto load_msg = [&]<class E = st::ValueError>(const std::string& header, std::size_t data = 0) {
    write_bytes(path, make_file(header, std::string(data, 'x')));
    const std::string msg = message_of<E>([&] { st::load_safetensors(p); });
    CHECK_THAT(msg, StartsWith("load_safetensors: '" + p + "': "));
    CHECK(msg.size() < 600);  // a bounded excerpt of the input, never the whole of it
    return msg;
  };
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');

  SECTION("100k levels of nesting in a tensor entry and in the metadata") {
    CHECK_THAT(load_msg("{\"w\":" + deep + "}"), Contains("nests deeper than 16"));
    CHECK_THAT(load_msg("{\"__metadata__\":{\"k\":" + deep + "}}"), Contains("nests deeper"));
    CHECK_THAT(load_msg(std::string(100000, '{')), Contains("nests deeper"));
    // Brackets inside strings are text, not nesting: a name made of them loads.
    const std::string name = std::string(1000, '[') + "\\\"{";
    const std::string h = "{\"" + name + R"(":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})";
    write_bytes(path, make_file(h, le_bytes(std::vector<double>{0.25})));
    CHECK(st::load_safetensors(p).at(std::string(1000, '[') + "\"{").item<double>() == 0.25);
  }
  SECTION("a nested value within the limit is quoted to a bounded depth") {
    const std::string v = std::string(12, '[') + "1" + std::string(12, ']');
    CHECK_THAT(load_msg(R"({"w":{"dtype":)" + v + R"(,"shape":[1],"data_offsets":[0,8]}})", 8),
               Contains("dtype [[[...]]] is not a string"));
  }
  SECTION("a 200 KB name is quoted by a prefix") {
    const std::string name(200000, 'n');
    const std::string msg = load_msg.operator()<st::DTypeError>(
        "{\"" + name + R"(":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", 8);
    CHECK_THAT(msg, Contains("'nnnn") && Contains("... (200000 bytes)") && Contains("F16"));
  }
  SECTION("an empty shape with a huge dim names the file, not raw::empty") {
    CHECK_THAT(
        load_msg(R"({"w":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}})"),
        Contains("tensor 'w'") && Contains("[0,4611686018427387904,4]") &&
            Contains("overflows int64"));
  }
  SECTION("a name that is not UTF-8 is not JSON") {
    CHECK_THAT(
        load_msg("{\"caf\xE9\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8),
        Contains("not valid JSON"));
  }
  SECTION("a shape entry or offset beyond 64 bits") {
    CHECK_THAT(
        load_msg(R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[0,18446744073709551616]}})", 8),
        Contains("non-negative integer"));
    CHECK_THAT(
        load_msg(R"({"w":{"dtype":"F64","shape":[9223372036854775808],"data_offsets":[0,8]}})", 8),
        Contains("too large"));
  }
  fs::remove_all(dir);
}

TEST_CASE("loading a FIFO, a directory or a device fails at once, naming the file", "[nn]") {
  const fs::path dir = scratch_dir("special");
  const std::string fifo = (dir / "pipe.safetensors").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // With no writer, a blocking open of the FIFO would wait forever.
  for (auto load : {+[](const std::string& f) { st::load_safetensors(f); },
                    +[](const std::string& f) { st::load_safetensors_metadata(f); }}) {
    // (Quotes appended, not prepended: GCC 12 warns wrongly on "'" + string.)
    CHECK_THAT(message_of<st::ValueError>([&] { load(fifo); }),
               Contains("load_safetensors") && Contains(fifo + "': not a regular file (a FIFO)"));
    CHECK_THAT(message_of<st::ValueError>([&] { load(dir.string()); }),
               Contains(dir.string() + "': not a regular file (a directory)"));
    for (const char* dev : {"/dev/null", "/dev/zero"}) {
      if (!fs::exists(dev)) continue;
      CHECK_THAT(message_of<st::ValueError>([&] { load(dev); }),
                 Contains(std::string(dev) + "': not a regular file (a character device)"));
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("save_safetensors refuses names and metadata that are not UTF-8", "[nn]") {
  const fs::path dir = scratch_dir("utf8");
  const std::string path = (dir / "x.safetensors").string();
  const st::Tensor v = tensor(random_values(3, 7), {3});
  st::save_safetensors(path, {{"w", v}});
  const std::string before = read_bytes(path);
  const std::string latin1 = "caf\xE9";  // "café" in latin1: not UTF-8
  auto msg = [&](const std::map<std::string, st::Tensor>& t,
                 const std::map<std::string, std::string>& m) {
    return message_of<st::ValueError>([&] { st::save_safetensors(path, t, m); });
  };
  CHECK_THAT(msg({{latin1, v}}, {}), StartsWith("save_safetensors: '" + path + "': ") &&
                                         Contains("tensor name 'caf\\xE9'") && Contains("UTF-8"));
  CHECK_THAT(msg({{"w", v}}, {{latin1, "x"}}), Contains("metadata key 'caf\\xE9'"));
  CHECK_THAT(msg({{"w", v}}, {{"k", latin1}}), Contains("metadata value 'caf\\xE9'"));
  CHECK_THAT(msg({{"w", v}}, {{"k", "\xC0\xAF"}}), Contains("UTF-8"));          // overlong '/'
  CHECK_THAT(msg({{"w", v}}, {{"k", "\xED\xA0\x80"}}), Contains("UTF-8"));      // a surrogate
  CHECK_THAT(msg({{"w", v}}, {{"k", "\xF4\x90\x80\x80"}}), Contains("UTF-8"));  // > U+10FFFF
  CHECK(read_bytes(path) == before);  // refused before the file was touched
  // UTF-8 names and metadata, including 4-byte characters, round trip.
  const std::string cafe = "caf\xC3\xA9 \xF0\x9F\x99\x82";
  st::save_safetensors(path, {{cafe, v}}, {{cafe, cafe}});
  require_same(st::load_safetensors(path).at(cafe), v);
  CHECK(st::load_safetensors_metadata(path).at(cafe) == cafe);
  fs::remove_all(dir);
}
