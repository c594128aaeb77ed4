// SPDX-License-Identifier: MIT
// Tests for core/shape.hpp (and the small vector under it) and core/error.hpp.
#include "core/shape.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace st = strata;

namespace {

// The dims 1..n, built without going through Shape.
std::vector<int64_t> iota_dims(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i + 1);
  return v;
}

bool same_dims(const st::Shape& s, const std::vector<int64_t>& v) {
  if (s.size() != v.size()) return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (s[i] != v[i]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("errors derive from st::Error and std::runtime_error", "[core]") {
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, st::Error>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::ShapeError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::IndexError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::DTypeError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::DeviceError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::ValueError>);

  SECTION("caught as the base classes") {
    REQUIRE_THROWS_AS(st::normalize_axis(5, 2, "op"), st::Error);
    REQUIRE_THROWS_AS(st::normalize_axis(5, 2, "op"), std::runtime_error);
    REQUIRE_THROWS_AS(st::checked_numel(st::Shape{-1}, "op"), st::Error);
    REQUIRE_THROWS_AS(st::broadcast_shapes({2}, {3}, "op"), std::runtime_error);
  }
  SECTION("detail::fail formats op: parts") {
    try {
      st::detail::fail<st::ValueError>("myop", "bad value ", 42, " in ", st::Shape{1, 2});
      FAIL("fail did not throw");
    } catch (const st::ValueError& e) {
      REQUIRE(std::string(e.what()) == "myop: bad value 42 in [1, 2]");
    }
  }
}

TEST_CASE("Shape printing", "[core]") {
  REQUIRE(st::to_string(st::Shape{}) == "[]");
  REQUIRE(st::to_string(st::Shape{7}) == "[7]");
  REQUIRE(st::to_string(st::Shape{2, 3}) == "[2, 3]");
  REQUIRE(st::Shape{2, 3, 4}.ndim() == 3);
  REQUIRE(st::Shape{}.ndim() == 0);
  REQUIRE(st::Shape{2, 3}.vec() == std::vector<int64_t>{2, 3});
  // operator<< writes what to_string does, so a message can stream a Shape.
  for (const st::Shape& s : {st::Shape{}, st::Shape{0}, st::Shape{2, 3}, st::Shape(12, 1)}) {
    std::ostringstream os;
    os << s;
    REQUIRE(os.str() == st::to_string(s));
  }
  REQUIRE(st::to_string(st::Shape(10, 2)) ==
          "[2, 2, 2, 2, 2, 2, 2, 2, 2, 2]");  // past the inline 8
  REQUIRE_THROWS_WITH(st::detail::fail<st::ShapeError>("add", "shapes ", st::Shape{2, 3}, " and ",
                                                       st::Shape{4}, " differ"),
                      "add: shapes [2, 3] and [4] differ");
}

TEST_CASE("checked_numel", "[core]") {
  SECTION("products") {
    REQUIRE(st::checked_numel(st::Shape{}, "op") == 1);
    REQUIRE(st::checked_numel(st::Shape{5}, "op") == 5);
    REQUIRE(st::checked_numel(st::Shape{2, 3, 4}, "op") == 24);
    REQUIRE(st::checked_numel(st::Shape{2, 0, 4}, "op") == 0);
    REQUIRE(st::checked_numel(st::Shape{1, 1, 1}, "op") == 1);
    // 2^31 * 2^31 = 2^62 still fits.
    REQUIRE(st::checked_numel(st::Shape{int64_t{1} << 31, int64_t{1} << 31}, "op") ==
            (int64_t{1} << 62));
    // Rank 20 of 2s: 2^20.
    REQUIRE(st::checked_numel(st::Shape(std::size_t{20}, int64_t{2}), "op") == 1048576);
  }
  SECTION("negative dim -> ValueError naming op and value") {
    REQUIRE_THROWS_AS(st::checked_numel(st::Shape{2, -3}, "zeros"), st::ValueError);
    REQUIRE_THROWS_WITH(st::checked_numel(st::Shape{2, -3}, "zeros"),
                        Catch::Contains("zeros") && Catch::Contains("-3"));
    // The negative dim is reported even when a zero dim comes first.
    REQUIRE_THROWS_AS(st::checked_numel(st::Shape{0, -1}, "op"), st::ValueError);
  }
  SECTION("int64 overflow -> ValueError") {
    const int64_t big = int64_t{1} << 40;
    REQUIRE_THROWS_AS(st::checked_numel(st::Shape{big, big}, "empty"), st::ValueError);
    REQUIRE_THROWS_WITH(st::checked_numel(st::Shape{big, big}, "empty"),
                        Catch::Contains("empty") && Catch::Contains("overflow"));
    // 2^32 * 2^31 = 2^63 is one past INT64_MAX.
    REQUIRE_THROWS_AS(st::checked_numel(st::Shape{int64_t{1} << 32, int64_t{1} << 31}, "op"),
                      st::ValueError);
    // Rank 64 of 2s: 2^64.
    REQUIRE_THROWS_AS(st::checked_numel(st::Shape(std::size_t{64}, int64_t{2}), "op"),
                      st::ValueError);
  }
  SECTION("the answer does not depend on the order of the dims") {
    // A function of the multiset of dims: each ordering must give the same
    // outcome (all return the same count, or all throw).
    const int64_t big = int64_t{1} << 62;
    const std::vector<std::vector<int64_t>> orders = {
        {0, big, 4}, {big, 0, 4}, {big, 4, 0}, {4, big, 0}};
    int threw = 0, returned_zero = 0;
    for (const auto& o : orders) {
      try {
        const int64_t n = st::checked_numel(st::Shape(o), "op");
        if (n == 0) ++returned_zero;
      } catch (const st::ValueError&) {
        ++threw;
      }
    }
    INFO("orders that threw: " << threw << ", orders that returned 0: " << returned_zero);
    REQUIRE((threw == 4 || returned_zero == 4));
  }
}

TEST_CASE("contiguous_strides", "[core]") {
  REQUIRE(st::contiguous_strides(st::Shape{}).empty());
  REQUIRE(st::contiguous_strides(st::Shape{5}) == st::Strides{1});
  REQUIRE(st::contiguous_strides(st::Shape{2, 3, 4}) == st::Strides{12, 4, 1});
  REQUIRE(st::contiguous_strides(st::Shape{4, 1}) == st::Strides{1, 1});
  REQUIRE(st::contiguous_strides(st::Shape{3, 1, 5}) == st::Strides{5, 5, 1});

  SECTION("rank 12: each stride is the product of the dims to its right") {
    const std::vector<int64_t> dims = {2, 1, 3, 2, 1, 2, 3, 1, 2, 2, 1, 3};
    const st::Strides s = st::contiguous_strides(st::Shape(dims));
    REQUIRE(s.size() == 12);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      int64_t expect = 1;
      for (std::size_t j = i + 1; j < dims.size(); ++j) expect *= dims[j];
      REQUIRE(s[i] == expect);
    }
  }
}

TEST_CASE("normalize_axis", "[core]") {
  SECTION("in range") {
    REQUIRE(st::normalize_axis(0, 3, "op") == 0);
    REQUIRE(st::normalize_axis(2, 3, "op") == 2);
    REQUIRE(st::normalize_axis(-1, 3, "op") == 2);
    REQUIRE(st::normalize_axis(-3, 3, "op") == 0);
    REQUIRE(st::normalize_axis(-2, 3, "op") == 1);
    REQUIRE(st::normalize_axis(11, 12, "op") == 11);
    REQUIRE(st::normalize_axis(-12, 12, "op") == 0);
  }
  SECTION("out of range -> IndexError with the axis") {
    REQUIRE_THROWS_AS(st::normalize_axis(3, 3, "sum"), st::IndexError);
    REQUIRE_THROWS_AS(st::normalize_axis(-4, 3, "sum"), st::IndexError);
    REQUIRE_THROWS_AS(st::normalize_axis(0, 0, "sum"), st::IndexError);
    REQUIRE_THROWS_WITH(st::normalize_axis(7, 3, "sum"),
                        Catch::Contains("sum") && Catch::Contains("7"));
    REQUIRE_THROWS_WITH(st::normalize_axis(-4, 3, "softmax"),
                        Catch::Contains("softmax") && Catch::Contains("-4"));
  }
}

TEST_CASE("broadcast_shapes", "[core]") {
  SECTION("success") {
    REQUIRE(st::broadcast_shapes({2, 3}, {2, 3}, "add") == st::Shape{2, 3});
    REQUIRE(st::broadcast_shapes({2, 1}, {1, 3}, "add") == st::Shape{2, 3});
    REQUIRE(st::broadcast_shapes({3}, {4, 3}, "add") == st::Shape{4, 3});
    REQUIRE(st::broadcast_shapes({4, 3}, {3}, "add") == st::Shape{4, 3});
    REQUIRE(st::broadcast_shapes({}, {2, 3}, "add") == st::Shape{2, 3});
    REQUIRE(st::broadcast_shapes({2, 3}, {}, "add") == st::Shape{2, 3});
    REQUIRE(st::broadcast_shapes({}, {}, "add") == st::Shape{});
    REQUIRE(st::broadcast_shapes({8, 1, 6, 1}, {7, 1, 5}, "add") == st::Shape{8, 7, 6, 5});
    REQUIRE(st::broadcast_shapes({5, 1, 0}, {1, 4, 1}, "add") == st::Shape{5, 4, 0});
    REQUIRE(st::broadcast_shapes({1}, {0}, "add") == st::Shape{0});
  }
  SECTION("rank 9 against rank 12") {
    std::vector<int64_t> a(9, 1), b(12, 2), expect(12, 2);
    a[4] = 2;
    REQUIRE(st::broadcast_shapes(st::Shape(a), st::Shape(b), "mul") == st::Shape(expect));
  }
  SECTION("failure names op, both shapes, the axis and both sizes") {
    REQUIRE_THROWS_AS(st::broadcast_shapes({2, 3}, {4, 3}, "add"), st::ShapeError);
    REQUIRE_THROWS_WITH(
        st::broadcast_shapes({2, 3}, {4, 3}, "add"),
        Catch::Contains("add") &&
            Catch::Contains("shapes [2, 3] and [4, 3] do not broadcast (axis 0: 2 vs 4)"));
    // The axis is counted in the output's (right-aligned) coordinates.
    REQUIRE_THROWS_WITH(st::broadcast_shapes({5, 2, 3}, {4, 3}, "mul"),
                        Catch::Contains("mul") && Catch::Contains("axis 1: 2 vs 4"));
    REQUIRE_THROWS_AS(st::broadcast_shapes({0}, {2}, "add"), st::ShapeError);
  }
}

TEST_CASE("Shape small-vector storage", "[core]") {
  SECTION("rank 9, 12 and 20 (heap path)") {
    for (int64_t rank : {0, 1, 8, 9, 12, 20}) {
      const auto dims = iota_dims(rank);
      const st::Shape s(dims);
      REQUIRE(s.ndim() == rank);
      REQUIRE(same_dims(s, dims));
      REQUIRE(st::Shape(dims.begin(), dims.end()) == s);
    }
  }
  SECTION("push_back across the inline limit") {
    st::Shape s;
    for (int64_t i = 0; i < 20; ++i) {
      s.push_back(i * 3);
      REQUIRE(s.size() == static_cast<std::size_t>(i + 1));
      REQUIRE(s.back() == i * 3);
      for (int64_t j = 0; j <= i; ++j) REQUIRE(s[j] == j * 3);
    }
    for (int64_t i = 19; i >= 0; --i) {
      REQUIRE(s.back() == i * 3);
      s.pop_back();
    }
    REQUIRE(s.empty());
  }
  SECTION("copy") {
    for (int64_t rank : {3, 12}) {
      const auto dims = iota_dims(rank);
      st::Shape a(dims);
      st::Shape b(a);  // copy construct
      REQUIRE(same_dims(b, dims));
      b[0] = 100;
      REQUIRE(a[0] == 1);  // independent storage
      st::Shape c{9, 9};
      c = a;  // copy assign
      REQUIRE(same_dims(c, dims));
      c[rank - 1] = -5;
      REQUIRE(a[rank - 1] == rank);
      st::Shape big(iota_dims(20));
      big = a;  // copy-assign a smaller shape into a heap one
      REQUIRE(same_dims(big, dims));
      const st::Shape& alias = a;
      a = alias;  // self-assignment
      REQUIRE(same_dims(a, dims));
    }
  }
  SECTION("move") {
    for (int64_t rank : {3, 9, 20}) {
      const auto dims = iota_dims(rank);
      st::Shape a(dims);
      st::Shape b(std::move(a));
      REQUIRE(same_dims(b, dims));
      REQUIRE(a.empty());  // NOLINT: moved-from is documented as emptied
      a.push_back(7);      // a moved-from vector is usable
      REQUIRE(same_dims(a, {7}));
      st::Shape c(iota_dims(12));
      c = std::move(b);
      REQUIRE(same_dims(c, dims));
      st::Shape d{1, 2};
      d = std::move(c);
      REQUIRE(same_dims(d, dims));
    }
  }
  SECTION("insert and erase") {
    // Build the expectation in a std::vector with the same operations.
    std::vector<int64_t> ref = iota_dims(6);
    st::Shape s(ref);
    const std::vector<std::pair<std::size_t, int64_t>> inserts = {
        {0, 100}, {7, 101}, {3, 102}, {9, 103}, {0, 104}, {5, 105}, {12, 106}, {1, 107}};
    for (auto [pos, v] : inserts) {
      s.insert(pos, v);
      ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(pos), v);
      REQUIRE(same_dims(s, ref));
    }
    REQUIRE(s.size() == 14);
    for (std::size_t pos : {0u, 5u, 11u, 3u, 9u, 0u, 2u, 6u, 0u, 4u, 3u, 0u, 1u, 0u}) {
      s.erase(pos);
      ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(pos));
      REQUIRE(same_dims(s, ref));
    }
    REQUIRE(s.empty());
  }
  SECTION("resize and fill constructor") {
    st::Shape s(std::size_t{10}, int64_t{4});
    REQUIRE(same_dims(s, std::vector<int64_t>(10, 4)));
    s.resize(3);
    REQUIRE(same_dims(s, {4, 4, 4}));
    s.resize(15, 2);
    std::vector<int64_t> expect(15, 2);
    expect[0] = expect[1] = expect[2] = 4;
    REQUIRE(same_dims(s, expect));
  }
  SECTION("equality") {
    REQUIRE(st::Shape{1, 2, 3} == st::Shape{1, 2, 3});
    REQUIRE_FALSE(st::Shape{1, 2, 3} == st::Shape{1, 2});
    REQUIRE_FALSE(st::Shape{1, 2, 3} == st::Shape{1, 2, 4});
    REQUIRE(st::Shape(iota_dims(20)) == st::Shape(iota_dims(20)));
    REQUIRE_FALSE(st::Shape(iota_dims(20)) == st::Shape(iota_dims(19)));
  }
}
