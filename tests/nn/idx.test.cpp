// SPDX-License-Identifier: MIT
// st::load_idx (nn/idx.hpp): every element type plain and gzipped against the values the
// test wrote byte by byte, and every kind of bad file refused with a ValueError that says
// what is wrong.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "support/files.hpp"

namespace st = strata;
using Catch::Matchers::Contains;

namespace {

using st::testing::scratch_dir;
using st::testing::write_bytes;

/// v as `bytes` big-endian bytes.
std::string big_endian_bytes(uint64_t v, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) out.push_back(char((v >> (8 * i)) & 0xff));
  return out;
}

/// An IDX header: the type code and the dims.
std::string idx_header(unsigned char type, const std::vector<uint32_t>& dims) {
  std::string out = {'\0', '\0', char(type), char(dims.size())};
  for (uint32_t d : dims) out += big_endian_bytes(d, 4);
  return out;
}

/// bytes as one gzip stream (zlib's deflate with gzip's wrapper).
std::string gzipped(const std::string& bytes) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, uLong(bytes.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = uInt(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

/// The file `name` in a fresh scratch folder holding `bytes`; its path.
std::string idx_file(const std::string& name, const std::string& bytes) {
  const std::filesystem::path p = scratch_dir("idx_" + name) / name;
  write_bytes(p, bytes);
  return p.string();
}

/// The ValueError message of load_idx on a file holding `bytes`.
std::string idx_error(const std::string& name, const std::string& bytes) {
  const std::string path = idx_file(name, bytes);
  try {
    st::load_idx(path);
  } catch (const st::ValueError& e) {
    return e.what();
  }
  FAIL("load_idx accepted the bad file " << name);
  return "";
}

}  // namespace

TEST_CASE("load_idx reads every element type, plain and gzipped", "[nn][idx]") {
  struct Case {
    const char* name;
    unsigned char code;
    int bytes;
    std::vector<uint64_t> raw;  // the file's elements, as unsigned big-endian words
    std::vector<double> want;
    st::DType dtype;
  };
  const double inf = std::numeric_limits<double>::infinity();
  uint32_t f32_bits[3];
  const float f32s[3] = {1.5f, -0.25f, 3.0e38f};
  std::memcpy(f32_bits, f32s, sizeof(f32_bits));
  uint64_t f64_bits[3];
  const double f64s[3] = {-2.5, 1e-300, -inf};
  std::memcpy(f64_bits, f64s, sizeof(f64_bits));
  const std::vector<Case> cases = {
      {"u8", 0x08, 1, {0, 7, 128, 255, 1, 2}, {0, 7, 128, 255, 1, 2}, st::i32},
      {"i8", 0x09, 1, {0, 0x7f, 0x80, 0xff, 3, 0xfe}, {0, 127, -128, -1, 3, -2}, st::i32},
      {"i16",
       0x0B,
       2,
       {0x7fff, 0x8000, 0xffff, 1, 0, 300},
       {32767, -32768, -1, 1, 0, 300},
       st::i32},
      {"i32",
       0x0C,
       4,
       {0x7fffffff, 0x80000000, 0xffffffff, 5, 0, 70000},
       {2147483647.0, -2147483648.0, -1, 5, 0, 70000},
       st::i32},
      {"f32",
       0x0D,
       4,
       {f32_bits[0], f32_bits[1], f32_bits[2], f32_bits[0], 0, f32_bits[1]},
       {1.5, -0.25, double(3.0e38f), 1.5, 0, -0.25},
       st::f32},
      {"f64",
       0x0E,
       8,
       {f64_bits[0], f64_bits[1], f64_bits[2], 0, f64_bits[0], f64_bits[1]},
       {-2.5, 1e-300, -inf, 0, -2.5, 1e-300},
       st::f64},
  };
  for (const Case& c : cases) {
    std::string bytes = idx_header(c.code, {2, 3});
    for (uint64_t v : c.raw) bytes += big_endian_bytes(v, c.bytes);
    for (bool gz : {false, true}) {
      INFO(c.name << (gz ? " gzipped" : " plain"));
      const st::Tensor t = st::load_idx(
          idx_file(std::string(c.name) + (gz ? ".gz" : ""), gz ? gzipped(bytes) : bytes));
      CHECK(t.dtype() == c.dtype);
      CHECK(t.shape() == st::Shape{2, 3});
      CHECK(t.to_vector<double>() == c.want);
    }
  }
}

TEST_CASE("load_idx reads MNIST's shapes and empty dims", "[nn][idx]") {
  std::string images = idx_header(0x08, {3, 28, 28});
  for (int i = 0; i < 3 * 28 * 28; ++i) images.push_back(char(i % 251));
  const st::Tensor t = st::load_idx(idx_file("images.gz", gzipped(images)));
  REQUIRE(t.shape() == st::Shape{3, 28, 28});
  const std::vector<int32_t> v = t.to_vector<int32_t>();
  for (int i = 0; i < 3 * 28 * 28; i += 97) CHECK(v[std::size_t(i)] == i % 251);
  const st::Tensor labels =
      st::load_idx(idx_file("labels", idx_header(0x08, {4}) + std::string("\x01\x09\x00\x03", 4)));
  CHECK(labels.to_vector<int32_t>() == std::vector<int32_t>{1, 9, 0, 3});
  CHECK(st::load_idx(idx_file("empty", idx_header(0x0D, {0, 5}))).shape() == st::Shape{0, 5});
}

TEST_CASE("load_idx refuses bad headers and sizes", "[nn][idx]") {
  const std::string good = idx_header(0x08, {2, 2}) + "\x01\x02\x03\x04";
  CHECK_THAT(idx_error("magic", std::string("\x01\x00\x08\x01\x00\x00\x00\x01x", 9)),
             Contains("load_idx") && Contains("not an IDX file"));
  CHECK_THAT(idx_error("type", idx_header(0x0A, {1}) + "x"),
             Contains("element type code 10 is not an IDX type"));
  CHECK_THAT(idx_error("ndim", idx_header(0x08, {})), Contains("0 dims"));
  CHECK_THAT(idx_error("empty_file", ""), Contains("the magic number"));
  CHECK_THAT(idx_error("short_dims", good.substr(0, 9)), Contains("ends inside the dims"));
  CHECK_THAT(idx_error("short_data", good.substr(0, good.size() - 1)),
             Contains("need 4 bytes of elements") && Contains("truncated"));
  CHECK_THAT(idx_error("trailing", good + "z"), Contains("1 trailing bytes"));
  // (2^32-1)^3 elements overflow int64; (2^32-1) * 2^16 fits, but no file of a few bytes
  // holds it, plain or gzipped: refused before any allocation.
  CHECK_THAT(idx_error("overflow", idx_header(0x08, {0xffffffffu, 0xffffffffu, 0xffffffffu})),
             Contains("overflows int64"));
  CHECK_THAT(idx_error("huge", idx_header(0x0E, {0xffffffffu, 0x10000u})),
             Contains("more than the file holds"));
  CHECK_THAT(idx_error("huge.gz", gzipped(idx_header(0x0E, {0xffffffffu, 0x10000u}))),
             Contains("more than the gzip stream can inflate to"));
}

TEST_CASE("load_idx refuses truncated, corrupt and padded gzip streams", "[nn][idx]") {
  std::string bytes = idx_header(0x08, {64, 64});
  for (int i = 0; i < 64 * 64; ++i) bytes.push_back(char((i * 7919) % 256));
  const std::string gz = gzipped(bytes);
  CHECK_THAT(idx_error("cut.gz", gz.substr(0, gz.size() / 2)), Contains("cut off"));
  CHECK_THAT(idx_error("no_trailer.gz", gz.substr(0, gz.size() - 4)), Contains("cut off"));
  std::string flipped = gz;
  flipped[gz.size() / 2] = char(flipped[gz.size() / 2] ^ 0x5a);
  // A flipped bit inside the deflate data: an invalid code, a wrong length or a CRC mismatch,
  // each named as a fault of the gzip stream.
  CHECK_THAT(idx_error("corrupt.gz", flipped), Contains("load_idx") && Contains("gzip stream"));
  std::string crc = gz;
  crc[gz.size() - 6] = char(crc[gz.size() - 6] ^ 1);  // the CRC-32 of the content
  CHECK_THAT(idx_error("crc.gz", crc), Contains("corrupt gzip stream"));
  CHECK_THAT(idx_error("extra.gz", gzipped(bytes + "tail")), Contains("more bytes than"));
  CHECK_THAT(idx_error("two.gz", gz + gz), Contains("after the end of the gzip stream"));
}

TEST_CASE("load_idx refuses what is not a regular file", "[nn][idx]") {
  const std::filesystem::path dir = scratch_dir("idx_dir");
  CHECK_THROWS_AS(st::load_idx(dir.string()), st::ValueError);
  CHECK_THROWS_AS(st::load_idx((dir / "missing").string()), st::ValueError);
}
