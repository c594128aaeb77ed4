// SPDX-License-Identifier: MIT
// Tests for core/random.hpp: Philox4x32-10 against the Random123 known-answer
// vectors, and the statistics of the uniform and normal streams built on it.
#include "core/random.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

namespace st = strata;

using Words = std::array<uint32_t, 4>;

TEST_CASE("philox4x32-10 known-answer vectors (Random123 kat_vectors)", "[core]") {
  SECTION("zero counter, zero key") {
    REQUIRE(st::detail::philox4x32({0, 0, 0, 0}, {0, 0}) ==
            Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  }
  SECTION("all ones") {
    REQUIRE(st::detail::philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                   {0xffffffffu, 0xffffffffu}) ==
            Words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  }
  SECTION("digits of pi") {
    REQUIRE(st::detail::philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                   {0xa4093822u, 0x299f31d0u}) ==
            Words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
  }
  SECTION("philox_words puts the element index in the counter and the seed in the key") {
    REQUIRE(st::detail::philox_words(0, 0) ==
            Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  }
}

TEST_CASE("unit_double and the uniform stream", "[core]") {
  SECTION("53 high bits scaled by 2^-53") {
    REQUIRE(st::detail::unit_double(0, 0) == 0.0);
    REQUIRE(st::detail::unit_double(0x80000000u, 0) == 0.5);
    REQUIRE(st::detail::unit_double(0xffffffffu, 0xffffffffu) == 1.0 - std::ldexp(1.0, -53));
    REQUIRE(st::detail::unit_double(0, 0x7ffu) == 0.0);  // the low 11 bits are dropped
    REQUIRE(st::detail::unit_double(0, 0x800u) == std::ldexp(1.0, -53));
  }
  SECTION("element 0 of seed 0 from the first known-answer vector") {
    // Words 0x6627e8d5, 0xe169c58d -> (0x6627e8d5e169c58d >> 11) * 2^-53.
    const double expect = double(0x6627e8d5e169c58dull >> 11) * std::ldexp(1.0, -53);
    REQUIRE(st::detail::philox_uniform<double>(0, 0) == expect);
    REQUIRE(expect == Approx(0.3990464708).epsilon(1e-9));
    REQUIRE(st::detail::philox_uniform<float>(0, 0) == static_cast<float>(expect));
  }
}

TEST_CASE("philox_uniform and philox_normal statistics", "[core]") {
  constexpr int n = 100000;
  SECTION("uniform double in [0,1), mean 1/2, variance 1/12, flat histogram") {
    double sum = 0, sum2 = 0, lag = 0, prev = 0;
    std::array<int, 10> bins{};
    for (int i = 0; i < n; ++i) {
      const double u = st::detail::philox_uniform<double>(42, uint64_t(i));
      REQUIRE((u >= 0.0 && u < 1.0));
      sum += u;
      sum2 += u * u;
      if (i) lag += (u - 0.5) * (prev - 0.5);
      prev = u;
      bins[static_cast<std::size_t>(u * 10)]++;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    REQUIRE(mean == Approx(0.5).margin(0.01));
    REQUIRE(var == Approx(1.0 / 12).margin(0.005));
    REQUIRE(lag / (n - 1) / (1.0 / 12) == Approx(0.0).margin(0.02));  // lag-1 correlation
    for (int b : bins) REQUIRE(b == Approx(n / 10).epsilon(0.05));
  }
  SECTION("uniform float in [0,1)") {
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const float u = st::detail::philox_uniform<float>(7, uint64_t(i));
      REQUIRE((u >= 0.0f && u < 1.0f));
      sum += u;
    }
    REQUIRE(sum / n == Approx(0.5).margin(0.01));
  }
  SECTION("normal: mean 0, variance 1, 68% within one sigma") {
    for (uint64_t seed : {uint64_t{1}, uint64_t{0xdeadbeefcafe}}) {
      double sum = 0, sum2 = 0;
      int within = 0;
      for (int i = 0; i < n; ++i) {
        const double z = st::detail::philox_normal<double>(seed, uint64_t(i));
        REQUIRE(std::isfinite(z));
        sum += z;
        sum2 += z * z;
        within += std::abs(z) < 1.0;
      }
      const double mean = sum / n, var = sum2 / n - mean * mean;
      REQUIRE(mean == Approx(0.0).margin(0.02));
      REQUIRE(var == Approx(1.0).margin(0.05));
      REQUIRE(double(within) / n == Approx(0.6827).margin(0.01));
    }
  }
  SECTION("normal float is the double one rounded") {
    for (uint64_t i = 0; i < 1000; ++i) {
      REQUIRE(st::detail::philox_normal<float>(3, i) ==
              static_cast<float>(st::detail::philox_normal<double>(3, i)));
    }
  }
}

TEST_CASE("philox streams: seeds and indices", "[core]") {
  auto draws = [](uint64_t seed, uint64_t first) {
    std::vector<double> v;
    for (uint64_t i = 0; i < 1000; ++i)
      v.push_back(st::detail::philox_uniform<double>(seed, first + i));
    return v;
  };
  auto count_equal = [](const std::vector<double>& a, const std::vector<double>& b) {
    int same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    return same;
  };
  SECTION("same seed, same values") { REQUIRE(draws(123, 0) == draws(123, 0)); }
  SECTION("different seeds differ, in the low and the high 32 bits") {
    REQUIRE(count_equal(draws(1, 0), draws(2, 0)) == 0);
    REQUIRE(count_equal(draws(1, 0), draws(1 + (uint64_t{1} << 32), 0)) == 0);
  }
  SECTION("the high 32 bits of the index matter") {
    REQUIRE(count_equal(draws(9, 0), draws(9, uint64_t{1} << 32)) == 0);
  }
  SECTION("normal streams depend on the seed") {
    int same = 0;
    for (uint64_t i = 0; i < 1000; ++i) {
      same += st::detail::philox_normal<double>(5, i) == st::detail::philox_normal<double>(6, i);
    }
    REQUIRE(same == 0);
  }
}
