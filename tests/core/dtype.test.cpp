// SPDX-License-Identifier: MIT
// Tests for core/dtype.hpp: names, sizes, promotion and runtime dispatch.
#include "core/dtype.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <concepts>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

#include "core/error.hpp"

namespace st = strata;

namespace {
// The promotion order of DESIGN §2, written out: bool < i32 < i64 < f32 < f64.
constexpr std::array<st::DType, 5> kOrder = {st::bool_, st::i32, st::i64, st::f32, st::f64};
}  // namespace

TEST_CASE("dtype_name and dtype_size", "[core]") {
  SECTION("names") {
    REQUIRE(st::dtype_name(st::bool_) == "bool");
    REQUIRE(st::dtype_name(st::i32) == "i32");
    REQUIRE(st::dtype_name(st::i64) == "i64");
    REQUIRE(st::dtype_name(st::f32) == "f32");
    REQUIRE(st::dtype_name(st::f64) == "f64");
    std::ostringstream os;
    os << st::f64 << ' ' << st::bool_;
    REQUIRE(os.str() == "f64 bool");
  }
  SECTION("sizes match the C++ types") {
    REQUIRE(st::dtype_size(st::bool_) == sizeof(bool));
    REQUIRE(st::dtype_size(st::i32) == 4);
    REQUIRE(st::dtype_size(st::i64) == 8);
    REQUIRE(st::dtype_size(st::f32) == 4);
    REQUIRE(st::dtype_size(st::f64) == 8);
  }
  SECTION("dtype_v maps C++ types to dtypes") {
    STATIC_REQUIRE(st::dtype_v<bool> == st::bool_);
    STATIC_REQUIRE(st::dtype_v<int32_t> == st::i32);
    STATIC_REQUIRE(st::dtype_v<int64_t> == st::i64);
    STATIC_REQUIRE(st::dtype_v<float> == st::f32);
    STATIC_REQUIRE(st::dtype_v<double> == st::f64);
    STATIC_REQUIRE(st::Element<float>);
    STATIC_REQUIRE_FALSE(st::Element<uint8_t>);
    STATIC_REQUIRE_FALSE(st::Element<int16_t>);
  }
}

TEST_CASE("promote_types follows bool < i32 < i64 < f32 < f64", "[core]") {
  SECTION("all 25 pairs") {
    int pairs = 0;
    for (std::size_t i = 0; i < kOrder.size(); ++i) {
      for (std::size_t j = 0; j < kOrder.size(); ++j) {
        const st::DType expect = kOrder[std::max(i, j)];
        INFO(st::dtype_name(kOrder[i]) << " with " << st::dtype_name(kOrder[j]));
        REQUIRE(st::promote_types(kOrder[i], kOrder[j]) == expect);
        ++pairs;
      }
    }
    REQUIRE(pairs == 25);
  }
  SECTION("a few spelled out") {
    STATIC_REQUIRE(st::promote_types(st::bool_, st::i32) == st::i32);
    STATIC_REQUIRE(st::promote_types(st::i64, st::f32) == st::f32);
    STATIC_REQUIRE(st::promote_types(st::f64, st::i32) == st::f64);
    STATIC_REQUIRE(st::promote_types(st::bool_, st::bool_) == st::bool_);
  }
}

TEST_CASE("is_floating and is_integral", "[core]") {
  REQUIRE(st::is_floating(st::f32));
  REQUIRE(st::is_floating(st::f64));
  REQUIRE_FALSE(st::is_floating(st::i32));
  REQUIRE_FALSE(st::is_floating(st::i64));
  REQUIRE_FALSE(st::is_floating(st::bool_));
  REQUIRE(st::is_integral(st::i32));
  REQUIRE(st::is_integral(st::i64));
  REQUIRE_FALSE(st::is_integral(st::f32));
  REQUIRE_FALSE(st::is_integral(st::f64));
  REQUIRE_FALSE(st::is_integral(st::bool_));
}

TEST_CASE("visit_dtype", "[core]") {
  SECTION("dispatches each dtype to its C++ type") {
    auto size_and_name = []<class T>(st::type_tag<T>) -> std::pair<std::size_t, std::string> {
      std::string name;
      if constexpr (std::is_same_v<T, bool>) name = "bool";
      if constexpr (std::is_same_v<T, int32_t>) name = "int32_t";
      if constexpr (std::is_same_v<T, int64_t>) name = "int64_t";
      if constexpr (std::is_same_v<T, float>) name = "float";
      if constexpr (std::is_same_v<T, double>) name = "double";
      return {sizeof(T), name};
    };
    REQUIRE(st::visit_dtype(st::bool_, "t", size_and_name) ==
            std::pair<std::size_t, std::string>{sizeof(bool), "bool"});
    REQUIRE(st::visit_dtype(st::i32, "t", size_and_name) ==
            std::pair<std::size_t, std::string>{4, "int32_t"});
    REQUIRE(st::visit_dtype(st::i64, "t", size_and_name) ==
            std::pair<std::size_t, std::string>{8, "int64_t"});
    REQUIRE(st::visit_dtype(st::f32, "t", size_and_name) ==
            std::pair<std::size_t, std::string>{4, "float"});
    REQUIRE(st::visit_dtype(st::f64, "t", size_and_name) ==
            std::pair<std::size_t, std::string>{8, "double"});
  }
  SECTION("typed work through the tag") {
    // Sum 0.5 + 1.5 in the visited type: 2 in floats, 1 in integers (0 + 1), true for bool.
    auto sum = [](st::DType t) {
      return st::visit_dtype(t, "sum", []<class T>(st::type_tag<T>) {
        return static_cast<double>(static_cast<T>(static_cast<T>(0.5) + static_cast<T>(1.5)));
      });
    };
    REQUIRE(sum(st::f32) == 2.0);
    REQUIRE(sum(st::f64) == 2.0);
    REQUIRE(sum(st::i32) == 1.0);
    REQUIRE(sum(st::i64) == 1.0);
    REQUIRE(sum(st::bool_) == 1.0);
  }
  SECTION("void-returning visitors") {
    int calls = 0;
    for (st::DType t : kOrder) {
      st::visit_dtype(t, "count", [&]<class T>(st::type_tag<T>) {
        REQUIRE(st::dtype_v<T> == t);
        ++calls;
      });
    }
    REQUIRE(calls == 5);
  }
  SECTION("a constrained lambda accepts only its types") {
    auto exp_like = []<std::floating_point T>(st::type_tag<T>) { return sizeof(T); };
    REQUIRE(st::visit_dtype(st::f32, "exp", exp_like) == 4);
    REQUIRE(st::visit_dtype(st::f64, "exp", exp_like) == 8);
    REQUIRE_THROWS_AS(st::visit_dtype(st::i64, "exp", exp_like), st::DTypeError);
    REQUIRE_THROWS_WITH(st::visit_dtype(st::i64, "exp", exp_like),
                        Catch::Contains("exp") && Catch::Contains("i64"));
    REQUIRE_THROWS_WITH(st::visit_dtype(st::bool_, "log", exp_like),
                        Catch::Contains("log") && Catch::Contains("bool"));
    REQUIRE_THROWS_AS(st::visit_dtype(st::i32, "exp", exp_like), st::Error);

    auto ints_only = []<std::integral T>(st::type_tag<T>) { return std::is_signed_v<T>; };
    REQUIRE(st::visit_dtype(st::i32, "argmax", ints_only));
    REQUIRE_THROWS_WITH(st::visit_dtype(st::f64, "bitwise", ints_only),
                        Catch::Contains("bitwise") && Catch::Contains("f64"));
  }
}
