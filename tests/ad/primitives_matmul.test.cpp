// SPDX-License-Identifier: MIT
// Derivative tests of matmul, and of every primitive at arguments that are
// strided views: check_grads against f64 finite differences up to order 3.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <strata.hpp>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::check_grads_error;
using st::testing::f64s;
using st::testing::GradCheckOptions;
using st::testing::i64s;
using st::testing::Modes;
using st::testing::nonzero;
using st::testing::normal;
using st::testing::positive;
using st::testing::prims_of;
TEST_CASE("primitive derivatives: matmul", "[ad]") {
  SECTION("plain") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                   {normal({2, 3}, 71), normal({3, 2}, 72)});
  }
  SECTION("transposed operands") {
    check_grads<2>(
        [](const auto& a, const auto& b) { return st::matmul(st::transpose(a, 0, 1), b); },
        {normal({3, 2}, 73), normal({3, 4}, 74)});
    check_grads<3>(
        [](const auto& a, const auto& b) { return st::sin(st::matmul(a, st::transpose(b, 0, 1))); },
        {normal({2, 3}, 75), normal({2, 3}, 76)});
  }
  SECTION("batch-broadcast operands [2,1,3,4] x [5,4,2]") {
    const st::Tensor a = normal({2, 1, 3, 4}, 77), b = normal({5, 4, 2}, 78);
    check_grads<2>([](const auto& a, const auto& b) { return st::matmul(a, b); }, {a, b});
    auto [ga, gb] = st::grad(
        [](const auto& a, const auto& b) { return st::sum(st::sin(st::matmul(a, b))); }, a, b);
    CHECK(ga.shape() == a.shape());
    CHECK(gb.shape() == b.shape());
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                   {normal({2, 1, 1, 2}, 79), normal({3, 2, 1}, 80)});
    // Batch dims on one side only, either side.
    check_grads<2>([](const auto& a, const auto& b) { return st::matmul(a, b); },
                   {normal({3, 4}, 86), normal({5, 4, 2}, 87)});
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                   {normal({2, 2, 3}, 88), normal({3, 2}, 89)});
  }
}

TEST_CASE("primitive derivatives at arguments that are strided views", "[ad]") {
  // The AD runs at the views themselves (transposed, flipped, sliced,
  // broadcast); rules that build zeros or index tensors from them must cope.
  const st::Tensor t = st::transpose(normal({3, 2}, 91), 0, 1);  // [2,3], strides [1,2]
  const st::Tensor r = st::flip(normal({2, 3}, 92), 1);          // negative stride
  const st::Tensor s = st::slice(normal({2, 6}, 93), 1, 5, std::nullopt, -2);  // [2,3], step -2
  const st::Tensor b = st::expand(normal({3}, 94), {2, 3});                    // zero stride
  const char* names[] = {"transposed", "flipped", "sliced with step -2", "broadcast"};
  int k = 0;
  for (const st::Tensor& x : {t, r, s, b}) {
    INFO("argument " << names[k++]);
    check_grads<3>([](const auto& x) { return st::exp(x) * st::sum(x, {1}, true); }, {x});
    check_grads<2>([](const auto& x) { return st::sin(st::slice(x, 1, 2, std::nullopt, -1)); },
                   {x});
    check_grads<2>(
        [](const auto& a, const auto& b) { return st::matmul(a, st::transpose(b, 0, 1)); }, {x, r});
    const st::Tensor idx = i64s({2, 2, 0}, {3});
    check_grads<2>(
        [idx](const auto& x) { return st::sin(prims_of<decltype(x)>::index_select(x, 1, idx)); },
        {x});
    check_grads<2>(
        [idx](const auto& x, const auto& src) {
          return st::sin(prims_of<decltype(x)>::index_add(x, 1, idx, src));
        },
        {x, s});
    check_grads<2>(
        [](const auto& x) {
          return st::sin(st::max(x, {1})) * st::pad(x, {{0, 0}, {1, 0}}).sum();
        },
        {x});
  }
}
