// SPDX-License-Identifier: MIT
// Tests for diff/movement.hpp on plain st::Tensor: transpose, permute, reshape,
// flatten, squeeze, unsqueeze, flip, pad, concat, stack and split, against values
// placed by index arithmetic (tests/support/diff_ref.hpp).
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

TEST_CASE("movement ops", "[diff]") {
  const Vec v = random_values(6, 31);
  const st::Tensor a = tensor(v, {2, 3});
  SECTION("transpose, permute, reshape, flatten") {
    const Vec vt = {v[0], v[3], v[1], v[4], v[2], v[5]};
    require_values(st::transpose(a, 0, 1), {3, 2}, vt, 0);
    require_values(a.transpose(-1, -2), {3, 2}, vt, 0);
    require_values(st::permute(a, {1, 0}), {3, 2}, vt, 0);
    require_values(a.permute({1, 0}), {3, 2}, vt, 0);
    require_values(st::reshape(a, {3, 2}), {3, 2}, v, 0);
    require_values(a.reshape({6}), {6}, v, 0);
    require_values(st::flatten(st::transpose(a, 0, 1)), {6}, vt, 0);
    require_values(a.transpose(0, 1).flatten(), {6}, vt, 0);
    // A rank-3 transpose against index arithmetic.
    const Vec w = random_values(24, 32);
    Vec expected(24);
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        for (int64_t k = 0; k < 4; ++k)
          expected[std::size_t((k * 3 + j) * 2 + i)] = w[std::size_t((i * 3 + j) * 4 + k)];
      }
    }
    require_values(st::transpose(tensor(w, {2, 3, 4}), 0, 2), {4, 3, 2}, expected, 0);
  }
  SECTION("squeeze and unsqueeze") {
    require_values(st::unsqueeze(a, 0), {1, 2, 3}, v, 0);
    require_values(a.unsqueeze(1), {2, 1, 3}, v, 0);
    require_values(st::unsqueeze(a, -1), {2, 3, 1}, v, 0);
    require_values(st::squeeze(st::unsqueeze(a, 1), 1), {2, 3}, v, 0);
    require_values(a.unsqueeze(2).squeeze(-1), {2, 3}, v, 0);
  }
  SECTION("flip") {
    require_values(st::flip(a, 1), {2, 3}, {v[2], v[1], v[0], v[5], v[4], v[3]}, 0);
    require_values(a.flip(0), {2, 3}, {v[3], v[4], v[5], v[0], v[1], v[2]}, 0);
    require_values(st::flip(a, -1), {2, 3}, {v[2], v[1], v[0], v[5], v[4], v[3]}, 0);
  }
  SECTION("pad with zeros and with a value") {
    const st::Tensor p = st::pad(a, {{1, 0}, {0, 2}});
    Vec expected(3 * 5, 0.0);
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 3; ++j) expected[(i + 1) * 5 + j] = v[i * 3 + j];
    }
    require_values(p, {3, 5}, expected, 0);
    Vec filled(2 * 7, -1.5);
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 3; ++j) filled[i * 7 + j + 3] = v[i * 3 + j];
    }
    require_values(st::pad(a, {{0, 0}, {3, 1}}, -1.5), {2, 7}, filled, 0);
  }
  SECTION("concat with dtype promotion") {
    const st::Tensor b = tensor({7.0, 8.0, 9.0}, {1, 3});
    Vec rows = v;
    rows.insert(rows.end(), {7.0, 8.0, 9.0});
    require_values(st::concat({a, b}, 0), {3, 3}, rows, 0);
    require_values(st::concat({a, a}, 1), {2, 6},
                   {v[0], v[1], v[2], v[0], v[1], v[2], v[3], v[4], v[5], v[3], v[4], v[5]}, 0);
    require_values(st::concat({a, b}, -2), {3, 3}, rows, 0);
    const st::Tensor i = st::from_vector(std::vector<int64_t>{1, 2}, {2});
    const st::Tensor f = st::from_vector(std::vector<float>{0.5f}, {1});
    require_values(st::concat({i, f}, 0), {3}, {1.0, 2.0, 0.5}, 0, st::f32);
    const std::vector<st::Tensor> parts = {b, b, a};
    require_values(st::concat(parts, 0), {4, 3},
                   {7, 8, 9, 7, 8, 9, v[0], v[1], v[2], v[3], v[4], v[5]}, 0);
  }
  SECTION("stack") {
    const st::Tensor b = a * 2.0;
    Vec doubled;
    for (double e : v) doubled.push_back(2 * e);
    Vec s0 = v;
    s0.insert(s0.end(), doubled.begin(), doubled.end());
    require_values(st::stack({a, b}, 0), {2, 2, 3}, s0, 0);
    Vec s2;
    for (std::size_t k = 0; k < 6; ++k) s2.insert(s2.end(), {v[k], doubled[k]});
    require_values(st::stack({a, b}, 2), {2, 3, 2}, s2, 0);
    require_values(st::stack({a, b}, -1), {2, 3, 2}, s2, 0);
    Vec s1;
    for (std::size_t i = 0; i < 2; ++i) {
      s1.insert(s1.end(), v.begin() + std::ptrdiff_t(3 * i), v.begin() + std::ptrdiff_t(3 * i + 3));
      s1.insert(s1.end(), doubled.begin() + std::ptrdiff_t(3 * i),
                doubled.begin() + std::ptrdiff_t(3 * i + 3));
    }
    require_values(st::stack({a, b}, 1), {2, 2, 3}, s1, 0);
  }
  SECTION("split") {
    const std::vector<st::Tensor> parts = st::split(a, {1, 2}, 1);
    REQUIRE(parts.size() == 2);
    require_values(parts[0], {2, 1}, {v[0], v[3]}, 0);
    require_values(parts[1], {2, 2}, {v[1], v[2], v[4], v[5]}, 0);
    const std::vector<st::Tensor> rows = st::split(a, {1, 0, 1}, 0);
    REQUIRE(rows.size() == 3);
    require_values(rows[0], {1, 3}, {v[0], v[1], v[2]}, 0);
    require_values(rows[1], {0, 3}, {}, 0);
    require_values(rows[2], {1, 3}, {v[3], v[4], v[5]}, 0);
    require_values(st::split(a, {3}, -1)[0], {2, 3}, v, 0);
  }
}
