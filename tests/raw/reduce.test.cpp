// SPDX-License-Identifier: MIT
// raw::reduce (sum, max, min, argmax, argmin) against naive loops over
// multi-indices (tests/support/reduce_ref.hpp) and against Eigen.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/naive.hpp"
#include "support/reduce_ref.hpp"

namespace st = strata;
using st::testing::check_reduce;

namespace {

constexpr st::ReduceOp kOps[] = {st::ReduceOp::sum, st::ReduceOp::max, st::ReduceOp::min,
                                 st::ReduceOp::argmax, st::ReduceOp::argmin};
constexpr st::DType kDTypes[] = {st::f32, st::f64, st::i32, st::i64, st::bool_};

/// The axes of `mask`, each given as a positive or a negative axis at random, in random order.
std::vector<int64_t> axes_of(unsigned mask, int64_t nd, std::mt19937_64& rng) {
  std::vector<int64_t> axes;
  std::bernoulli_distribution negative(0.5);
  for (int64_t d = 0; d < nd; ++d) {
    if (mask & (1u << d)) axes.push_back(negative(rng) ? d - nd : d);
  }
  std::shuffle(axes.begin(), axes.end(), rng);
  return axes;
}

/// Product of the sizes of the axes in mask.
int64_t reduced_count(const st::Shape& shape, unsigned mask) {
  int64_t n = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (mask & (1u << d)) n *= shape[d];
  }
  return n;
}

/// A tensor of f64 values laid out row-major (contiguous).
st::RawTensor f64s(const st::Shape& shape, const std::vector<double>& v) {
  return st::testing::make(shape, st::f64, v);
}

}  // namespace

TEST_CASE("reduce: every subset of axes, every layout, every dtype", "[raw]") {
  std::mt19937_64 rng(20240601);
  const st::Shape shapes[] = {{3, 4, 5}, {2, 3, 1, 4}, {1, 5, 1}};
  for (const st::Shape& shape : shapes) {
    const int64_t nd = shape.ndim();
    for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
      for (st::DType dtype : kDTypes) {
        const st::RawTensor x = st::testing::random_tensor(shape, dtype, kind, rng);
        for (st::ReduceOp op : kOps) {
          for (unsigned mask = 0; mask < (1u << nd); ++mask) {
            for (bool keepdims : {false, true}) {
              const auto axes = axes_of(mask, nd, rng);
              INFO("layout " << st::testing::layout_name(kind));
              CHECK(check_reduce(op, x, axes, keepdims) == "");
            }
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: rows on either side of the short-row table, every layout", "[raw]") {
  // Rows of up to 64 reduced positions read them from a table of offsets, longer ones walk a
  // strided plan (raw/cpu/reduce.cpp): both against the reference, over a window-like view
  // (pooling's reduced axes are two strided ones) and every layout.
  std::mt19937_64 rng(20261206);
  for (const st::Shape& shape : {st::Shape{5, 8, 8}, st::Shape{5, 5, 13}, st::Shape{3, 64, 2}}) {
    for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
      for (st::DType dtype : {st::f32, st::i64}) {
        const st::RawTensor x = st::testing::random_tensor(shape, dtype, kind, rng);
        for (st::ReduceOp op : kOps) {
          INFO("shape " << shape << ", layout " << st::testing::layout_name(kind));
          CHECK(check_reduce(op, x, {1, 2}, false) == "");  // 64, 65 and 128 positions
          CHECK(check_reduce(op, x, {0, 2}, false) == "");  // 40, 65 and 6
        }
      }
    }
  }
}

TEST_CASE("reduce: keepdims and empty axes shapes", "[raw]") {
  std::mt19937_64 rng(7);
  const st::RawTensor x =
      st::testing::random_tensor({2, 3, 4}, st::f32, st::testing::LayoutKind::permuted, rng);
  SECTION("sum") {
    CHECK(st::raw::reduce(st::ReduceOp::sum, x, {1}, false).shape() == st::Shape{2, 4});
    CHECK(st::raw::reduce(st::ReduceOp::sum, x, {1}, true).shape() == st::Shape{2, 1, 4});
    CHECK(st::raw::reduce(st::ReduceOp::sum, x, {-1, 0}, false).shape() == st::Shape{3});
    CHECK(st::raw::reduce(st::ReduceOp::sum, x, {-1, 0}, true).shape() == st::Shape{1, 3, 1});
    CHECK(st::raw::reduce(st::ReduceOp::sum, x, {0, 1, 2}, false).shape() == st::Shape{});
    CHECK(st::raw::reduce(st::ReduceOp::sum, x, {2, 0, 1}, true).shape() == st::Shape{1, 1, 1});
  }
  SECTION("empty axes list reduces nothing") {
    for (st::ReduceOp op : {st::ReduceOp::sum, st::ReduceOp::max, st::ReduceOp::min}) {
      for (bool keepdims : {false, true}) {
        const st::RawTensor y = st::raw::reduce(op, x, {}, keepdims);
        CHECK(y.shape() == x.shape());
        CHECK(y.dtype() == st::f32);
        CHECK(st::testing::values(y) == st::testing::values(x));
      }
    }
    const st::RawTensor i =
        st::testing::random_tensor({3, 2}, st::i32, st::testing::LayoutKind::flipped, rng);
    const st::RawTensor s = st::raw::reduce(st::ReduceOp::sum, i, {});
    CHECK(s.dtype() == st::i64);
    CHECK(st::testing::values(s) == st::testing::values(i));
    const st::RawTensor am = st::raw::reduce(st::ReduceOp::argmax, i, {});
    CHECK(am.dtype() == st::i64);
    CHECK(am.shape() == st::Shape{3, 2});
    CHECK(st::testing::values(am) == std::vector<double>(6, 0.0));
  }
}

TEST_CASE("reduce: size-0 and size-1 dims", "[raw]") {
  std::mt19937_64 rng(11);
  SECTION("sum") {
    // Every subset of a shape with an empty axis: sums over it are zeros.
    const st::Shape shape{2, 0, 3};
    for (st::DType dtype : kDTypes) {
      for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
        const st::RawTensor x = st::testing::random_tensor(shape, dtype, kind, rng);
        for (unsigned mask = 0; mask < 8; ++mask) {
          for (bool keepdims : {false, true}) {
            CHECK(check_reduce(st::ReduceOp::sum, x, axes_of(mask, 3, rng), keepdims) == "");
          }
        }
      }
    }
    const st::RawTensor z =
        st::raw::reduce(st::ReduceOp::sum, st::raw::empty({4, 0}, st::f32), {1});
    CHECK(z.shape() == st::Shape{4});
    CHECK(z.dtype() == st::f32);
    CHECK(st::testing::values(z) == std::vector<double>(4, 0.0));
    const st::RawTensor zi =
        st::raw::reduce(st::ReduceOp::sum, st::raw::empty({0, 3}, st::bool_), {0}, true);
    CHECK(zi.shape() == st::Shape{1, 3});
    CHECK(zi.dtype() == st::i64);
    CHECK(st::testing::values(zi) == std::vector<double>(3, 0.0));
    const st::RawTensor all = st::raw::reduce(st::ReduceOp::sum, st::raw::empty({0}, st::i32), {0});
    CHECK(all.shape() == st::Shape{});
    CHECK(st::testing::values(all) == std::vector<double>{0.0});
  }
  SECTION("max, min, argmax, argmin") {
    const st::Shape shape{2, 0, 3};
    for (st::ReduceOp op :
         {st::ReduceOp::max, st::ReduceOp::min, st::ReduceOp::argmax, st::ReduceOp::argmin}) {
      for (st::DType dtype : kDTypes) {
        const st::RawTensor x =
            st::testing::random_tensor(shape, dtype, st::testing::LayoutKind::contiguous, rng);
        for (unsigned mask = 0; mask < 8; ++mask) {
          const auto axes = axes_of(mask, 3, rng);
          if (reduced_count(shape, mask) == 0) {
            // Nothing to take the max of: an error, not a made-up value.
            CHECK_THROWS_AS(st::raw::reduce(op, x, st::Shape(axes)), st::ValueError);
          } else {
            CHECK(check_reduce(op, x, axes, true) == "");  // an empty result
          }
        }
      }
      CHECK_THROWS_AS(st::raw::reduce(op, st::raw::empty({0}, st::f32), {0}), st::ValueError);
      CHECK_THROWS_WITH(st::raw::reduce(op, st::raw::empty({3, 0}, st::f64), {1}),
                        Catch::Contains(std::string(st::op_name(op))));
    }
  }
  SECTION("size-1 dims") {
    for (st::DType dtype : kDTypes) {
      for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
        const st::RawTensor x = st::testing::random_tensor({1, 1, 1}, dtype, kind, rng);
        for (st::ReduceOp op : kOps) {
          for (unsigned mask = 0; mask < 8; ++mask) {
            CHECK(check_reduce(op, x, axes_of(mask, 3, rng), mask % 2 == 0) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: rank 0, rank 9 and rank 12", "[raw]") {
  std::mt19937_64 rng(99);
  SECTION("rank 0") {
    for (st::DType dtype : kDTypes) {
      const st::RawTensor x =
          st::testing::random_tensor({}, dtype, st::testing::LayoutKind::offset, rng);
      for (st::ReduceOp op : kOps) {
        CHECK(check_reduce(op, x, {}, false) == "");
        CHECK(check_reduce(op, x, {}, true) == "");
        CHECK_THROWS_AS(st::raw::reduce(op, x, {0}), st::IndexError);
      }
    }
    const st::RawTensor x = f64s({}, {-2.5});
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::sum, x, {})) ==
          std::vector<double>{-2.5});
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, x, {})) ==
          std::vector<double>{0});
  }
  SECTION("rank 9 and rank 12") {
    const st::Shape shapes[] = {{2, 1, 3, 2, 1, 2, 2, 1, 2}, {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 2}};
    for (const st::Shape& shape : shapes) {
      const int64_t nd = shape.ndim();
      std::uniform_int_distribution<unsigned> masks(0, (1u << nd) - 1);
      for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
        for (st::DType dtype : {st::f64, st::f32, st::i32, st::bool_}) {
          const st::RawTensor x = st::testing::random_tensor_lean(shape, dtype, kind, rng);
          for (st::ReduceOp op : kOps) {
            for (int trial = 0; trial < 6; ++trial) {
              const unsigned mask = trial == 0 ? (1u << nd) - 1 : masks(rng);
              CHECK(check_reduce(op, x, axes_of(mask, nd, rng), trial % 2 == 1) == "");
            }
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: result dtypes", "[raw]") {
  std::mt19937_64 rng(3);
  SECTION("sum") {
    for (st::DType dtype : {st::bool_, st::i32, st::i64}) {
      const st::RawTensor x =
          st::testing::random_tensor({3, 4}, dtype, st::testing::LayoutKind::contiguous, rng);
      CHECK(st::raw::reduce(st::ReduceOp::sum, x, {1}).dtype() == st::i64);
    }
    CHECK(st::raw::reduce(st::ReduceOp::sum, st::raw::full({3}, 1, st::f32), {0}).dtype() ==
          st::f32);
    CHECK(st::raw::reduce(st::ReduceOp::sum, st::raw::full({3}, 1, st::f64), {0}).dtype() ==
          st::f64);
    // bool sums count the true values.
    const st::RawTensor b = st::testing::make({5}, st::bool_, {1, 0, 1, 1, 0});
    CHECK(st::testing::get_int(st::raw::reduce(st::ReduceOp::sum, b, {0}), {}) == 3);
  }
  SECTION("max") {
    for (st::DType dtype : kDTypes) {
      const st::RawTensor x =
          st::testing::random_tensor({3, 4}, dtype, st::testing::LayoutKind::contiguous, rng);
      CHECK(st::raw::reduce(st::ReduceOp::max, x, {0}).dtype() == dtype);
      CHECK(st::raw::reduce(st::ReduceOp::min, x, {0}).dtype() == dtype);
      CHECK(st::raw::reduce(st::ReduceOp::argmax, x, {0}).dtype() == st::i64);
      CHECK(st::raw::reduce(st::ReduceOp::argmin, x, {0}).dtype() == st::i64);
    }
  }
}

TEST_CASE("reduce: i64 values beyond 2^53 stay exact", "[raw]") {
  const int64_t big = int64_t{1} << 62;
  const std::vector<int64_t> v{big, 1, big / 2, big + 1, big, -big};
  const st::RawTensor x = st::raw::from_host(v.data(), {2, 3}, st::i64);
  SECTION("sum") {
    const st::RawTensor s = st::raw::reduce(st::ReduceOp::sum, x, {1});
    CHECK(st::testing::get_int(s, {0}) == big + big / 2 + 1);
    CHECK(st::testing::get_int(s, {1}) == big + 1);
    const st::RawTensor c = st::raw::reduce(st::ReduceOp::sum, x.transpose(0, 1), {1});
    CHECK(st::testing::get_int(c, {1}) == big + 1);
    CHECK(st::testing::get_int(c, {2}) == -big / 2);
  }
  SECTION("max") {
    CHECK(st::testing::get_int(st::raw::reduce(st::ReduceOp::max, x, {0, 1}), {}) == big + 1);
    CHECK(st::testing::get_int(st::raw::reduce(st::ReduceOp::argmax, x, {0, 1}), {}) == 3);
    CHECK(st::testing::get_int(st::raw::reduce(st::ReduceOp::argmax, x, {1}), {1}) == 0);
    CHECK(st::testing::get_int(st::raw::reduce(st::ReduceOp::min, x, {1}), {0}) == 1);
    CHECK(st::testing::get_int(st::raw::reduce(st::ReduceOp::argmin, x, {1}), {1}) == 2);
  }
}

TEST_CASE("reduce: argmax and argmin take the first of tied values", "[raw]") {
  SECTION("argmax") {
    for (st::DType dtype : {st::i32, st::i64, st::f32, st::f64}) {
      const st::RawTensor x = st::testing::make(
          {3, 5}, dtype, {1, 7, 3, 7, 7, /**/ 4, 4, 4, 4, 4, /**/ -2, 5, -2, 5, -3});
      const st::RawTensor am = st::raw::reduce(st::ReduceOp::argmax, x, {1});
      CHECK(st::testing::values(am) == std::vector<double>{1, 0, 1});
      const st::RawTensor an = st::raw::reduce(st::ReduceOp::argmin, x, {1});
      CHECK(st::testing::values(an) == std::vector<double>{0, 0, 4});
      // The same rows read backwards: the first tie is now another position.
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, x.flip(1), {1})) ==
            std::vector<double>{0, 0, 1});
      // Down the columns (the column-wise traversal).
      const st::RawTensor xt =
          st::testing::make({5, 3}, dtype, {1, 4, -2, 7, 4, 5, 3, 4, -2, 7, 4, 5, 7, 4, -3});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, xt, {0})) ==
            std::vector<double>{1, 0, 1});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, xt, {0})) ==
            std::vector<double>{0, 0, 4});
    }
    const st::RawTensor b = st::testing::make({2, 4}, st::bool_, {0, 1, 1, 0, 0, 0, 0, 0});
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, b, {1})) ==
          std::vector<double>{1, 0});
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, b, {1})) ==
          std::vector<double>{0, 0});
  }
  SECTION("argmin") {
    // Over several axes the position is row-major over the reduced axes:
    // x[2, 3, 4] reduced over {0, 2} gives position i0 * 4 + i2.
    std::vector<double> v(24, 0.0);
    auto at = [&](int i0, int i1, int i2) -> double& {
      return v[std::size_t(i0 * 12 + i1 * 4 + i2)];
    };
    at(1, 0, 0) = -5, at(0, 0, 3) = -5;  // j = 0: ties at positions 4 and 3 -> 3
    at(1, 1, 2) = -7, at(1, 1, 3) = -7;  // j = 1: ties at positions 6 and 7 -> 6
    at(1, 2, 1) = -1;                    // j = 2: position 5
    const st::RawTensor x = f64s({2, 3, 4}, v);
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, x, {0, 2})) ==
          std::vector<double>{3, 6, 5});
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, x, {2, -3}, true)) ==
          std::vector<double>{3, 6, 5});
    for (double& e : v) e = -e;
    // The same logical tensor, stored with axis 2 outermost.
    const st::RawTensor y =
        st::testing::copy_of(f64s({2, 3, 4}, v).permute({2, 0, 1})).permute({1, 2, 0});
    REQUIRE(!y.is_contiguous());
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, y, {0, 2})) ==
          std::vector<double>{3, 6, 5});
    // Reduced over everything: position in the whole tensor.
    CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, y, {0, 1, 2})) ==
          std::vector<double>{18});
  }
}

TEST_CASE("reduce: NaN propagates through max, min, argmax and argmin", "[raw]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Row 1 has NaN at columns 2 and 4, row 3 at column 0.
  const std::vector<double> v{0,   1,  2,   3,  4,   5,   //
                              9,   1,  nan, 3,  nan, 8,   //
                              -1,  -2, -3,  -4, -5,  -6,  //
                              nan, 1,  1,   1,  1,   1};
  // Each dtype, contiguous (columns reduced side by side) and stored transposed.
  std::vector<st::RawTensor> xs;
  for (st::DType dtype : {st::f32, st::f64}) {
    const st::RawTensor x = st::testing::make({4, 6}, dtype, v);
    xs.push_back(x);
    xs.push_back(st::testing::copy_of(x.transpose(0, 1)).transpose(0, 1));
  }
  SECTION("max") {
    for (const st::RawTensor& t : xs) {
      const auto mx = st::testing::values(st::raw::reduce(st::ReduceOp::max, t, {1}));
      CHECK(mx[0] == 5);
      CHECK(std::isnan(mx[1]));
      CHECK(mx[2] == -1);
      CHECK(std::isnan(mx[3]));
      const auto mx0 = st::testing::values(st::raw::reduce(st::ReduceOp::max, t, {0}));
      CHECK(std::isnan(mx0[0]));
      CHECK(mx0[1] == 1);
      CHECK(std::isnan(mx0[2]));
      CHECK(mx0[3] == 3);
      CHECK(std::isnan(mx0[4]));
      CHECK(mx0[5] == 8);
      CHECK(std::isnan(st::testing::values(st::raw::reduce(st::ReduceOp::max, t, {0, 1}))[0]));
    }
  }
  SECTION("min") {
    for (const st::RawTensor& t : xs) {
      const auto mn = st::testing::values(st::raw::reduce(st::ReduceOp::min, t, {1}));
      CHECK(mn[0] == 0);
      CHECK(std::isnan(mn[1]));
      CHECK(mn[2] == -6);
      CHECK(std::isnan(mn[3]));
      const auto mn0 = st::testing::values(st::raw::reduce(st::ReduceOp::min, t, {0}));
      CHECK(std::isnan(mn0[0]));
      CHECK(mn0[1] == -2);
      CHECK(std::isnan(mn0[2]));
      CHECK(mn0[3] == -4);
    }
  }
  SECTION("argmax") {
    for (const st::RawTensor& t : xs) {
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, t, {1})) ==
            std::vector<double>{5, 2, 0, 0});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, t, {0})) ==
            std::vector<double>{3, 0, 1, 0, 1, 1});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, t, {0, 1})) ==
            std::vector<double>{8});
    }
  }
  SECTION("argmin") {
    for (const st::RawTensor& t : xs) {
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, t, {1})) ==
            std::vector<double>{0, 2, 5, 0});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, t, {0})) ==
            std::vector<double>{3, 2, 1, 2, 1, 2});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, t, {1, 0})) ==
            std::vector<double>{8});
    }
  }
  SECTION("long rows (reduced in chunks)") {
    // 70000 elements per row: longer than one chunk, so partial results combine.
    for (st::DType dtype : {st::f32, st::f64}) {
      std::vector<double> v(2 * 70000, 0.0);
      v[50000] = nan, v[66000] = nan, v[100] = 3;  // row 0; chunks start at 32768 and 65536
      v[70000 + 100] = 5, v[70000 + 69999] = 5, v[70000 + 40000] = -1;  // row 1
      v[70000 + 67000] = -1;
      const st::RawTensor x = st::testing::make({2, 70000}, dtype, v);
      const auto mx = st::testing::values(st::raw::reduce(st::ReduceOp::max, x, {1}));
      CHECK(std::isnan(mx[0]));
      CHECK(mx[1] == 5);
      CHECK(std::isnan(st::testing::values(st::raw::reduce(st::ReduceOp::min, x, {1}))[0]));
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, x, {1})) ==
            std::vector<double>{50000, 100});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, x, {1})) ==
            std::vector<double>{50000, 40000});
      // The same down columns of the transpose.
      const st::RawTensor xt = x.transpose(0, 1);
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmax, xt, {0})) ==
            std::vector<double>{50000, 100});
      CHECK(st::testing::values(st::raw::reduce(st::ReduceOp::argmin, xt, {0})) ==
            std::vector<double>{50000, 40000});
      CHECK(check_reduce(st::ReduceOp::argmax, x, {1}, false) == "");
      CHECK(check_reduce(st::ReduceOp::argmin, st::testing::copy_of(xt), {0}, false) == "");
    }
  }
}

TEST_CASE("reduce: sums agree with Eigen", "[raw]") {
  std::mt19937_64 rng(300500);
  const st::RawTensor x =
      st::testing::random_tensor({300, 500}, st::f32, st::testing::LayoutKind::contiguous, rng);
  const std::vector<double> xv = st::testing::values(x);
  const Eigen::MatrixXd m =
      Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
          xv.data(), 300, 500);
  const Eigen::MatrixXd am = m.cwiseAbs();
  const Eigen::VectorXd colsum = m.colwise().sum().transpose(), rowsum = m.rowwise().sum();
  const Eigen::VectorXd colabs = am.colwise().sum().transpose(), rowabs = am.rowwise().sum();
  auto close = [](const std::vector<double>& got, const Eigen::VectorXd& want,
                  const Eigen::VectorXd& scale) {
    if (got.size() != std::size_t(want.size())) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::fabs(got[i] - want[Eigen::Index(i)]) > 2e-7 * (scale[Eigen::Index(i)] + 1))
        return false;
    }
    return true;
  };
  SECTION("sum") {
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::sum, x, {0})), colsum, colabs));
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::sum, x, {1})), rowsum, rowabs));
    const st::RawTensor xt = x.transpose(0, 1);  // [500, 300]
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::sum, xt, {0})), rowsum, rowabs));
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::sum, xt, {1})), colsum, colabs));
    const st::RawTensor xtc = st::testing::copy_of(xt);
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::sum, xtc, {0})), rowsum, rowabs));
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::sum, xtc, {1}, true)), colsum,
                colabs));
    const double total = st::testing::values(st::raw::reduce(st::ReduceOp::sum, xt, {0, 1}))[0];
    CHECK(std::fabs(total - m.sum()) <= 2e-7 * am.sum());
  }
  SECTION("max") {
    const Eigen::VectorXd colmax = m.colwise().maxCoeff().transpose(),
                          rowmin = m.rowwise().minCoeff();
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::max, x, {0})), colmax,
                Eigen::VectorXd::Zero(500)));
    CHECK(close(st::testing::values(st::raw::reduce(st::ReduceOp::min, x.transpose(0, 1), {0})),
                rowmin, Eigen::VectorXd::Zero(300)));
  }
}

TEST_CASE("reduce: accuracy of float sums", "[raw]") {
  SECTION("sum") {
    // 2^24 ones: a float accumulator would still be exact here, ...
    const int64_t n = int64_t{1} << 24;
    {
      const st::RawTensor ones = st::raw::full({n}, 1.0, st::f32);
      CHECK(st::testing::get(st::raw::reduce(st::ReduceOp::sum, ones, {0}), {}) == 16777216.0);
    }
    {
      // ... but past 2^24 it would stop counting (16777216 + 1 rounds back down).
      const st::RawTensor more = st::raw::full({n + 2}, 1.0, st::f32);
      CHECK(st::testing::get(st::raw::reduce(st::ReduceOp::sum, more, {0}), {}) == 16777218.0);
      // As [2, (2^24 + 2) / 2] summed over both axes, and over its transpose.
      const st::RawTensor m = more.view(st::Layout::contiguous({2, (n + 2) / 2}));
      CHECK(st::testing::get(st::raw::reduce(st::ReduceOp::sum, m, {0, 1}), {}) == 16777218.0);
      CHECK(st::testing::get(st::raw::reduce(st::ReduceOp::sum, m.transpose(0, 1), {1, 0}), {}) ==
            16777218.0);
    }
    {
      // Through a strided view: every other element of 2 * (2^24 + 2).
      const st::RawTensor wide = st::raw::full({2 * (n + 2)}, 1.0, st::f32);
      CHECK(st::testing::get(
                st::raw::reduce(st::ReduceOp::sum, wide.slice(0, 1, std::nullopt, 2), {0}), {}) ==
            16777218.0);
    }
  }
  SECTION("sum of normals") {
    std::mt19937_64 rng(1000000);
    std::normal_distribution<double> normal;
    const int64_t n = 1000000;
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& e : v) e = double(float(normal(rng)));
    double ref = 0;
    for (double e : v) ref += e;
    const st::RawTensor x = st::testing::make({n}, st::f32, v);
    const double got = st::testing::get(st::raw::reduce(st::ReduceOp::sum, x, {0}), {});
    CHECK(std::fabs(got - ref) <= 1e-5 * std::fabs(ref));
    // As [1000, 1000] over both axes, and over axis 0 of the transpose.
    const st::RawTensor m = st::testing::make({1000, 1000}, st::f32, v);
    const double got2 = st::testing::get(st::raw::reduce(st::ReduceOp::sum, m, {1, 0}), {});
    CHECK(std::fabs(got2 - ref) <= 1e-5 * std::fabs(ref));
    const std::vector<double> cols =
        st::testing::values(st::raw::reduce(st::ReduceOp::sum, m.transpose(0, 1), {1}));
    for (int64_t j = 0; j < 1000; j += 97) {
      double col = 0;
      for (int64_t i = 0; i < 1000; ++i) col += v[std::size_t(i * 1000 + j)];
      CHECK(cols[std::size_t(j)] == Approx(double(float(col))).epsilon(1e-6).margin(1e-5));
    }
  }
}

TEST_CASE("reduce: results do not depend on the thread count", "[raw][threads]") {
  const int original = st::num_threads();
  std::mt19937_64 rng(4242);
  struct Case {
    st::RawTensor x;
    st::Shape axes;
  };
  std::vector<Case> cases{
      {st::testing::random_tensor({3, 100000}, st::f32, st::testing::LayoutKind::contiguous, rng),
       {1}},
      {st::testing::random_tensor({2000, 300}, st::f64, st::testing::LayoutKind::contiguous, rng),
       {0}},
      {st::testing::random_tensor({300, 2000}, st::f32, st::testing::LayoutKind::flipped, rng),
       {1}},
      {st::testing::random_tensor({40, 50, 30}, st::f32, st::testing::LayoutKind::permuted, rng),
       {0, 2}},
      {st::testing::random_tensor({600, 500}, st::i32, st::testing::LayoutKind::sliced, rng), {0}},
      // Column sums in pieces of row chunks (256 rows and more) x column
      // ranges (4096 columns): 2 x 2 pieces here.
      {st::testing::random_tensor({700, 4100}, st::f32, st::testing::LayoutKind::contiguous, rng),
       {0}},
  };
  auto run_all = [&] {
    std::vector<std::vector<unsigned char>> out;
    for (const Case& c : cases) {
      for (st::ReduceOp op : kOps)
        out.push_back(st::testing::bytes_of(st::raw::reduce(op, c.x, c.axes)));
    }
    return out;
  };
  SECTION("sum") {
    st::set_num_threads(1);
    const auto one = run_all();
    st::set_num_threads(2);
    const auto two = run_all();
    st::set_num_threads(3);
    const auto three = run_all();
    st::set_num_threads(original);
    CHECK(st::num_threads() == original);
    REQUIRE(one.size() == two.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
      INFO("case " << i / 5 << ", op " << st::op_name(kOps[i % 5]));
      CHECK(one[i] == two[i]);
      CHECK(one[i] == three[i]);
    }
    // And the results are right.
    for (const Case& c : cases) {
      for (st::ReduceOp op : kOps) CHECK(check_reduce(op, c.x, c.axes.vec(), false) == "");
    }
  }
}
