// SPDX-License-Identifier: MIT
// The tensors the file-format tests (safetensors, .npy, JSON) write and read
// back: every dtype, views that are not contiguous, 0-d and empty tensors.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace nn_test {

/// a and b have the same dtype, shape and values, bit for bit.
inline void require_same(const st::Tensor& a, const st::Tensor& b) {
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

/// One tensor of each kind, from fixed seeds.
inline std::map<std::string, st::Tensor> every_kind() {
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

}  // namespace nn_test
