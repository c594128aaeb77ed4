// SPDX-License-Identifier: MIT
// Tests for diff/arithmetic.hpp on plain st::Tensor: broadcasting add, sub, mul,
// div, maximum, minimum and pow, C++ scalars on either side, dtype promotion, against
// naive f64 loops (tests/support/diff_ref.hpp).
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

TEST_CASE("broadcasting arithmetic", "[diff]") {
  const Ref a{{3, 1}, {1.5, -2.0, 3.25}}, b{{4}, {0.5, -1.25, 2.0, 4.0}};
  const st::Tensor ta = tensor(a.v, {3, 1}), tb = tensor(b.v, {4});
  SECTION("[3, 1] with [4]") {
    require_ref(ta + tb, broadcast(a, b, std::plus<>()));
    require_ref(ta - tb, broadcast(a, b, std::minus<>()));
    require_ref(ta * tb, broadcast(a, b, std::multiplies<>()));
    require_ref(ta / tb, broadcast(a, b, std::divides<>()));
    require_ref(tb - ta, broadcast(b, a, std::minus<>()));
    require_ref(st::add(ta, tb), broadcast(a, b, std::plus<>()));
    require_ref(st::sub(ta, tb), broadcast(a, b, std::minus<>()));
    require_ref(st::mul(ta, tb), broadcast(a, b, std::multiplies<>()));
    require_ref(st::div(ta, tb), broadcast(a, b, std::divides<>()));
    require_ref(st::maximum(ta, tb),
                broadcast(a, b, [](double x, double y) { return std::max(x, y); }));
    require_ref(st::minimum(ta, tb),
                broadcast(a, b, [](double x, double y) { return std::min(x, y); }));
  }
  SECTION("rank 3 with rank 2, size-1 dims on both sides") {
    const Ref c{{2, 1, 4}, random_values(8, 1)}, d{{3, 1}, random_values(3, 2)};
    const st::Tensor tc = tensor(c.v, {2, 1, 4}), td = tensor(d.v, {3, 1});
    require_ref(tc * td, broadcast(c, d, std::multiplies<>()));
    require_ref(td - tc, broadcast(d, c, std::minus<>()));
  }
  SECTION("scalars on either side") {
    require_ref(ta + 2.0, map(a, [](double x) { return x + 2; }));
    require_ref(2.0 + ta, map(a, [](double x) { return 2 + x; }));
    require_ref(ta - 2.0, map(a, [](double x) { return x - 2; }));
    require_ref(2.0 - ta, map(a, [](double x) { return 2 - x; }));
    require_ref(ta * 3, map(a, [](double x) { return x * 3; }));
    require_ref(3 * ta, map(a, [](double x) { return 3 * x; }));
    require_ref(ta / 4.0, map(a, [](double x) { return x / 4; }));
    require_ref(4.0 / ta, map(a, [](double x) { return 4 / x; }));
    require_ref(-ta, map(a, [](double x) { return -x; }));
    require_ref(st::maximum(ta, 0.0), map(a, [](double x) { return std::max(x, 0.0); }));
    require_ref(st::minimum(1.0, ta), map(a, [](double x) { return std::min(1.0, x); }));
  }
  SECTION("dtype promotion") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{3, -4, 7}, {3});
    const st::Tensor f = st::from_vector(std::vector<float>{0.5f, 1.25f, -2.0f}, {3});
    require_values(i + f, {3}, {3.5, -2.75, 5.0}, 1e-7, st::f32);
    require_values(f * i, {3}, {1.5, -5.0, -14.0}, 1e-7, st::f32);
    const st::Tensor i32 = st::from_vector(std::vector<int32_t>{1, 2, 3}, {3});
    require_values(i32 + i, {3}, {4, -2, 10}, 0, st::i64);
    require_values(f + tensor({1, 2, 3}, {3}), {3}, {1.5, 3.25, 1.0}, 0, st::f64);
    const st::Tensor bools = st::from_vector(std::vector<bool>{true, false, true}, {3});
    require_values(bools + i32, {3}, {2, 2, 4}, 0, st::i32);
  }
  SECTION("integer / integer is true division in f32") {
    const st::Tensor n = st::from_vector(std::vector<int64_t>{7, -7, 1, 6}, {4});
    const st::Tensor d = st::from_vector(std::vector<int64_t>{2, 2, 3, -4}, {4});
    require_values(n / d, {4}, {3.5, -3.5, 1.0 / 3.0, -1.5}, 1e-7, st::f32);
    require_values(n / 2, {4}, {3.5, -3.5, 0.5, 3.0}, 1e-7, st::f32);
    require_values(st::div(1, d), {4}, {0.5, 0.5, 1.0 / 3.0, -0.25}, 1e-7, st::f32);
  }
  SECTION("C++ scalars are weak") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{3, -4}, {2});
    require_values(i * 1.5, {2}, {4.5, -6.0}, 0, st::f32);  // float scalar, int tensor: f32
    require_values(2.5 + i, {2}, {5.5, -1.5}, 0, st::f32);
    require_values(i + 2, {2}, {5, -2}, 0, st::i64);  // int scalar keeps the int dtype
    const st::Tensor f = st::from_vector(std::vector<float>{0.5f, 1.5f}, {2});
    require_values(f * 2.0, {2}, {1.0, 3.0}, 0, st::f32);  // double scalar keeps f32
    require_values(f + 1, {2}, {1.5, 2.5}, 0, st::f32);
    const st::Tensor i32 = st::from_vector(std::vector<int32_t>{5, 6}, {2});
    require_values(i32 - int64_t(1), {2}, {4, 5}, 0, st::i32);
  }
  SECTION("pow") {
    const Ref p{{2, 3}, random_values(6, 3, 0.1, 3.0)};
    const st::Tensor tp = tensor(p.v, {2, 3});
    require_ref(st::pow(tp, 2.5), map(p, [](double x) { return std::pow(x, 2.5); }));
    require_ref(tp.pow(-1.5), map(p, [](double x) { return std::pow(x, -1.5); }));
    const Ref e{{3}, {0.5, 2.0, -1.0}};
    require_ref(st::pow(tp, tensor(e.v, {3})),
                broadcast(p, e, [](double x, double y) { return std::pow(x, y); }));
    require_values(st::pow(2.0, tensor(e.v, {3})), {3}, {std::sqrt(2.0), 4.0, 0.5});
  }
}
