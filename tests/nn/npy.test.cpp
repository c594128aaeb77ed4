// SPDX-License-Identifier: MIT
// Tests for nn/npy.hpp: files NumPy wrote (committed in tests/nn/data/npy/,
// made by tests/nn/data/make_npy.py) load element for element, strata writes
// the bytes numpy.save writes, every dtype and layout round trips, every
// malformed or hostile file is a clear st::Error, and saving is atomic. The
// live interop test ([.npy_numpy], ctest nn_npy_numpy) runs NumPy itself.
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>

#include "file_cases.hpp"
#include "helpers.hpp"
#include "nn/file_io.hpp"
#include "raw/ops.hpp"
#include "support/files.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

using st::testing::read_bytes;
using st::testing::scratch_dir;
using st::testing::write_bytes;

const std::string kData = (st::testing::tests_dir() / "nn/data").string();

/// make_npy.py's value(i) for each row-major position i, as a tensor.
st::Tensor expected(const std::string& code, const st::Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto k = [](int64_t i) { return (i * 7919) % 1009; };
  std::vector<double> f8;
  std::vector<float> f4;
  std::vector<int32_t> i4;
  std::vector<int64_t> i8;
  std::vector<bool> b1;
  for (int64_t i = 0; i < n; ++i) {
    f8.push_back(double(k(i) - 504) / 7.0);
    f4.push_back(float(double(k(i) - 504) / 7.0));
    i4.push_back(int32_t(k(i) - 504));
    i8.push_back((k(i) - 504) * int64_t{4096000012});
    b1.push_back(k(i) % 3 == 0);
  }
  // Made 1-d and then reshaped: from_vector's empty shape means "1-d".
  const st::Shape flat{n};
  if (code == "f8") return st::from_vector(f8, flat).reshape(shape);
  if (code == "f4") return st::from_vector(f4, flat).reshape(shape);
  if (code == "i4") return st::from_vector(i4, flat).reshape(shape);
  if (code == "i8") return st::from_vector(i8, flat).reshape(shape);
  return st::from_vector(b1, flat).reshape(shape);
}

/// make_npy.py's CASES: file name, dtype code, shape (and in the file:
/// C or Fortran order, byte order, version, which the loader must undo).
struct Case {
  std::string name, code;
  st::Shape shape;
  bool plain;  ///< C order, little-endian, the version numpy.save picks
};
std::vector<Case> cases() {
  std::vector<Case> out;
  for (std::string c : {"f4", "f8", "i4", "i8", "b1"}) {
    out.push_back({c + "_c", c, {2, 3, 4}, true});
    out.push_back({c + "_fortran", c, {3, 4, 2}, false});
    if (c != "b1") out.push_back({c + "_big", c, {5, 3}, false});
  }
  out.push_back({"f8_big_fortran", "f8", {4, 5}, false});
  out.push_back({"i8_1d", "i8", {7}, true});
  out.push_back({"f8_scalar", "f8", {}, true});
  out.push_back({"f4_empty", "f4", {0, 3}, true});
  out.push_back({"f4_v2", "f4", {3, 2}, false});
  out.push_back({"i4_v3", "i4", {2, 5}, false});
  return out;
}

/// Every file make_npy.py writes, in dir, loads as the values it was made from.
void check_numpy_files(const fs::path& dir) {
  for (const Case& c : cases()) {
    INFO(c.name);
    require_same(st::load_npy((dir / (c.name + ".npy")).string()), expected(c.code, c.shape));
  }
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> f8 =
      st::load_npy((dir / "f8_special.npy").string()).to_vector<double>();
  REQUIRE(f8.size() == 6);
  CHECK(std::isnan(f8[0]));
  CHECK(std::vector<double>(f8.begin() + 1, f8.end()) ==
        std::vector<double>{inf, -inf, -0.0, 5e-324, 1.7976931348623157e308});
  CHECK(std::signbit(f8[3]));
  const st::Tensor f4t = st::load_npy((dir / "f4_special_big.npy").string());
  REQUIRE(f4t.dtype() == st::f32);
  const std::vector<float> f4 = f4t.to_vector<float>();
  REQUIRE(f4.size() == 6);
  CHECK(std::isnan(f4[0]));
  CHECK(std::vector<float>(f4.begin() + 1, f4.end()) ==
        std::vector<float>{float(inf), float(-inf), -0.0f, 0x1p-149f, 0x1.fffffep127f});
}

/// The file name make_npy.py check expects: "<code>__<d0>x<d1>.npy".
std::string check_name(const std::string& code, const st::Shape& shape) {
  std::string s = code + "__";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(shape[i]);
  }
  return s + ".npy";
}

/// A .npy file with the given header text, padded as NumPy pads it.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  const std::size_t pad = 64 - (prefix + dict.size() + 1) % 64;
  const std::size_t hlen = dict.size() + pad + 1;
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (std::size_t i = 0; i < prefix - 8; ++i) out += char((hlen >> (8 * i)) & 0xff);
  return out + dict + std::string(pad, ' ') + "\n" + data;
}

std::string dict(const std::string& descr, const std::string& fortran, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

/// The Python to run: $STRATA_TEST_PYTHON, else Debian's /usr/bin/python3
/// (a python3 earlier on PATH, e.g. pyenv's, may lack NumPy).
std::string python() {
  const char* p = std::getenv("STRATA_TEST_PYTHON");
  return p && *p ? p : "/usr/bin/python3";
}

}  // namespace

TEST_CASE("load_npy reads the files NumPy wrote (committed test data)", "[nn]") {
  check_numpy_files(fs::path(kData) / "npy");
}

TEST_CASE("save_npy writes the bytes numpy.save writes", "[nn]") {
  const fs::path dir = scratch_dir("npy_bytes");
  for (const Case& c : cases()) {
    if (!c.plain) continue;
    INFO(c.name);
    const fs::path numpy_file = fs::path(kData) / "npy" / (c.name + ".npy");
    const std::string out = (dir / "x.npy").string();
    st::save_npy(out, expected(c.code, c.shape));
    CHECK(read_bytes(out) == read_bytes(numpy_file));
  }
  fs::remove_all(dir);
}

TEST_CASE("save_npy / load_npy round trip every dtype and layout", "[nn]") {
  const fs::path dir = scratch_dir("npy_roundtrip");
  for (const auto& [name, t] : every_kind()) {
    INFO(name);
    const std::string path = (dir / (name + ".npy")).string();
    st::save_npy(path, t);
    require_same(st::load_npy(path), t);
  }
  // A rank-30000 tensor's header needs version 2.0 (a u32 length).
  const st::Tensor deep = st::full(st::Shape(std::vector<int64_t>(30000, 1)), 3.25, st::f64);
  const std::string path = (dir / "rank.npy").string();
  st::save_npy(path, deep);
  const std::string bytes = read_bytes(path);
  CHECK(bytes[6] == 2);
  CHECK(bytes.find('\n') % 64 == 63);
  require_same(st::load_npy(path), deep);
  fs::remove_all(dir);
}

TEST_CASE("malformed .npy files throw a clear st::Error naming load_npy and the file", "[nn]") {
  const fs::path dir = scratch_dir("npy_malformed");
  const fs::path path = dir / "bad.npy";
  const std::string p = path.string();
  auto load_msg = [&]<class E = st::ValueError>(const std::string& file_bytes) {
    write_bytes(path, file_bytes);
    const std::string msg = message_of<E>([&] { st::load_npy(p); });
    CHECK_THAT(msg, StartsWith("load_npy: '" + p + "': "));
    CHECK(msg.size() < 600);
    return msg;
  };
  const std::string f8x2(16, '\x01');
  const std::string ok_descr = "'<f8'", ok_shape = "(2,)";

  SECTION("bad magic, and a file shorter than the preamble") {
    CHECK_THAT(load_msg(std::string("\x93NUMPZ\x01\x00\x10\x00{}", 12)),
               Contains("not a .npy file"));
    CHECK_THAT(load_msg("PK\x03\x04 a zip file"), Contains("not a .npy file"));
    CHECK_THAT(load_msg("\x93NUM"), Contains("shorter than a .npy preamble"));
  }
  SECTION("unsupported versions") {
    for (const char* v : {"\x04\x00", "\x01\x01", "\x00\x00"}) {
      std::string f = npy_file(dict(ok_descr, "False", ok_shape), f8x2);
      f.replace(6, 2, v, 2);
      CHECK_THAT(load_msg(f), Contains("unsupported .npy version"));
    }
  }
  SECTION("a header length past the end of the file") {
    std::string f = npy_file(dict(ok_descr, "False", ok_shape), "");
    f[8] = char(0xff), f[9] = char(0x7f);
    CHECK_THAT(load_msg(f), Contains("header length 32767 exceeds"));
    CHECK_THAT(load_msg(std::string("\x93NUMPY\x02\x00\x01\x00", 10)),
               Contains("ends inside the header length"));
  }
  SECTION("a header over the 1 MiB limit") {
    const std::string big = npy_file("{" + std::string(1 << 21, ' ') + "}", "", 2);
    CHECK_THAT(load_msg(big), Contains("exceeds the limit of 1048576"));
  }
  SECTION("a header that is not a dict") {
    CHECK_THAT(load_msg(npy_file("[1, 2]", "")), Contains("expected the header to start with '{'"));
    CHECK_THAT(load_msg(npy_file("'descr'", "")), Contains("a Python dict"));
    CHECK_THAT(load_msg(npy_file("", "")), Contains("a Python dict"));
  }
  SECTION("missing, extra and repeated keys") {
    CHECK_THAT(load_msg(npy_file("{'descr': '<f8', 'fortran_order': False}", f8x2)),
               Contains("no 'shape'"));
    CHECK_THAT(load_msg(npy_file("{}", "")), Contains("no 'descr'"));
    CHECK_THAT(load_msg(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), "
                                 "'extra': 1}",
                                 f8x2)),
               Contains("unexpected key 'extra'"));
    CHECK_THAT(load_msg(npy_file("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
                                 "'shape': (2,)}",
                                 f8x2)),
               Contains("'descr' appears twice"));
    CHECK_THAT(load_msg(npy_file("{descr: '<f8'}", "")), Contains("expected a quoted key"));
  }
  SECTION("bad descr") {
    CHECK_THAT(load_msg(npy_file(dict("'xyz!'", "False", ok_shape), f8x2)),
               Contains("descr 'xyz!' is not a NumPy type string"));
    CHECK_THAT(load_msg(npy_file(dict("'<'", "False", ok_shape), f8x2)),
               Contains("descr '<' is not a NumPy type string"));
    CHECK_THAT(load_msg(npy_file(dict("''", "False", ok_shape), f8x2)),
               Contains("is not a NumPy type string"));
    CHECK_THAT(load_msg(npy_file(dict("5", "False", ok_shape), f8x2)),
               Contains("expected descr as a quoted type string"));
    CHECK_THAT(load_msg(npy_file("{'descr': '<f8", f8x2)),
               Contains("escape or a line break"));  // the string runs into the padding's '\n'
  }
  SECTION("dtypes strata does not have") {
    for (const char* d : {"'<c8'", "'|O'", "'<f2'", "'|u1'", "'<U5'", "'|i1'", "'<u8'"}) {
      CHECK_THAT(load_msg.operator()<st::DTypeError>(npy_file(dict(d, "False", ok_shape), f8x2)),
                 Contains(std::string("dtype ") + d + " is not supported"));
    }
    CHECK_THAT(load_msg.operator()<st::DTypeError>(
                   npy_file(dict("[('a', '<f4'), ('b', '<i4')]", "False", ok_shape), f8x2)),
               Contains("structured"));
  }
  SECTION("bad shapes") {
    auto shape_msg = [&](const std::string& shape) {
      return load_msg(npy_file(dict(ok_descr, "False", shape), f8x2));
    };
    CHECK_THAT(shape_msg("(-1,)"), Contains("shape entry '-1' is negative"));
    CHECK_THAT(shape_msg("(2.5,)"), Contains("shape entry '2.5' is not an integer"));
    CHECK_THAT(shape_msg("('a',)"), Contains("is not an integer"));
    CHECK_THAT(shape_msg("(2e3,)"), Contains("is not an integer"));
    CHECK_THAT(shape_msg("[2]"), Contains("shape is '[2]"));
    CHECK_THAT(shape_msg("(2)"), Contains("an integer in parentheses, not a tuple"));
    CHECK_THAT(shape_msg("(2 3)"), Contains("expected ',' or ')' in the shape, found '3)"));
    CHECK_THAT(shape_msg("(99999999999999999999,)"), Contains("does not fit int64"));
    CHECK_THAT(shape_msg("(4294967296, 4294967296, 4)"), Contains("overflows int64"));
    CHECK_THAT(shape_msg("(0, 4611686018427387904, 4)"), Contains("overflows int64"));
    CHECK_THAT(shape_msg("(4611686018427387904,)"),  // 2^62 elements, 2^65 bytes
               Contains("the byte count of shape [4611686018427387904] overflows"));
  }
  SECTION("fortran_order that is not a bool") {
    for (const char* f : {"1", "'True'", "None", "true"}) {
      CHECK_THAT(load_msg(npy_file(dict(ok_descr, f, ok_shape), f8x2)),
                 Contains("fortran_order is '") && Contains("not True or False"));
    }
  }
  SECTION("truncated data and trailing bytes") {
    CHECK_THAT(load_msg(npy_file(dict(ok_descr, "False", "(3,)"), f8x2)),
               Contains("needs 24 bytes of data, but 16 follow the header (truncated"));
    CHECK_THAT(load_msg(npy_file(dict(ok_descr, "False", "(1,)"), f8x2)),
               Contains("trailing bytes"));
    // A file cut inside the header.
    const std::string full = npy_file(dict(ok_descr, "False", ok_shape), f8x2);
    CHECK_THAT(load_msg(full.substr(0, 40)), Contains("exceeds"));
  }
  SECTION("a header that is not ASCII (1.0, 2.0) or not UTF-8 (3.0)") {
    CHECK_THAT(load_msg(npy_file(dict("'<f\xE9'", "False", ok_shape), f8x2)),
               Contains("'\\xE9', not ASCII"));
    CHECK_THAT(load_msg(npy_file(dict("'<f\xE9'", "False", ok_shape), f8x2, 2)),
               Contains("not ASCII"));
    CHECK_THAT(load_msg(npy_file(dict("'<f\xE9'", "False", ok_shape), f8x2, 3)),
               Contains("not valid UTF-8"));
    // Valid UTF-8 in a 3.0 header is read, and then is not a type string.
    CHECK_THAT(load_msg(npy_file(dict("'<f\xC3\xA9'", "False", ok_shape), f8x2, 3)),
               Contains("descr '<f\\xC3\\xA9' is not a NumPy type string"));
  }
  SECTION("100k levels of nesting") {
    const std::string deep_shape = std::string(100000, '(') + std::string(100000, ')');
    CHECK_THAT(load_msg(npy_file(dict(ok_descr, "False", deep_shape), f8x2, 2)),
               Contains("is not an integer"));
    CHECK_THAT(load_msg(npy_file(std::string(100000, '{'), "", 2)),
               Contains("expected a quoted key"));
    CHECK_THAT(load_msg.operator()<st::DTypeError>(
                   npy_file(dict(std::string(100000, '['), "False", ok_shape), f8x2, 2)),
               Contains("structured"));
  }
  SECTION("text after the dict, and a bool byte other than 0 or 1") {
    CHECK_THAT(load_msg(npy_file(dict(ok_descr, "False", ok_shape) + " {}", f8x2)),
               Contains("text after the dict"));
    CHECK_THAT(load_msg(npy_file(dict("'|b1'", "False", "(3,)"), std::string("\0\1\2", 3))),
               Contains("bool element 2 is byte 2"));
  }
  SECTION("a FIFO (must not hang), a directory, a device, a missing file") {
    const std::string fifo = (dir / "pipe.npy").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THAT(message_of<st::ValueError>([&] { st::load_npy(fifo); }),
               StartsWith("load_npy: '" + fifo + "': not a regular file (a FIFO)"));
    CHECK_THAT(message_of<st::ValueError>([&] { st::load_npy(dir.string()); }),
               Contains("not a regular file (a directory)"));
    if (fs::exists("/dev/zero")) {
      CHECK_THAT(message_of<st::ValueError>([&] { st::load_npy("/dev/zero"); }),
                 StartsWith("load_npy: '/dev/zero': not a regular file (a character device)"));
    }
    CHECK_THAT(message_of<st::ValueError>([&] { st::load_npy((dir / "nope.npy").string()); }),
               Contains("cannot open it"));
  }
  fs::remove_all(dir);
}

TEST_CASE("save_npy is atomic and refuses bad input before touching the file", "[nn]") {
  const fs::path dir = scratch_dir("npy_atomic");
  const std::string path = (dir / "x.npy").string();
  const st::Tensor v1 = tensor(random_values(10, 8), {2, 5});
  st::save_npy(path, v1);
  const std::string before = read_bytes(path);
  std::string temp_seen;
  st::detail::before_atomic_rename = [&](const std::string& tmp) {
    temp_seen = tmp;
    CHECK(fs::path(tmp).parent_path() == fs::path(path).parent_path());
    throw std::runtime_error("simulated crash before rename");
  };
  CHECK_THAT(
      message_of<st::ValueError>([&] { st::save_npy(path, tensor(random_values(4, 9), {4})); }),
      StartsWith("save_npy: '" + path + "': ") && Contains("simulated crash"));
  st::detail::before_atomic_rename = nullptr;
  CHECK(read_bytes(path) == before);
  CHECK_FALSE(temp_seen.empty());
  CHECK_FALSE(fs::exists(temp_seen));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  CHECK_THROWS_AS(st::save_npy(path, st::Tensor()), st::ValueError);
  CHECK(read_bytes(path) == before);
  CHECK_THAT(message_of<st::ValueError>(
                 [&] { st::save_npy((dir / "no" / "such" / "x.npy").string(), v1); }),
             StartsWith("save_npy: ") && Contains("temporary file"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::save_npy(dir.string() + "/", v1); }),
             Contains("not a file name"));
  fs::remove_all(dir);
}

// Run by ctest as nn_npy_numpy (hidden from the plain run): NumPy itself
// writes files for strata to read, and reads the files strata writes.
TEST_CASE("NumPy reads what save_npy writes and writes what load_npy reads", "[nn][.npy_numpy]") {
  if (std::system((python() + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
    std::cout << "SKIPPED: " << python()
              << " with NumPy is not available (set STRATA_TEST_PYTHON, or apt-get install "
                 "python3-numpy); the committed NumPy files were still checked by the [nn] tests\n";
    return;
  }
  const fs::path dir = scratch_dir("npy_numpy");
  const std::string script = kData + "/make_npy.py";
  // NumPy -> strata: fresh files from this machine's NumPy.
  const fs::path from_numpy = dir / "from_numpy";
  REQUIRE(std::system((python() + " " + script + " write " + from_numpy.string()).c_str()) == 0);
  check_numpy_files(from_numpy);
  // strata -> NumPy: every dtype and shape kind, contiguous or not.
  const fs::path from_strata = dir / "from_strata";
  fs::create_directories(from_strata);
  for (const std::string code : {"f4", "f8", "i4", "i8", "b1"}) {
    for (const st::Shape& shape :
         {st::Shape{2, 3, 4}, st::Shape{}, st::Shape{0, 3}, st::Shape{7}}) {
      st::Tensor t = expected(code, shape);
      if (shape.size() == 3) {  // written from a transposed copy's transpose: not contiguous
        t = st::Tensor(st::raw::contiguous(t.permute({2, 1, 0}).raw())).permute({2, 1, 0});
      }
      st::save_npy((from_strata / check_name(code, shape)).string(), t);
    }
  }
  CHECK(std::system((python() + " " + script + " check " + from_strata.string()).c_str()) == 0);
  fs::remove_all(dir);
}
