// SPDX-License-Identifier: MIT
// Bad input to matmul and reduce: the right st::Error subclass, with a
// message that names the op and the values involved (DESIGN §6).
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/naive.hpp"

namespace st = strata;
using st::testing::raw_zeros;

TEST_CASE("errors: matmul", "[raw]") {
  SECTION("rank below 2") {
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({3}), raw_zeros({3, 2})), st::ShapeError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}), raw_zeros({3})), st::ShapeError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({3}), raw_zeros({3})), st::ShapeError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({}), raw_zeros({2, 2})), st::ShapeError);
    CHECK_THROWS_WITH(
        st::raw::matmul(raw_zeros({3}), raw_zeros({3, 2})),
        Catch::Contains("matmul") && Catch::Contains("[3]") && Catch::Contains("[3, 2]"));
  }
  SECTION("inner dims differ") {
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}), raw_zeros({4, 5})), st::ShapeError);
    CHECK_THROWS_WITH(
        st::raw::matmul(raw_zeros({2, 3}), raw_zeros({4, 5})),
        Catch::Contains("matmul") && Catch::Contains("[2, 3]") && Catch::Contains("[4, 5]"));
    CHECK_THROWS_WITH(st::raw::matmul(raw_zeros({7, 2, 3}), raw_zeros({2, 5})),
                      Catch::Contains("[7, 2, 3]") && Catch::Contains("[2, 5]"));
    // Inner dims are checked even when the product would be empty.
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({0, 3}), raw_zeros({4, 0})), st::ShapeError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({0, 2, 3}), raw_zeros({0, 4, 5})), st::ShapeError);
    // A transposed view is checked by its logical shape.
    CHECK_THROWS_AS(
        st::raw::matmul(raw_zeros({3, 2}).transpose(0, 1), raw_zeros({3, 2}).transpose(0, 1)),
        st::ShapeError);
  }
  SECTION("batch dims do not broadcast") {
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3, 4}), raw_zeros({3, 4, 5})), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::matmul(raw_zeros({2, 3, 4}), raw_zeros({3, 4, 5})),
                      Catch::Contains("matmul"));
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 1, 3, 4}), raw_zeros({5, 3, 4, 5})),
                    st::ShapeError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({0, 3, 4}), raw_zeros({2, 4, 5})), st::ShapeError);
  }
  SECTION("dtypes") {
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}, st::f32), raw_zeros({3, 2}, st::f64)),
                    st::DTypeError);
    CHECK_THROWS_WITH(
        st::raw::matmul(raw_zeros({2, 3}, st::f32), raw_zeros({3, 2}, st::f64)),
        Catch::Contains("matmul") && Catch::Contains("f32") && Catch::Contains("f64"));
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}, st::i32), raw_zeros({3, 2}, st::i64)),
                    st::DTypeError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}, st::bool_), raw_zeros({3, 2}, st::bool_)),
                    st::DTypeError);
    CHECK_THROWS_WITH(st::raw::matmul(raw_zeros({2, 3}, st::bool_), raw_zeros({3, 2}, st::bool_)),
                      Catch::Contains("matmul") && Catch::Contains("bool"));
  }
  SECTION("undefined operand") {
    CHECK_THROWS_AS(st::raw::matmul(st::RawTensor(), raw_zeros({2, 2})), st::ValueError);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 2}), st::RawTensor()), st::ValueError);
  }
}

TEST_CASE("errors: reduce", "[raw]") {
  const st::RawTensor x = raw_zeros({2, 3, 4});
  SECTION("axis out of range") {
    for (st::ReduceOp op : {st::ReduceOp::sum, st::ReduceOp::max, st::ReduceOp::min,
                            st::ReduceOp::argmax, st::ReduceOp::argmin}) {
      const std::string name(st::op_name(op));
      CHECK_THROWS_AS(st::raw::reduce(op, x, {3}), st::IndexError);
      CHECK_THROWS_AS(st::raw::reduce(op, x, {-4}), st::IndexError);
      CHECK_THROWS_AS(st::raw::reduce(op, x, {0, 7}, true), st::IndexError);
      CHECK_THROWS_WITH(st::raw::reduce(op, x, {3}), Catch::Contains(name) && Catch::Contains("3"));
      CHECK_THROWS_WITH(st::raw::reduce(op, x, {-4}),
                        Catch::Contains(name) && Catch::Contains("-4"));
      CHECK_THROWS_AS(st::raw::reduce(op, raw_zeros({}), {0}), st::IndexError);
    }
  }
  SECTION("repeated axis") {
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::sum, x, {1, 1}), st::IndexError);
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::max, x, {1, -2}),
                    st::IndexError);  // the same axis twice
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::argmax, x, {0, 2, -1}, true), st::IndexError);
    CHECK_THROWS_WITH(st::raw::reduce(st::ReduceOp::sum, x, {1, -2}),
                      Catch::Contains("sum") && Catch::Contains("1"));
  }
  SECTION("undefined input") {
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::sum, st::RawTensor(), {}), st::ValueError);
  }
}

TEST_CASE("errors: result element counts that overflow int64", "[raw]") {
  const int64_t huge = int64_t{1} << 62;
  // Broadcast views: 2^62 elements each without any memory behind them.
  const st::RawTensor col = raw_zeros({1, 1}).expand({huge, 1});
  const st::RawTensor row = raw_zeros({1, 1}).expand({1, huge});
  SECTION("matmul") {
    // [2^62, 1] x [1, 2^62] would have 2^124 elements.
    CHECK_THROWS_AS(st::raw::matmul(col, row), st::ValueError);
    CHECK_THROWS_WITH(st::raw::matmul(col, row), Catch::Contains("overflow"));
  }
  SECTION("index_select") {
    // An index of shape [8] replacing axis 0 of [1, 2^62] gives [8, 2^62]: 2^65 elements.
    const st::RawTensor idx = st::raw::full({8}, 0.0, st::i64);
    CHECK_THROWS_AS(st::raw::index_select(row, 0, idx), st::ValueError);
    // index_add checks the same count before it compares the source's shape.
    CHECK_THROWS_AS(st::raw::index_add(row, 0, idx, raw_zeros({1, 1}).expand({8, 1})),
                    st::ValueError);
  }
}

TEST_CASE("errors: reduce axis errors name the tensor's shape", "[raw]") {
  // DESIGN §6: the message names the op, the shapes involved and the offending value.
  const st::RawTensor x = raw_zeros({2, 3, 4});
  SECTION("sum") {
    CHECK_THROWS_WITH(st::raw::reduce(st::ReduceOp::sum, x, {3}), Catch::Contains("sum") &&
                                                                      Catch::Contains("3") &&
                                                                      Catch::Contains("[2, 3, 4]"));
    CHECK_THROWS_WITH(st::raw::reduce(st::ReduceOp::sum, x, {1, -2}),
                      Catch::Contains("sum") && Catch::Contains("[2, 3, 4]"));
  }
}

TEST_CASE("errors: every contraction error is an st::Error", "[raw]") {
  SECTION("matmul") {
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({3}), raw_zeros({3, 2})), st::Error);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}), raw_zeros({4, 5})), st::Error);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3, 4}), raw_zeros({3, 4, 5})), st::Error);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}, st::f32), raw_zeros({3, 2}, st::f64)),
                    st::Error);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}, st::bool_), raw_zeros({3, 2}, st::bool_)),
                    st::Error);
    CHECK_THROWS_AS(st::raw::matmul(raw_zeros({2, 3}), raw_zeros({4, 5})), std::runtime_error);
  }
  SECTION("reduce") {
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::sum, raw_zeros({2}), {1}), st::Error);
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::sum, raw_zeros({2}), {0, 0}), st::Error);
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::max, raw_zeros({0}), {0}), st::Error);
    CHECK_THROWS_AS(st::raw::reduce(st::ReduceOp::argmin, raw_zeros({2, 0}), {1}),
                    std::runtime_error);
  }
  SECTION("index_select") {
    const st::RawTensor x = raw_zeros({2, 3});
    CHECK_THROWS_AS(st::raw::index_select(x, 0, st::testing::make({1}, st::i64, {5})), st::Error);
    CHECK_THROWS_AS(st::raw::index_select(x, 0, st::testing::make({1}, st::f32, {0})), st::Error);
    CHECK_THROWS_AS(
        st::raw::index_add(x, 0, st::testing::make({1}, st::i64, {0}), raw_zeros({2, 3})),
        st::Error);
  }
}
