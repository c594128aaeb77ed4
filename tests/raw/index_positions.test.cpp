// SPDX-License-Identifier: MIT
// raw/index_positions: the front end's one check and normalisation of index
// tensors, by both paths (the host loop the CPU uses, and the raw-op path
// other devices use, run here on the CPU), and through raw::index_select and
// raw::index_add, whose backends now trust what it hands them.
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "raw/index_positions.hpp"
#include "support/naive.hpp"

namespace st = strata;

namespace {

using Path = std::function<st::RawTensor(const st::RawTensor&, int64_t, int64_t, std::string_view)>;

/// Both ways of normalising, each with its name for INFO.
const std::pair<const char*, Path> kPaths[] = {
    // The host path reads a CPU tensor: off the CPU, through a copy there and back.
    {"host",
     [](const st::RawTensor& i, int64_t a, int64_t s, std::string_view op) {
       const st::RawTensor pos =
           st::detail::host_index_positions(st::raw::to_device(i, st::Device::cpu()), a, s, op);
       return st::raw::to_device(pos, i.device());
     }},
    {"raw ops", [](const st::RawTensor& i, int64_t a, int64_t s, std::string_view op) {
       return st::detail::device_index_positions(i, a, s, op);
     }}};

/// The elements of an integer tensor in row-major order.
std::vector<int64_t> ints(const st::RawTensor& t) {
  std::vector<int64_t> v(std::size_t(t.numel()));
  st::raw::to_host(st::raw::cast(t, st::i64), v.data());
  return v;
}

/// An index tensor holding `vals` in row-major order, of the given dtype, laid
/// out as kind: 0 contiguous, 1 flipped (negative strides), 2 transposed, 3 at
/// an offset into its storage. shape is 2-D.
st::RawTensor index_tensor(const st::Shape& shape, st::DType dtype,
                           const std::vector<int64_t>& vals, int kind) {
  const int64_t rows = shape[0], cols = shape[1];
  std::vector<int64_t> stored(vals.size() + 3, 0);
  st::Shape base = shape;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t v = vals[std::size_t(r * cols + c)];
      if (kind == 1) {
        stored[std::size_t((rows - 1 - r) * cols + (cols - 1 - c))] = v;
      } else if (kind == 2) {
        stored[std::size_t(c * rows + r)] = v, base = st::Shape{cols, rows};
      } else {
        stored[std::size_t(r * cols + c + (kind == 3 ? 3 : 0))] = v;
      }
    }
  }
  st::RawTensor t;
  if (dtype == st::i64) {
    t = st::raw::from_host(stored.data(), {int64_t(stored.size())}, st::i64);
  } else {
    std::vector<int32_t> narrow(stored.begin(), stored.end());
    t = st::raw::from_host(narrow.data(), {int64_t(narrow.size())}, st::i32);
  }
  const int64_t n = rows * cols;
  t = t.slice(0, kind == 3 ? 3 : 0, (kind == 3 ? 3 : 0) + n);
  t = st::raw::reshape(t, base);
  if (kind == 1) t = t.flip(0).flip(1);
  if (kind == 2) t = t.transpose(0, 1);
  return t;
}

/// What index_positions must throw for entry `entry` of value `value`.
std::string range_message(std::string_view op, int64_t value, int64_t entry, int64_t axis,
                          int64_t size) {
  return std::string(op) + ": index " + std::to_string(value) + " (entry " + std::to_string(entry) +
         " of the index tensor) is out of range for axis " + std::to_string(axis) + " with size " +
         std::to_string(size);
}

/// The message of the IndexError f throws ("" when it throws none).
std::string index_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const st::IndexError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("index_positions: negative entries normalised, in every layout", "[raw]") {
  std::mt19937_64 rng(2718);
  const int64_t size = 7;
  std::uniform_int_distribution<int64_t> pick(-size, size - 1);
  for (st::DType dtype : {st::i32, st::i64}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<int64_t> vals(12);
      for (int64_t& v : vals) v = pick(rng);
      vals[0] = -size, vals[1] = size - 1, vals[2] = -1;  // both ends and -1, always
      std::vector<int64_t> want = vals;
      for (int64_t& v : want) v = v < 0 ? v + size : v;
      const st::RawTensor idx = index_tensor({3, 4}, dtype, vals, kind);
      for (const auto& [name, path] : kPaths) {
        INFO(name << " path, " << dtype_name(dtype) << ", layout " << kind);
        const st::RawTensor pos = path(idx, 1, size, "index_select");
        CHECK(pos.dtype() == st::i64);
        CHECK(pos.shape() == idx.shape());
        CHECK(pos.is_contiguous());
        CHECK(pos.device() == idx.device());
        CHECK(ints(pos) == want);
        CHECK(ints(idx) == vals);  // the caller's tensor is never written
      }
      CHECK(ints(st::detail::index_positions(idx, 1, size, "index_select")) == want);
    }
  }
  SECTION("rank 0") {
    for (const auto& [name, path] : kPaths) {
      INFO(name);
      const st::RawTensor pos = path(st::testing::make({}, st::i32, {-3}), 0, size, "t");
      CHECK(pos.shape() == st::Shape{});
      CHECK(ints(pos) == std::vector<int64_t>{4});
    }
  }
}

TEST_CASE("index_positions: out of range at both ends, i32 and i64", "[raw]") {
  const int64_t size = 5;
  const int64_t i64_min = std::numeric_limits<int64_t>::min(),
                i64_max = std::numeric_limits<int64_t>::max();
  const int64_t i32_min = std::numeric_limits<int32_t>::min(),
                i32_max = std::numeric_limits<int32_t>::max();
  for (st::DType dtype : {st::i32, st::i64}) {
    std::vector<int64_t> bad{size, -size - 1, 9, -100};
    if (dtype == st::i64) bad.insert(bad.end(), {i64_min, i64_max});
    if (dtype == st::i32) bad.insert(bad.end(), {i32_min, i32_max});
    for (int64_t b : bad) {
      for (int kind = 0; kind < 4; ++kind) {
        // Row-major entry 5 is the first bad one; entry 9 is bad too.
        const std::vector<int64_t> vals{0, -1, 4, -5, 2, b, 3, 1, 0, size + 2, -2, 1};
        const st::RawTensor idx = index_tensor({3, 4}, dtype, vals, kind);
        const std::string want = range_message("index_select", b, 5, 1, size);
        for (const auto& [name, path] : kPaths) {
          INFO(name << " path, " << dtype_name(dtype) << ", layout " << kind << ", value " << b);
          CHECK(index_error([&, run = path] { run(idx, 1, size, "index_select"); }) == want);
        }
      }
    }
  }
  SECTION("through index_select and index_add, which name themselves") {
    std::mt19937_64 rng(99);
    const st::RawTensor x =
        st::testing::random_tensor({3, 5}, st::f64, st::testing::LayoutKind::permuted, rng);
    const st::RawTensor idx = st::testing::make({2, 2}, st::i32, {1, -5, 0, -6});
    CHECK(index_error([&] { st::raw::index_select(x, 1, idx); }) ==
          range_message("index_select", -6, 3, 1, size));
    const st::RawTensor src =
        st::testing::random_tensor({3, 2, 2}, st::f64, st::testing::LayoutKind::flipped, rng);
    CHECK(index_error([&] { st::raw::index_add(x, -1, idx, src); }) ==
          range_message("index_add", -6, 3, 1, size));
    const int64_t top = i64_max;
    CHECK(index_error([&] {
            st::raw::index_select(x, 0, st::raw::from_host(&top, {}, st::i64));
          }) == range_message("index_select", top, 0, 0, 3));
  }
  SECTION("an empty axis takes no index at all") {
    for (const auto& [name, path] : kPaths) {
      INFO(name);
      CHECK(index_error([run = path] { run(st::testing::make({1}, st::i64, {0}), 2, 0, "t"); }) ==
            range_message("t", 0, 0, 2, 0));
    }
  }
  SECTION("a float index tensor is a DTypeError on both paths") {
    for (const auto& [name, path] : kPaths) {
      INFO(name);
      CHECK_THROWS_AS(path(st::testing::make({1}, st::f32, {0}), 0, 3, "t"), st::DTypeError);
    }
  }
}

// The host path itself: CPU tensors only (storage identity is the point).
TEST_CASE(
    "index_positions: in-range contiguous i64 positions pass through without a copy on the host",
    "[raw][cpu_only]") {
  const int64_t size = 7;
  const st::RawTensor idx = st::testing::make({4}, st::i64, {3, 0, 6, 2});
  CHECK(st::detail::host_index_positions(idx, 0, size, "t").storage() == idx.storage());
  const st::RawTensor neg = st::testing::make({4}, st::i64, {3, 0, -1, 2});
  const st::RawTensor pos = st::detail::host_index_positions(neg, 0, size, "t");
  CHECK(pos.storage() != neg.storage());
  CHECK(ints(pos) == std::vector<int64_t>{3, 0, 6, 2});
  CHECK(ints(neg) == std::vector<int64_t>{3, 0, -1, 2});
}

TEST_CASE("index_positions: empty index tensors", "[raw]") {
  std::mt19937_64 rng(5150);
  for (const st::Shape& shape : {st::Shape{0}, st::Shape{2, 0}, st::Shape{0, 3}}) {
    for (st::DType dtype : {st::i32, st::i64}) {
      const st::RawTensor idx = st::raw::empty(shape, dtype);
      for (const auto& [name, path] : kPaths) {
        INFO(name << " path, shape " << shape << " " << dtype_name(dtype));
        const st::RawTensor pos = path(idx, 0, 4, "t");
        CHECK(pos.shape() == shape);
        CHECK(pos.dtype() == st::i64);
        CHECK(pos.numel() == 0);
        // Even an empty axis takes an empty index.
        CHECK(path(idx, 0, 0, "t").numel() == 0);
      }
      const st::RawTensor x =
          st::testing::random_tensor({4, 3}, st::f32, st::testing::LayoutKind::sliced, rng);
      const st::RawTensor y = st::raw::index_select(x, 0, idx);
      st::Shape want = shape;
      want.push_back(3);
      CHECK(y.shape() == want);
      st::Shape src_shape{4};
      for (int64_t d : shape) src_shape.push_back(d);
      const st::RawTensor z = st::raw::index_add(x, 1, idx, st::raw::empty(src_shape, st::f32));
      CHECK(st::testing::values(z) == st::testing::values(x));
    }
  }
  // An empty index on an empty axis.
  CHECK(st::raw::index_select(st::raw::empty({0, 2}, st::i64), 0, st::raw::empty({0}, st::i32))
            .shape() == st::Shape{0, 2});
}
