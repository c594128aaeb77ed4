// SPDX-License-Identifier: MIT
// operator<< on RawTensor: exact strings worked out by hand from the values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/naive.hpp"

namespace st = strata;

namespace {

std::string str(const st::RawTensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

/// 0, 1, ..., n - 1 as doubles.
std::vector<double> iota(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double(i));
  return v;
}

}  // namespace

TEST_CASE("print: small tensors", "[raw]") {
  SECTION("f64 matrix") {
    const st::RawTensor t = st::testing::make({2, 3}, st::f64, {1, 2, 3, 4, 5, 6});
    CHECK(str(t) ==
          "tensor([[1., 2., 3.],\n"
          "        [4., 5., 6.]], shape=[2, 3], dtype=f64)");
  }
  SECTION("f32 vector") {
    // Not all whole, within 3 decades: 4 decimals, right-aligned to the widest.
    const st::RawTensor t = st::testing::make({3}, st::f32, {0.5, -2.5, 10.5});
    CHECK(str(t) == "tensor([ 0.5000, -2.5000, 10.5000], shape=[3], dtype=f32)");
    // An f32 0.1 is written from its nearest float, still 0.1000.
    CHECK(str(st::testing::make({1}, st::f32, {0.1})) == "tensor([0.1000], shape=[1], dtype=f32)");
    // Zeros do not count as a magnitude.
    CHECK(str(st::testing::make({2}, st::f64, {0, 0.25})) ==
          "tensor([0.0000, 0.2500], shape=[2], dtype=f64)");
  }
  SECTION("one float style per tensor") {
    // A single non-whole value switches every element to 4 decimals.
    CHECK(str(st::testing::make({2, 2}, st::f64, {1.5, 2, 3, 4})) ==
          "tensor([[1.5000, 2.0000],\n"
          "        [3.0000, 4.0000]], shape=[2, 2], dtype=f64)");
    // Scientific: a magnitude below 1e-4, at or above 1e8, or a spread over more than 3 decades.
    CHECK(str(st::testing::make({2}, st::f64, {1e-5, 1})) ==
          "tensor([1.0000e-05, 1.0000e+00], shape=[2], dtype=f64)");
    CHECK(str(st::testing::make({1}, st::f64, {125000000.5})) ==
          "tensor([1.2500e+08], shape=[1], dtype=f64)");
    CHECK(str(st::testing::make({2}, st::f32, {0.5, 1000})) ==
          "tensor([5.0000e-01, 1.0000e+03], shape=[2], dtype=f32)");
    CHECK(str(st::testing::make({2}, st::f64, {-2.25, 1e9})) ==
          "tensor([-2.2500e+00,  1.0000e+09], shape=[2], dtype=f64)");
    // Exactly 3 decades apart is still fixed.
    CHECK(str(st::testing::make({2}, st::f64, {0.5, 500})) ==
          "tensor([  0.5000, 500.0000], shape=[2], dtype=f64)");
    // Whole values stay whole however large.
    CHECK(str(st::testing::make({2}, st::f64, {1e10, 2})) ==
          "tensor([10000000000.,           2.], shape=[2], dtype=f64)");
  }
  SECTION("i64 vector") {
    const st::RawTensor t = st::testing::make({4}, st::i64, {3, -12, 0, 7});
    CHECK(str(t) == "tensor([  3, -12,   0,   7], shape=[4], dtype=i64)");
  }
  SECTION("i64 beyond 2^53") {
    // Every digit of an i64 is printed (a trip through double would end in ...904).
    const std::vector<int64_t> v{(int64_t{1} << 62) + 1, -1};
    const st::RawTensor t = st::raw::from_host(v.data(), {2}, st::i64);
    CHECK(str(t) ==
          "tensor([4611686018427387905, " + std::string(17, ' ') + "-1], shape=[2], dtype=i64)");
    const int64_t lo = std::numeric_limits<int64_t>::min();
    CHECK(str(st::raw::from_host(&lo, {}, st::i64)) ==
          "tensor(-9223372036854775808, shape=[], dtype=i64)");
  }
  SECTION("i32 matrix") {
    const st::RawTensor t = st::testing::make({2, 2}, st::i32, {100, -1, 5, 42});
    CHECK(str(t) ==
          "tensor([[100,  -1],\n"
          "        [  5,  42]], shape=[2, 2], dtype=i32)");
  }
  SECTION("bool") {
    const st::RawTensor t = st::testing::make({3}, st::bool_, {1, 0, 1});
    CHECK(str(t) == "tensor([ true, false,  true], shape=[3], dtype=bool)");
    const st::RawTensor all = st::testing::make({2, 1}, st::bool_, {1, 1});
    CHECK(str(all) ==
          "tensor([[true],\n"
          "        [true]], shape=[2, 1], dtype=bool)");
  }
  SECTION("rank 0") {
    CHECK(str(st::testing::make({}, st::f32, {2.5})) == "tensor(2.5000, shape=[], dtype=f32)");
    CHECK(str(st::testing::make({}, st::f64, {-3})) == "tensor(-3., shape=[], dtype=f64)");
    CHECK(str(st::testing::make({}, st::i64, {-3})) == "tensor(-3, shape=[], dtype=i64)");
    CHECK(str(st::testing::make({}, st::bool_, {0})) == "tensor(false, shape=[], dtype=bool)");
  }
  SECTION("empty") {
    CHECK(str(st::raw::empty({0, 3}, st::f32)) == "tensor([], shape=[0, 3], dtype=f32)");
    CHECK(str(st::raw::empty({0}, st::i64)) == "tensor([], shape=[0], dtype=i64)");
    CHECK(str(st::raw::empty({2, 0, 4}, st::bool_)) == "tensor([], shape=[2, 0, 4], dtype=bool)");
  }
  SECTION("3-D") {
    const st::RawTensor t = st::testing::make({2, 2, 2}, st::i32, {1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(str(t) ==
          "tensor([[[1, 2],\n"
          "         [3, 4]],\n"
          "\n"
          "        [[5, 6],\n"
          "         [7, 8]]], shape=[2, 2, 2], dtype=i32)");
    const st::RawTensor u = st::testing::make({3, 1, 2}, st::f64, {1, -1, 2, -2, 3, -3});
    CHECK(str(u) ==
          "tensor([[[ 1., -1.]],\n"
          "\n"
          "        [[ 2., -2.]],\n"
          "\n"
          "        [[ 3., -3.]]], shape=[3, 1, 2], dtype=f64)");
  }
  SECTION("4-D") {
    const st::RawTensor t = st::testing::make({2, 1, 2, 1}, st::i64, {1, 2, 3, 4});
    CHECK(str(t) ==
          "tensor([[[[1],\n"
          "          [2]]],\n"
          "\n"
          "\n"
          "        [[[3],\n"
          "          [4]]]], shape=[2, 1, 2, 1], dtype=i64)");
  }
  SECTION("nan and inf") {
    const double inf = std::numeric_limits<double>::infinity();
    const st::RawTensor t =
        st::testing::make({4}, st::f64, {std::numeric_limits<double>::quiet_NaN(), -inf, 1, inf});
    CHECK(str(t) == "tensor([ nan, -inf,   1.,  inf], shape=[4], dtype=f64)");
    // nan and inf do not decide the style: here the finite 1.5 does.
    const st::RawTensor u =
        st::testing::make({2}, st::f32, {std::numeric_limits<double>::quiet_NaN(), 1.5});
    CHECK(str(u) == "tensor([   nan, 1.5000], shape=[2], dtype=f32)");
  }
  SECTION("undefined") { CHECK(str(st::RawTensor()) == "tensor(undefined)"); }
}

TEST_CASE("print: views print their logical order", "[raw]") {
  const st::RawTensor base = st::testing::make({2, 3}, st::f64, {1, 2, 3, 4, 5, 6});
  SECTION("transpose") {
    CHECK(str(base.transpose(0, 1)) ==
          "tensor([[1., 4.],\n"
          "        [2., 5.],\n"
          "        [3., 6.]], shape=[3, 2], dtype=f64)");
    const st::RawTensor bi = st::testing::make({2, 3}, st::i64, {1, 2, 3, 4, 5, 6});
    CHECK(str(bi.transpose(0, 1)) ==
          "tensor([[1, 4],\n"
          "        [2, 5],\n"
          "        [3, 6]], shape=[3, 2], dtype=i64)");
  }
  SECTION("flip") {
    CHECK(str(base.flip(1)) ==
          "tensor([[3., 2., 1.],\n"
          "        [6., 5., 4.]], shape=[2, 3], dtype=f64)");
  }
  SECTION("slice") {
    CHECK(str(base.slice(1, 0, 3, 2)) ==
          "tensor([[1., 3.],\n"
          "        [4., 6.]], shape=[2, 2], dtype=f64)");
    CHECK(str(base.select(0, 1)) == "tensor([4., 5., 6.], shape=[3], dtype=f64)");
  }
  SECTION("expand") {
    const st::RawTensor row = st::testing::make({1, 2}, st::i32, {7, -8});
    CHECK(str(row.expand({3, 2})) ==
          "tensor([[ 7, -8],\n"
          "        [ 7, -8],\n"
          "        [ 7, -8]], shape=[3, 2], dtype=i32)");
  }
}

TEST_CASE("print: large tensors are summarised", "[raw]") {
  SECTION("1-D") {
    // 1000 elements are printed in full; 1001 are summarised.
    const std::string full = str(st::testing::make({1000}, st::i64, iota(1000)));
    CHECK(full.find("...") == std::string::npos);
    CHECK(full.find(" 999]") != std::string::npos);
    CHECK(str(st::testing::make({2000}, st::i64, iota(2000))) ==
          "tensor([   0,    1,    2, ..., 1997, 1998, 1999], shape=[2000], dtype=i64)");
    CHECK(str(st::testing::make({1001}, st::i64, iota(1001))) ==
          "tensor([   0,    1,    2, ...,  998,  999, 1000], shape=[1001], dtype=i64)");
  }
  SECTION("2-D") {
    const st::RawTensor t = st::testing::make({100, 100}, st::i64, iota(10000));
    const std::string s = str(t);
    CHECK(s ==
          "tensor([[   0,    1,    2, ...,   97,   98,   99],\n"
          "        [ 100,  101,  102, ...,  197,  198,  199],\n"
          "        [ 200,  201,  202, ...,  297,  298,  299],\n"
          "        ...,\n"
          "        [9700, 9701, 9702, ..., 9797, 9798, 9799],\n"
          "        [9800, 9801, 9802, ..., 9897, 9898, 9899],\n"
          "        [9900, 9901, 9902, ..., 9997, 9998, 9999]], shape=[100, 100], dtype=i64)");
    CHECK(s.size() < 450);
    // Short axes stay whole: [2, 600] shows both rows.
    const std::string w = str(st::raw::full({2, 600}, 1.5, st::f32));
    CHECK(w ==
          "tensor([[1.5000, 1.5000, 1.5000, ..., 1.5000, 1.5000, 1.5000],\n"
          "        [1.5000, 1.5000, 1.5000, ..., 1.5000, 1.5000, 1.5000]], shape=[2, 600], "
          "dtype=f32)");
  }
  SECTION("transposed and large") {
    const st::RawTensor t = st::testing::make({100, 100}, st::i64, iota(10000)).transpose(0, 1);
    CHECK(str(t) ==
          "tensor([[   0,  100,  200, ..., 9700, 9800, 9900],\n"
          "        [   1,  101,  201, ..., 9701, 9801, 9901],\n"
          "        [   2,  102,  202, ..., 9702, 9802, 9902],\n"
          "        ...,\n"
          "        [  97,  197,  297, ..., 9797, 9897, 9997],\n"
          "        [  98,  198,  298, ..., 9798, 9898, 9998],\n"
          "        [  99,  199,  299, ..., 9799, 9899, 9999]], shape=[100, 100], dtype=i64)");
  }
  SECTION("3-D") {
    // [20, 20, 20]: every axis is summarised; blocks stay separated by a blank line.
    const std::string s = str(st::raw::full({20, 20, 20}, 0.0, st::i32));
    const std::string row = "[0, 0, 0, ..., 0, 0, 0]";
    const std::string block = "[" + row + ",\n         " + row + ",\n         " + row +
                              ",\n         ...,\n         " + row + ",\n         " + row +
                              ",\n         " + row + "]";
    const std::string sep = ",\n\n        ";
    CHECK(s == "tensor([" + block + sep + block + sep + block + sep + "..." + sep + block + sep +
                   block + sep + block + "], shape=[20, 20, 20], dtype=i32)");
    CHECK(s.size() < 2000);
  }
}
