// SPDX-License-Identifier: MIT
// operator<< on RawTensor and the print options (raw/print.hpp): exact strings
// worked out by hand from the values, and, for abridged tensors, NumPy's text.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "raw/print.hpp"
#include "support/naive.hpp"

namespace st = strata;

namespace {

/// The text of t, less the ", device=cuda:N" a tensor off the CPU adds before its
/// closing parenthesis (checked here), so that one expected string serves every device.
std::string str(const st::RawTensor& t) {
  std::ostringstream os;
  os << t;
  std::string s = os.str();
  const std::string suffix = st::testing::device_suffix();
  if (!suffix.empty() && t.defined() && t.device() == st::testing::test_device()) {
    const std::size_t at = s.rfind(suffix + ")");
    CHECK(at != std::string::npos);
    if (at != std::string::npos) s.erase(at, suffix.size());
  }
  return s;
}

/// 0, 1, ..., n - 1 as doubles.
std::vector<double> iota_values(int64_t n) {
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
    const std::string full = str(st::testing::make({1000}, st::i64, iota_values(1000)));
    CHECK(full.find("...") == std::string::npos);
    CHECK(full.find(" 999]") != std::string::npos);
    CHECK(str(st::testing::make({2000}, st::i64, iota_values(2000))) ==
          "tensor([   0,    1,    2, ..., 1997, 1998, 1999], shape=[2000], dtype=i64)");
    CHECK(str(st::testing::make({1001}, st::i64, iota_values(1001))) ==
          "tensor([   0,    1,    2, ...,  998,  999, 1000], shape=[1001], dtype=i64)");
  }
  SECTION("2-D") {
    const st::RawTensor t = st::testing::make({100, 100}, st::i64, iota_values(10000));
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
    const st::RawTensor t =
        st::testing::make({100, 100}, st::i64, iota_values(10000)).transpose(0, 1);
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

namespace {

/// Sets print options for one scope and restores the previous ones after it.
struct PrintOptionsScope {
  st::PrintOptions saved = st::print_options();
  explicit PrintOptionsScope(const st::PrintOptions& o) { st::set_print_options(o); }
  ~PrintOptionsScope() { st::set_print_options(saved); }
  PrintOptionsScope(const PrintOptionsScope&) = delete;
  PrintOptionsScope& operator=(const PrintOptionsScope&) = delete;
};

/// ((i * 7919) % 2001 - 1000) / 7 for i < n: varied signs and widths, no
/// decimal ties. print_numpy.py builds the same values in NumPy.
std::vector<double> sevenths(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double((i * 7919) % 2001 - 1000) / 7.0);
  return v;
}

}  // namespace

// The expected strings below are NumPy's, produced once by
// tests/raw/print_numpy.py (/usr/bin/python3 with Debian 12's python3-numpy
// 1.24.2): numpy.array2string(a, separator=", ", prefix="tensor(", ...) of the
// same values, with floatmode="fixed" and the precision under test for
// non-whole floats, and max_line_width unbounded (strata does not wrap long
// lines); strata adds "tensor(" before and the shape and dtype after.
TEST_CASE("print: abridged text is NumPy's", "[raw]") {
  SECTION("i64 [100, 100], defaults") {
    CHECK(str(st::testing::make({100, 100}, st::i64, iota_values(10000))) ==
          "tensor([[   0,    1,    2, ...,   97,   98,   99],\n"
          "        [ 100,  101,  102, ...,  197,  198,  199],\n"
          "        [ 200,  201,  202, ...,  297,  298,  299],\n"
          "        ...,\n"
          "        [9700, 9701, 9702, ..., 9797, 9798, 9799],\n"
          "        [9800, 9801, 9802, ..., 9897, 9898, 9899],\n"
          "        [9900, 9901, 9902, ..., 9997, 9998, 9999]], shape=[100, 100], dtype=i64)");
  }
  SECTION("f64 [40, 30], precision 4 (the default)") {
    CHECK(str(st::testing::make({40, 30}, st::f64, sevenths(1200))) ==
          "tensor([[-142.8571,  130.8571,  118.7143, ...,  101.0000,   88.8571,   76.7143],\n"
          "        [  64.5714,   52.4286,   40.2857, ...,   22.5714,   10.4286,   -1.7143],\n"
          "        [ -13.8571,  -26.0000,  -38.1429, ...,  -55.8571,  -68.0000,  -80.1429],\n"
          "        ...,\n"
          "        [  99.7143,   87.5714,   75.4286, ...,   57.7143,   45.5714,   33.4286],\n"
          "        [  21.2857,    9.1429,   -3.0000, ...,  -20.7143,  -32.8571,  -45.0000],\n"
          "        [ -57.1429,  -69.2857,  -81.4286, ...,  -99.1429, -111.2857, -123.4286]], "
          "shape=[40, 30], dtype=f64)");
  }
  SECTION("f64 [40, 30], precision 2") {
    const PrintOptionsScope scope({.precision = 2});
    CHECK(str(st::testing::make({40, 30}, st::f64, sevenths(1200))) ==
          "tensor([[-142.86,  130.86,  118.71, ...,  101.00,   88.86,   76.71],\n"
          "        [  64.57,   52.43,   40.29, ...,   22.57,   10.43,   -1.71],\n"
          "        [ -13.86,  -26.00,  -38.14, ...,  -55.86,  -68.00,  -80.14],\n"
          "        ...,\n"
          "        [  99.71,   87.57,   75.43, ...,   57.71,   45.57,   33.43],\n"
          "        [  21.29,    9.14,   -3.00, ...,  -20.71,  -32.86,  -45.00],\n"
          "        [ -57.14,  -69.29,  -81.43, ...,  -99.14, -111.29, -123.43]], shape=[40, 30], "
          "dtype=f64)");
  }
  SECTION("f32 [20, 20, 20]: every axis abridged") {
    CHECK(str(st::testing::make({20, 20, 20}, st::f32, sevenths(8000))) ==
          "tensor([[[-142.8571,  130.8571,  118.7143, ...,  -63.4286,  -75.5714,  -87.7143],\n"
          "         [ -99.8571, -112.0000, -124.1429, ...,  -20.4286,  -32.5714,  -44.7143],\n"
          "         [ -56.8571,  -69.0000,  -81.1429, ...,   22.5714,   10.4286,   -1.7143],\n"
          "         ...,\n"
          "         [  16.4286,    4.2857,   -7.8571, ...,   95.8571,   83.7143,   71.5714],\n"
          "         [  59.4286,   47.2857,   35.1429, ...,  138.8571,  126.7143,  114.5714],\n"
          "         [ 102.4286,   90.2857,   78.1429, ..., -104.0000, -116.1429, -128.2857]],\n"
          "\n"
          "        [[-140.4286,  133.2857,  121.1429, ...,  -61.0000,  -73.1429,  -85.2857],\n"
          "         [ -97.4286, -109.5714, -121.7143, ...,  -18.0000,  -30.1429,  -42.2857],\n"
          "         [ -54.4286,  -66.5714,  -78.7143, ...,   25.0000,   12.8571,    0.7143],\n"
          "         ...,\n"
          "         [  18.8571,    6.7143,   -5.4286, ...,   98.2857,   86.1429,   74.0000],\n"
          "         [  61.8571,   49.7143,   37.5714, ...,  141.2857,  129.1429,  117.0000],\n"
          "         [ 104.8571,   92.7143,   80.5714, ..., -101.5714, -113.7143, -125.8571]],\n"
          "\n"
          "        [[-138.0000,  135.7143,  123.5714, ...,  -58.5714,  -70.7143,  -82.8571],\n"
          "         [ -95.0000, -107.1429, -119.2857, ...,  -15.5714,  -27.7143,  -39.8571],\n"
          "         [ -52.0000,  -64.1429,  -76.2857, ...,   27.4286,   15.2857,    3.1429],\n"
          "         ...,\n"
          "         [  21.2857,    9.1429,   -3.0000, ...,  100.7143,   88.5714,   76.4286],\n"
          "         [  64.2857,   52.1429,   40.0000, ..., -142.1429,  131.5714,  119.4286],\n"
          "         [ 107.2857,   95.1429,   83.0000, ...,  -99.1429, -111.2857, -123.4286]],\n"
          "\n"
          "        ...,\n"
          "\n"
          "        [[-101.5714, -113.7143, -125.8571, ...,  -22.1429,  -34.2857,  -46.4286],\n"
          "         [ -58.5714,  -70.7143,  -82.8571, ...,   20.8571,    8.7143,   -3.4286],\n"
          "         [ -15.5714,  -27.7143,  -39.8571, ...,   63.8571,   51.7143,   39.5714],\n"
          "         ...,\n"
          "         [  57.7143,   45.5714,   33.4286, ...,  137.1429,  125.0000,  112.8571],\n"
          "         [ 100.7143,   88.5714,   76.4286, ..., -105.7143, -117.8571, -130.0000],\n"
          "         [-142.1429,  131.5714,  119.4286, ...,  -62.7143,  -74.8571,  -87.0000]],\n"
          "\n"
          "        [[ -99.1429, -111.2857, -123.4286, ...,  -19.7143,  -31.8571,  -44.0000],\n"
          "         [ -56.1429,  -68.2857,  -80.4286, ...,   23.2857,   11.1429,   -1.0000],\n"
          "         [ -13.1429,  -25.2857,  -37.4286, ...,   66.2857,   54.1429,   42.0000],\n"
          "         ...,\n"
          "         [  60.1429,   48.0000,   35.8571, ...,  139.5714,  127.4286,  115.2857],\n"
          "         [ 103.1429,   91.0000,   78.8571, ..., -103.2857, -115.4286, -127.5714],\n"
          "         [-139.7143,  134.0000,  121.8571, ...,  -60.2857,  -72.4286,  -84.5714]],\n"
          "\n"
          "        [[ -96.7143, -108.8571, -121.0000, ...,  -17.2857,  -29.4286,  -41.5714],\n"
          "         [ -53.7143,  -65.8571,  -78.0000, ...,   25.7143,   13.5714,    1.4286],\n"
          "         [ -10.7143,  -22.8571,  -35.0000, ...,   68.7143,   56.5714,   44.4286],\n"
          "         ...,\n"
          "         [  62.5714,   50.4286,   38.2857, ...,  142.0000,  129.8571,  117.7143],\n"
          "         [ 105.5714,   93.4286,   81.2857, ..., -100.8571, -113.0000, -125.1429],\n"
          "         [-137.2857,  136.4286,  124.2857, ...,  -57.8571,  -70.0000,  -82.1429]]], "
          "shape=[20, 20, 20], dtype=f32)");
  }
  SECTION("scientific notation, precision 4 and 1") {
    std::vector<double> v = sevenths(2000);
    for (double& x : v) x *= 1e-6;
    const st::RawTensor t = st::testing::make({2000}, st::f64, v);
    CHECK(str(t) ==
          "tensor([-1.4286e-04,  1.3086e-04,  1.1871e-04, ..., -9.4286e-05, -1.0643e-04, "
          "-1.1857e-04], shape=[2000], dtype=f64)");
    const PrintOptionsScope scope({.precision = 1});
    CHECK(str(t) ==
          "tensor([-1.4e-04,  1.3e-04,  1.2e-04, ..., -9.4e-05, -1.1e-04, -1.2e-04], shape=[2000], "
          "dtype=f64)");
  }
  SECTION("threshold 10, edgeitems 2") {
    std::vector<double> v = iota_values(30);
    for (double& x : v) x -= 15;
    const PrintOptionsScope scope({.threshold = 10, .edgeitems = 2});
    CHECK(str(st::testing::make({5, 6}, st::i32, v)) ==
          "tensor([[-15, -14, ..., -11, -10],\n"
          "        [ -9,  -8, ...,  -5,  -4],\n"
          "        ...,\n"
          "        [  3,   4, ...,   7,   8],\n"
          "        [  9,  10, ...,  13,  14]], shape=[5, 6], dtype=i32)");
  }
  SECTION("exactly threshold elements are printed whole, precision 6") {
    const PrintOptionsScope scope({.precision = 6, .threshold = 10});
    CHECK(str(st::testing::make({10}, st::f64, sevenths(10))) ==
          "tensor([-142.857143,  130.857143,  118.714286,  106.571429,   94.428571,   82.285714,   "
          "70.142857,   58.000000,   45.857143,   33.714286], shape=[10], dtype=f64)");
  }
  SECTION("precision 0 keeps the point, fixed and scientific") {
    const PrintOptionsScope scope({.precision = 0});
    CHECK(str(st::testing::make({3}, st::f64, {0.25, 2.75, -1.5})) ==
          "tensor([ 0.,  3., -2.], shape=[3], dtype=f64)");
    CHECK(str(st::testing::make({2}, st::f64, {2.5e-6, 2.75})) ==
          "tensor([3.e-06, 3.e+00], shape=[2], dtype=f64)");
  }
  SECTION("the float style comes from the shown elements only") {
    // The hidden element 1000 is 0.5; the shown ones are whole, so they print "3.".
    std::vector<double> v(2000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i % 10);
    v[1000] = 0.5;
    CHECK(str(st::testing::make({2000}, st::f64, v)) ==
          "tensor([0., 1., 2., ..., 7., 8., 9.], shape=[2000], dtype=f64)");
  }
}

TEST_CASE("print: options", "[raw]") {
  SECTION("defaults, and set/get round trip") {
    const st::PrintOptions d = st::print_options();
    CHECK(d.precision == 4);
    CHECK(d.threshold == 1000);
    CHECK(d.edgeitems == 3);
    {
      const PrintOptionsScope scope({.precision = 7, .threshold = 5, .edgeitems = 1});
      CHECK(st::print_options().precision == 7);
      CHECK(st::print_options().threshold == 5);
      CHECK(st::print_options().edgeitems == 1);
      CHECK(str(st::testing::make({2, 3}, st::i64, iota_values(6))) ==
            "tensor([[0, ..., 2],\n"
            "        [3, ..., 5]], shape=[2, 3], dtype=i64)");
      // Whole floats keep "3." at any precision.
      CHECK(str(st::testing::make({2}, st::f64, {1, 2})) ==
            "tensor([1., 2.], shape=[2], dtype=f64)");
    }
    {
      const PrintOptionsScope scope({.precision = 0});
      CHECK(str(st::testing::make({2}, st::f64, {1, 2})) ==
            "tensor([1., 2.], shape=[2], dtype=f64)");
    }
    CHECK(st::print_options().precision == 4);
    CHECK(st::print_options().threshold == 1000);
  }
  SECTION("bad options") {
    CHECK_THROWS_AS(st::set_print_options({.precision = -1}), st::ValueError);
    CHECK_THROWS_WITH(
        st::set_print_options({.precision = 31}),
        Catch::Matchers::Contains("set_print_options") && Catch::Matchers::Contains("31"));
    CHECK_THROWS_WITH(st::set_print_options({.threshold = -2}),
                      Catch::Matchers::Contains("threshold") && Catch::Matchers::Contains("-2"));
    CHECK_THROWS_WITH(st::set_print_options({.edgeitems = 0}),
                      Catch::Matchers::Contains("edgeitems") && Catch::Matchers::Contains("0"));
    // A rejected call leaves the options as they were.
    CHECK(st::print_options().precision == 4);
    CHECK(st::print_options().edgeitems == 3);
  }
}
