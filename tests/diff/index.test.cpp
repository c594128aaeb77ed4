// SPDX-License-Identifier: MIT
// Tests for diff/index.hpp: basic (ix), outer (oix) and vectorized (vix)
// indexing with integers, slices, all, newaxis, ellipsis, integer tensors and
// bool masks, and take. Expected values come from the examples of reference/003 (the
// [4, 3, 2] tensor arange(1, 25), printed there) and from a brute-force
// reference written here with multi-index loops over random specs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <strata.hpp>
#include <string>
#include <vector>

namespace st = strata;

namespace {

st::Tensor t432() { return st::arange(1, 25).reshape({4, 3, 2}); }
st::Tensor i64s(const std::vector<int64_t>& v, const st::Shape& s) { return st::from_vector(v, s); }
st::Tensor i64s(const std::vector<int64_t>& v) { return st::from_vector(v); }
st::Tensor bools(const std::vector<bool>& v, const st::Shape& s) { return st::from_vector(v, s); }
std::vector<int64_t> values(const st::Tensor& t) { return t.to_vector<int64_t>(); }
bool shares_storage(const st::Tensor& a, const st::Tensor& b) {
  return a.raw().storage() == b.raw().storage();
}

}  // namespace

TEST_CASE("ix: the basic indexing examples of the reference post", "[diff][index]") {
  const st::Tensor t = t432();
  SECTION("integers remove their axis; negative integers count from the end") {
    REQUIRE(t.ix(1).shape() == st::Shape{3, 2});
    REQUIRE(values(t.ix(1)) == std::vector<int64_t>{7, 8, 9, 10, 11, 12});
    REQUIRE(t.ix(1, 2, 0).shape() == st::Shape{});
    REQUIRE(t.ix(1, 2, 0).item<int64_t>() == 11);
    REQUIRE(t.ix(-1, -1, -1).item<int64_t>() == 24);
    REQUIRE(values(t.ix(st::all, 0, 1)) == std::vector<int64_t>{2, 8, 14, 20});
  }
  SECTION("slices keep their axis") {
    const st::Tensor r = t.ix(st::slice(1, 3), st::slice(1, 2), st::all);
    REQUIRE(r.shape() == st::Shape{2, 1, 2});
    REQUIRE(values(r) == std::vector<int64_t>{9, 10, 15, 16});
    const st::Tensor s = t.ix(st::slice(1, 3), st::slice(2), st::all);
    REQUIRE(s.shape() == st::Shape{2, 1, 2});
    REQUIRE(values(s) == std::vector<int64_t>{11, 12, 17, 18});
    REQUIRE(values(t.ix(st::slice(st::none, 2), 0, 0)) == std::vector<int64_t>{1, 7});
    REQUIRE(values(t.ix(st::slice(st::none, st::none, 2), 0, 0)) == std::vector<int64_t>{1, 13});
    REQUIRE(values(t.ix(st::slice(-2), 0, 0)) == std::vector<int64_t>{13, 19});
  }
  SECTION("negative steps flip") {
    const st::Tensor r = t.ix(st::slice(st::none, st::none, -1), 0, 0);
    REQUIRE(values(r) == std::vector<int64_t>{19, 13, 7, 1});
    REQUIRE(values(t.ix(st::slice(2, st::none, -2), 1, 1)) == std::vector<int64_t>{16, 4});
  }
  SECTION("newaxis and ellipsis") {
    REQUIRE(t.ix(st::newaxis).shape() == st::Shape{1, 4, 3, 2});
    REQUIRE(t.ix(st::all, st::newaxis, st::all, st::newaxis).shape() == st::Shape{4, 1, 3, 1, 2});
    REQUIRE(t.ix(st::ellipsis, 1).shape() == st::Shape{4, 3});
    REQUIRE(values(t.ix(st::ellipsis, 1)) ==
            std::vector<int64_t>{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24});
    REQUIRE(t.ix(0, st::ellipsis, 1).shape() == st::Shape{3});
    REQUIRE(values(t.ix(0, st::ellipsis, 1)) == std::vector<int64_t>{2, 4, 6});
    REQUIRE(t.ix(st::ellipsis, 0, 0, 0).shape() == st::Shape{});  // an empty ellipsis
    const st::Tensor r = t.ix(st::slice(st::none, st::none, -1), st::newaxis, st::ellipsis);
    REQUIRE(r.shape() == st::Shape{4, 1, 3, 2});
    REQUIRE(values(r.ix(0, 0)) == std::vector<int64_t>{19, 20, 21, 22, 23, 24});
    REQUIRE(t.ix().shape() == t.shape());
  }
  SECTION("every basic index is a view of the same storage") {
    for (const st::Tensor& v :
         {t.ix(1), t.ix(st::slice(1, 3), st::slice(1, 2)), t.ix(st::slice(st::none, st::none, -1)),
          t.ix(st::newaxis, st::ellipsis, 0), t.ix(-1, -1, -1)}) {
      REQUIRE(shares_storage(v, t));
    }
  }
}

TEST_CASE("ix: a view written in place changes the base tensor", "[diff][index]") {
  st::Tensor t = st::arange(1, 25, 1, st::f64).reshape({4, 3, 2});
  st::Tensor row = t.ix(1, 2);  // [11, 12]
  row.fill_(-1);
  REQUIRE(t.ix(1, 2).to_vector<double>() == std::vector<double>{-1, -1});
  st::Tensor rev = t.ix(st::slice(st::none, st::none, -1), 0, 0);  // [19, 13, 7, 1]
  rev.copy_(st::from_vector(std::vector<double>{40, 30, 20, 10}));
  REQUIRE(t.ix(st::all, 0, 0).to_vector<double>() == std::vector<double>{10, 20, 30, 40});
  t.ix(st::ellipsis, 1).add_(st::full({1}, 100.0, st::f64));
  REQUIRE(t.ix(0).to_vector<double>() == std::vector<double>{10, 102, 3, 104, 5, 106});
  // The other elements are untouched.
  REQUIRE(t.ix(1).to_vector<double>() == std::vector<double>{20, 108, 9, 110, -1, 99});
}

TEST_CASE("oix: the outer indexing examples of the reference post", "[diff][index]") {
  const st::Tensor t = t432();
  SECTION("one index tensor replaces its axis by its shape") {
    REQUIRE(t.oix(i64s({1, 2})).shape() == st::Shape{2, 3, 2});
    REQUIRE(values(t.oix(i64s({1, 2}))) ==
            std::vector<int64_t>{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
    REQUIRE(values(t.oix(i64s({3, 0, 2, 1})).ix(st::all, 0, 0)) ==
            std::vector<int64_t>{19, 1, 13, 7});
    REQUIRE(values(t.oix(i64s({0, 0, 1, 1})).ix(st::all, 0, 0)) ==
            std::vector<int64_t>{1, 1, 7, 7});
    const st::Tensor five = t.oix(i64s({1, 1, 1, 1, 1}));
    REQUIRE(five.shape() == st::Shape{5, 3, 2});
    REQUIRE(values(five.ix(st::all, 2, 1)) == std::vector<int64_t>{12, 12, 12, 12, 12});
    const st::Tensor r = t.oix(i64s({0, 1, 1, 0}, {2, 2}));
    REQUIRE(r.shape() == st::Shape{2, 2, 3, 2});
    REQUIRE(values(r.ix(st::all, st::all, 0, 0)) == std::vector<int64_t>{1, 7, 7, 1});
    const st::Tensor last = t.oix(st::all, st::all, i64s({0, 1, 1, 0}, {2, 2}));
    REQUIRE(last.shape() == st::Shape{4, 3, 2, 2});
    REQUIRE(values(last.ix(0)) == std::vector<int64_t>{1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5});
    REQUIRE(values(last.ix(3, 2)) == std::vector<int64_t>{23, 24, 24, 23});
  }
  SECTION("several index tensors act independently (the cartesian product)") {
    const st::Tensor r = t.oix(i64s({1, 2}), i64s({1}), i64s({0, 1}));
    REQUIRE(r.shape() == st::Shape{2, 1, 2});
    REQUIRE(values(r) == std::vector<int64_t>{9, 10, 15, 16});
    const st::Tensor c = t.oix(i64s({3, 0}), i64s({2, 0}), i64s({1, 0}));
    REQUIRE(c.shape() == st::Shape{2, 2, 2});
    REQUIRE(values(c) == std::vector<int64_t>{24, 23, 20, 19, 6, 5, 2, 1});
    const st::Tensor big =
        t.oix(i64s({3, 3, 0, 0}, {2, 2}), i64s({2, 0}), i64s({1, 0, 1, 0}, {2, 2}));
    REQUIRE(big.shape() == st::Shape{2, 2, 2, 2, 2});
    REQUIRE(values(big) == std::vector<int64_t>{24, 23, 24, 23, 20, 19, 20, 19, 24, 23, 24,
                                                23, 20, 19, 20, 19, 6,  5,  6,  5,  2,  1,
                                                2,  1,  6,  5,  6,  5,  2,  1,  2,  1});
    const st::Tensor m = st::arange(1, 10).reshape({3, 3});
    REQUIRE(values(m.oix(i64s({0, 2}), i64s({0, 2}))) == std::vector<int64_t>{1, 3, 7, 9});
  }
  SECTION("shapes of mixed specs") {
    const st::Tensor arr = st::ones({5, 6, 7, 8});
    const st::Tensor i1 = i64s({0}), i2 = i64s({0, 1});
    REQUIRE(arr.oix(st::all, i1, i2, st::all).shape() == st::Shape{5, 1, 2, 8});
    REQUIRE(arr.oix(st::all, i1, st::all, i2).shape() == st::Shape{5, 1, 7, 2});
    REQUIRE(t.oix(i64s({0, 2}), st::all, i64s({0, 1})).shape() == st::Shape{2, 3, 2});
  }
  SECTION("masks select their true positions in row-major order") {
    const st::Tensor r = t.oix(bools({false, false, true, false}, {4}));
    REQUIRE(r.shape() == st::Shape{1, 3, 2});
    REQUIRE(values(r) == std::vector<int64_t>{13, 14, 15, 16, 17, 18});
    const st::Tensor m = bools({false, false, true, false, true, true}, {3, 2});
    const st::Tensor r2 = t.oix(st::all, m);
    REQUIRE(r2.shape() == st::Shape{4, 3});
    REQUIRE(values(r2) == std::vector<int64_t>{3, 5, 6, 9, 11, 12, 15, 17, 18, 21, 23, 24});
    // The mask of the elements equal to [1, 2] (the eq example).
    const st::Tensor eq = t == i64s({1, 2});
    REQUIRE(eq.shape() == st::Shape{4, 3, 2});
    REQUIRE(values(t.oix(eq)) == std::vector<int64_t>{1, 2});
    REQUIRE(t.oix(eq).shape() == st::Shape{2});
  }
}

TEST_CASE("vix: the vectorized indexing examples of the reference post", "[diff][index]") {
  const st::Tensor t = t432();
  SECTION("the opening examples") {
    const st::Tensor s = t.vix(st::slice(1, 3), st::slice(2), st::all);
    REQUIRE(s.shape() == st::Shape{2, 1, 2});
    REQUIRE(values(s) == std::vector<int64_t>{11, 12, 17, 18});
    const st::Tensor i = i64s({2, 1});
    REQUIRE(values(t.vix(i, i, 1)) == std::vector<int64_t>{18, 10});
    const st::Tensor b = bools({false, false, true, false}, {4});
    const st::Tensor r = t.vix(b, i, st::slice(1));
    REQUIRE(r.shape() == st::Shape{2, 1});
    REQUIRE(values(r) == std::vector<int64_t>{18, 16});
  }
  SECTION("index tensors zip together under broadcasting") {
    const st::Tensor m = st::arange(1, 10).reshape({3, 3});
    REQUIRE(values(m.vix(i64s({0, 2}), i64s({0, 2}))) == std::vector<int64_t>{1, 9});
    const st::Tensor corners = m.vix(i64s({0, 0, 2, 2}, {2, 2}), i64s({0, 2, 0, 2}, {2, 2}));
    REQUIRE(corners.shape() == st::Shape{2, 2});
    REQUIRE(values(corners) == std::vector<int64_t>{1, 3, 7, 9});
    // Broadcasting a column against a row gives the outer product of positions.
    const st::Tensor outer = m.vix(i64s({0, 2}, {2, 1}), i64s({0, 2}, {1, 2}));
    REQUIRE(values(outer) == std::vector<int64_t>{1, 3, 7, 9});
  }
  SECTION("the broadcast dims always come first") {
    const st::Tensor r = t.vix(i64s({0, 2}), st::all, i64s({0, 1}));
    REQUIRE(r.shape() == st::Shape{2, 3});
    REQUIRE(values(r) == std::vector<int64_t>{1, 3, 5, 14, 16, 18});
    const st::Tensor arr = st::ones({5, 6, 7, 8});
    const st::Tensor i1 = i64s({0}), i2 = i64s({0, 1});
    REQUIRE(arr.vix(st::all, i1, i2, st::all).shape() == st::Shape{2, 5, 8});
    REQUIRE(arr.vix(st::all, i1, st::all, i2).shape() == st::Shape{2, 5, 7});
    REQUIRE(arr.vix(st::all, i1, 0, st::all).shape() == st::Shape{1, 5, 8});
    REQUIRE(arr.vix(st::all, i1, st::all, 0).shape() == st::Shape{1, 5, 7});
    // One index tensor on an inner axis also moves to the front.
    const st::Tensor one = t.vix(st::all, i64s({2, 0}, {2, 1}));
    REQUIRE(one.shape() == st::Shape{2, 1, 4, 2});
    REQUIRE(values(one.ix(0, 0, st::all, 0)) == std::vector<int64_t>{5, 11, 17, 23});
  }
}

TEST_CASE("indexing with specs built at run time", "[diff][index]") {
  const st::Tensor a = st::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  const st::Tensor i = st::from_vector(std::vector<int64_t>{2, 0}, {2});
  std::vector<st::Index> spec{st::Index(1), st::Index(st::slice(0, 2))};
  REQUIRE(a.ix(spec).to_vector<double>() == std::vector<double>{4, 5});
  REQUIRE(st::ix(a, spec).to_vector<double>() == std::vector<double>{4, 5});
  std::vector<st::Index> fancy{st::Index(st::all), st::Index(i)};
  REQUIRE(a.oix(fancy).to_vector<double>() == std::vector<double>{3, 1, 6, 4});
  REQUIRE(a.vix(fancy).to_vector<double>() == std::vector<double>{3, 6, 1, 4});
  REQUIRE(a.vix(fancy).shape() == st::Shape{2, 2});
  REQUIRE(a.ix(std::vector<st::Index>{st::Index(0)}).to_vector<double>() ==
          std::vector<double>{1, 2, 3});
  // The DESIGN spelling: an int, a slice and a tensor in one spec.
  const st::Tensor b = st::arange(0, 24, 1, st::f64).reshape({2, 3, 4});
  std::vector<st::Index> mixed{st::Index(1), st::Index(st::slice(0, 2)), st::Index(i)};
  REQUIRE(b.oix(mixed).shape() == st::Shape{2, 2});
  REQUIRE(b.oix(mixed).to_vector<double>() == std::vector<double>{14, 12, 18, 16});
  REQUIRE(b.vix(mixed).to_vector<double>() == std::vector<double>{14, 18, 12, 16});
}

TEST_CASE("indexing: i32 and negative entries in index tensors", "[diff][index]") {
  const st::Tensor t = t432();
  const st::Tensor neg = st::from_vector(std::vector<int32_t>{-1, 0, -4});
  REQUIRE(values(t.oix(neg).ix(st::all, 0, 0)) == std::vector<int64_t>{19, 1, 1});
  REQUIRE(values(t.vix(neg, st::from_vector(std::vector<int32_t>{-3, 2, 1}), -2)) ==
          std::vector<int64_t>{19, 5, 3});
  // Empty index tensors give empty results of the right shape.
  const st::Tensor none = st::from_vector(std::vector<int64_t>{});
  REQUIRE(t.oix(st::all, none).shape() == st::Shape{4, 0, 2});
  REQUIRE(t.vix(st::all, none).shape() == st::Shape{0, 4, 2});
  // A 0-d index tensor removes its axis like an integer (but copies).
  const st::Tensor scalar = st::from_vector(std::vector<int64_t>{2}, {});
  REQUIRE(t.oix(scalar).shape() == st::Shape{3, 2});
  REQUIRE(values(t.oix(scalar)) == values(t.ix(2)));
  // A mask over every axis and an all-false mask.
  const st::Tensor gt = t > 20;
  REQUIRE(values(t.oix(gt)) == std::vector<int64_t>{21, 22, 23, 24});
  REQUIRE(t.vix(st::zeros({4}, st::bool_)).shape() == st::Shape{0, 3, 2});
}

TEST_CASE("indexing: index tensors that are strided views", "[diff][index]") {
  // The range check reads an index tensor through its layout: transposed,
  // flipped and step-sliced views must index like contiguous copies of them.
  const st::Tensor t = t432();
  const st::Tensor base = i64s({3, 0, 2, 1, 3, 2, 0, 1}, {2, 4});
  const std::vector<st::Tensor> views{base.transpose(0, 1), base.ix(st::slice(1, -3, -1)),
                                      base.ix(st::all, st::slice(1, 4, 2))};
  for (const st::Tensor& view : views) {
    INFO("index view of shape " << view.shape());
    const st::Tensor copy = i64s(values(view), view.shape());
    REQUIRE(values(t.vix(view)) == values(t.vix(copy)));
    REQUIRE(values(t.oix(view)) == values(t.oix(copy)));
  }
  // A negative entry, or one out of range, read last (the transpose's last
  // element is base's): found by the scan, normalised or named by its entry.
  const st::Tensor neg = i64s({0, 1, 2, 3, 3, 2, 1, -1}, {2, 4}).transpose(0, 1);
  REQUIRE(values(t.vix(neg)) == values(t.vix(i64s({0, 3, 1, 2, 2, 1, 3, 3}, {4, 2}))));
  const st::Tensor bad = i64s({0, 1, 2, 3, 3, 2, 1, 4}, {2, 4}).transpose(0, 1);
  REQUIRE_THROWS_AS(t.vix(bad), st::IndexError);
  REQUIRE_THROWS_WITH(t.vix(bad), Catch::Matchers::Contains("index 4 (entry 7") &&
                                      Catch::Matchers::Contains("axis 0 with size 4"));
  // Every 2nd entry from 1: the bad 4 is the view's last entry, while the
  // first four stored from the view's offset (1, 2, 3, 0) are all in range.
  const st::Tensor stepped = i64s({0, 1, 2, 3, 0, 1, 2, 4}).ix(st::slice(1, 8, 2));
  REQUIRE_THROWS_MATCHES(
      t.vix(stepped), st::IndexError,
      Catch::Matchers::Message("vix: index 4 (entry 3 of the index tensor of shape [4]) is out "
                               "of range for axis 0 with size 4"));
}

TEST_CASE("take: the positions along one axis (numpy.take)", "[diff][index]") {
  const st::Tensor t = t432();
  SECTION("the index's dims replace the axis; the same values as oix") {
    const st::Tensor rows = i64s({3, 0, 3}, {3});
    REQUIRE(st::take(t, rows, 0).shape() == st::Shape{3, 3, 2});
    REQUIRE(values(st::take(t, rows, 0)) == values(t.oix(rows)));
    const st::Tensor cols = i64s({2, 0, 1, 1}, {2, 2});
    REQUIRE(st::take(t, cols, 1).shape() == st::Shape{4, 2, 2, 2});
    REQUIRE(values(st::take(t, cols, 1)) == values(t.oix(st::all, cols)));
    REQUIRE(values(t.take(cols, 1)) == values(st::take(t, cols, 1)));
  }
  SECTION("negative axes and entries count from the end; i32 positions") {
    const st::Tensor neg = st::from_vector(std::vector<int32_t>{-1, 0, 1});
    REQUIRE(values(st::take(t, neg, -1)) == values(t.oix(st::all, st::all, neg)));
    REQUIRE(values(st::take(t, neg, -1).ix(0, 0)) == std::vector<int64_t>{2, 1, 2});
  }
  SECTION("a 0-d index removes its axis; an empty index empties it") {
    const st::Tensor scalar = st::from_vector(std::vector<int64_t>{2}, {});
    REQUIRE(st::take(t, scalar, 0).shape() == st::Shape{3, 2});
    REQUIRE(values(st::take(t, scalar, 0)) == values(t.ix(2)));
    REQUIRE(st::take(t, st::from_vector(std::vector<int64_t>{}), 2).shape() == st::Shape{4, 3, 0});
  }
  SECTION("errors are index_select's") {
    using Catch::Matchers::Contains;
    REQUIRE_THROWS_AS(st::take(t, i64s({0, 4}), 0), st::IndexError);
    REQUIRE_THROWS_WITH(st::take(t, i64s({0, 4}), 0),
                        Contains("index_select") && Contains("index 4"));
    REQUIRE_THROWS_AS(st::take(t, i64s({0}), 3), st::IndexError);
    REQUIRE_THROWS_AS(st::take(t, st::from_vector(std::vector<float>{0}), 0), st::DTypeError);
    REQUIRE_THROWS_AS(st::take(st::full({}, 1.0), i64s({0}), 0), st::IndexError);
  }
}

TEST_CASE("indexing errors name the axis, its size and the offending value", "[diff][index]") {
  const st::Tensor t = t432();
  using Catch::Matchers::Contains;
  SECTION("out of range integers and index entries") {
    REQUIRE_THROWS_MATCHES(
        t.ix(4), st::IndexError,
        Catch::Matchers::Message("ix: index 4 is out of range for axis 0 with size 4"));
    REQUIRE_THROWS_AS(t.ix(0, -4), st::IndexError);
    REQUIRE_THROWS_WITH(t.ix(0, -4), Contains("index -4") && Contains("axis 1 with size 3"));
    REQUIRE_THROWS_WITH(t.oix(st::all, st::all, i64s({0, 1, 2})),
                        Contains("index 2 (entry 2") && Contains("axis 2 with size 2"));
    REQUIRE_THROWS_AS(t.oix(st::all, st::all, i64s({0, 1, 2})), st::IndexError);
    REQUIRE_THROWS_WITH(t.vix(i64s({-5})), Contains("index -5") && Contains("axis 0 with size 4"));
    REQUIRE_THROWS_AS(t.vix(st::all, i64s({0, 3}, {1, 2})), st::IndexError);
  }
  SECTION("too many indices and two ellipses") {
    REQUIRE_THROWS_AS(t.ix(0, 0, 0, 0), st::IndexError);
    REQUIRE_THROWS_WITH(t.ix(0, 0, 0, 0), Contains("too many indices") && Contains("[4, 3, 2]"));
    REQUIRE_THROWS_AS(t.oix(st::all, bools({true, false, true, true, true, false}, {3, 2}), 0),
                      st::IndexError);
    REQUIRE_THROWS_AS(t.ix(st::ellipsis, 0, st::ellipsis), st::IndexError);
    REQUIRE_THROWS_WITH(t.ix(st::ellipsis, 0, st::ellipsis),
                        Contains("only one ellipsis") && Contains("entries 0 and 2"));
  }
  SECTION("bad index tensors") {
    REQUIRE_THROWS_AS(t.oix(st::from_vector(std::vector<float>{0, 1})), st::DTypeError);
    REQUIRE_THROWS_WITH(t.vix(st::from_vector(std::vector<double>{0})),
                        Contains("dtype f64") && Contains("i32 or i64"));
    REQUIRE_THROWS_AS(t.ix(i64s({0})), st::IndexError);
    REQUIRE_THROWS_WITH(t.ix(i64s({0})), Contains("use oix or vix"));
    REQUIRE_THROWS_AS(t.oix(st::Tensor()), st::ValueError);
  }
  SECTION("index tensors that do not broadcast together") {
    REQUIRE_THROWS_AS(t.vix(i64s({0, 1}), i64s({0, 1, 2})), st::IndexError);
    REQUIRE_THROWS_WITH(t.vix(i64s({0, 1}), i64s({0, 1, 2})),
                        Contains("[2], [3]") && Contains("do not broadcast"));
    // The same indices are fine for outer indexing.
    REQUIRE(t.oix(i64s({0, 1}), i64s({0, 1, 2})).shape() == st::Shape{2, 3, 2});
  }
  SECTION("a mask whose shape does not match the axes it covers") {
    REQUIRE_THROWS_AS(t.oix(bools({true, false, true}, {3})), st::IndexError);
    REQUIRE_THROWS_WITH(t.oix(bools({true, false, true}, {3})),
                        Contains("axis 0 has size 4 but the mask has 3"));
    REQUIRE_THROWS_WITH(t.vix(st::all, bools({true, false, true, false, true, true}, {3, 2, 1})),
                        Contains("too many indices"));
    REQUIRE_THROWS_WITH(t.oix(st::all, bools({true, false, true, false, true, true}, {2, 3})),
                        Contains("axis 1 has size 3 but the mask has 2"));
  }
  SECTION("a zero slice step") { REQUIRE_THROWS_AS(t.ix(st::slice(0, 2, 0)), st::ValueError); }
}

// --- a brute-force NumPy-semantics reference over random specs -------------------------

namespace {

/// One index entry in a form the reference reads directly.
struct RefEntry {
  enum Kind { integer, slice, all, newaxis, ellipsis, tensor, mask } kind = all;
  int64_t k = 0;
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  std::vector<int64_t> data;  // tensor entries, or mask 0/1
  std::vector<int64_t> shape;
};

st::Index to_index(const RefEntry& e) {
  switch (e.kind) {
    case RefEntry::integer:
      return st::Index(e.k);
    case RefEntry::slice:
      return st::Index(st::slice(e.start, e.stop, e.step));
    case RefEntry::all:
      return st::Index(st::all);
    case RefEntry::newaxis:
      return st::Index(st::newaxis);
    case RefEntry::ellipsis:
      return st::Index(st::ellipsis);
    case RefEntry::tensor:
      return st::Index(st::from_vector(e.data, st::Shape(e.shape.begin(), e.shape.end())));
    case RefEntry::mask: {
      std::vector<bool> b(e.data.begin(), e.data.end());
      return st::Index(st::from_vector(b, st::Shape(e.shape.begin(), e.shape.end())));
    }
  }
  return st::Index(st::all);
}

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// Python's slice.indices(size) and the resulting length.
void slice_indices(int64_t size, const RefEntry& e, int64_t& start, int64_t& len) {
  const int64_t step = e.step;
  const int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? size : size - 1;
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) return std::max(x + size, lower);
    return std::min(x, upper);
  };
  start = clamp(e.start, step > 0 ? lower : upper);
  const int64_t stop = clamp(e.stop, step > 0 ? upper : lower);
  if (step > 0)
    len = stop > start ? (stop - start + step - 1) / step : 0;
  else
    len = start > stop ? (start - stop - step - 1) / -step : 0;
}

/// An output group: some output dims and how they set source coordinates.
struct Group {
  std::vector<int64_t> dims;
  std::function<void(const int64_t* o, std::vector<int64_t>& src)> fill;
};

/// The true positions of a mask entry, unravelled over its axes.
std::vector<std::vector<int64_t>> true_coords(const RefEntry& e) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t f = 0; f < int64_t(e.data.size()); ++f) {
    if (!e.data[std::size_t(f)]) continue;
    std::vector<int64_t> c(e.shape.size());
    int64_t r = f;
    for (std::size_t d = e.shape.size(); d-- > 0;) {
      c[d] = r % e.shape[d];
      r /= e.shape[d];
    }
    out.push_back(c);
  }
  return out;
}

/// Expected shape and values of x[spec] (oix or vix semantics); nullopt when
/// the spec is invalid for vix (index shapes that do not broadcast).
std::optional<std::pair<std::vector<int64_t>, std::vector<double>>> reference(
    const std::vector<int64_t>& shape, const std::vector<double>& data, std::vector<RefEntry> spec,
    bool vectorized) {
  const int64_t ndim = int64_t(shape.size());
  int64_t consumed = 0;
  for (const RefEntry& e : spec) {
    if (e.kind == RefEntry::mask)
      consumed += int64_t(e.shape.size());
    else if (e.kind != RefEntry::newaxis && e.kind != RefEntry::ellipsis)
      consumed += 1;
  }
  // Expand the ellipsis (or append) into whole axes.
  std::vector<RefEntry> full;
  bool had_ellipsis = false;
  for (const RefEntry& e : spec) {
    if (e.kind == RefEntry::ellipsis) {
      had_ellipsis = true;
      for (int64_t i = 0; i < ndim - consumed; ++i) full.push_back(RefEntry{});
    } else {
      full.push_back(e);
    }
  }
  if (!had_ellipsis)
    for (int64_t i = 0; i < ndim - consumed; ++i) full.push_back(RefEntry{});

  std::vector<Group> groups;
  // Fancy entries of vix: (entry, first source axis, index shape).
  struct FancyRef {
    RefEntry e;
    int64_t axis;
    std::vector<int64_t> shape;
  };
  std::vector<FancyRef> fancy;
  std::vector<int64_t> fixed(std::size_t(ndim), 0);
  int64_t axis = 0;
  for (const RefEntry& e : full) {
    const int64_t a = axis;
    switch (e.kind) {
      case RefEntry::integer:
        fixed[std::size_t(a)] = e.k < 0 ? e.k + shape[std::size_t(a)] : e.k;
        ++axis;
        break;
      case RefEntry::slice: {
        int64_t start, len;
        slice_indices(shape[std::size_t(a)], e, start, len);
        const int64_t step = e.step;
        groups.push_back({{len}, [=](const int64_t* o, std::vector<int64_t>& src) {
                            src[std::size_t(a)] = start + o[0] * step;
                          }});
        ++axis;
        break;
      }
      case RefEntry::all:
        groups.push_back(
            {{shape[std::size_t(a)]},
             [=](const int64_t* o, std::vector<int64_t>& src) { src[std::size_t(a)] = o[0]; }});
        ++axis;
        break;
      case RefEntry::newaxis:
        groups.push_back({{1}, [](const int64_t*, std::vector<int64_t>&) {}});
        break;
      case RefEntry::tensor: {
        const int64_t size = shape[std::size_t(a)];
        if (vectorized) {
          fancy.push_back({e, a, e.shape});
        } else {
          groups.push_back({e.shape, [=](const int64_t* o, std::vector<int64_t>& src) {
                              int64_t f = 0;
                              for (std::size_t d = 0; d < e.shape.size(); ++d)
                                f = f * e.shape[d] + o[d];
                              const int64_t v = e.data[std::size_t(f)];
                              src[std::size_t(a)] = v < 0 ? v + size : v;
                            }});
        }
        ++axis;
        break;
      }
      case RefEntry::mask: {
        const auto coords = true_coords(e);
        if (vectorized) {
          fancy.push_back({e, a, {int64_t(coords.size())}});
        } else {
          groups.push_back(
              {{int64_t(coords.size())}, [=](const int64_t* o, std::vector<int64_t>& src) {
                 for (std::size_t d = 0; d < e.shape.size(); ++d)
                   src[std::size_t(a) + d] = coords[std::size_t(o[0])][d];
               }});
        }
        axis += int64_t(e.shape.size());
        break;
      }
      case RefEntry::ellipsis:
        break;
    }
  }
  if (!fancy.empty()) {
    // NumPy broadcasting of the index shapes.
    std::vector<int64_t> b;
    for (const FancyRef& f : fancy) {
      std::vector<int64_t> s = f.shape;
      if (s.size() > b.size()) b.insert(b.begin(), s.size() - b.size(), 1);
      s.insert(s.begin(), b.size() - s.size(), 1);
      for (std::size_t d = 0; d < b.size(); ++d) {
        if (b[d] == s[d] || s[d] == 1) continue;
        if (b[d] != 1) return std::nullopt;
        b[d] = s[d];
      }
    }
    groups.insert(groups.begin(), Group{b, [=](const int64_t* o, std::vector<int64_t>& src) {
                                          for (const FancyRef& f : fancy) {
                                            // Broadcast read: right-aligned, size-1 dims read 0.
                                            const std::size_t lead = b.size() - f.shape.size();
                                            int64_t flat = 0;
                                            for (std::size_t d = 0; d < f.shape.size(); ++d)
                                              flat = flat * f.shape[d] +
                                                     (f.shape[d] == 1 ? 0 : o[lead + d]);
                                            if (f.e.kind == RefEntry::tensor) {
                                              const int64_t size = shape[std::size_t(f.axis)];
                                              const int64_t v = f.e.data[std::size_t(flat)];
                                              src[std::size_t(f.axis)] = v < 0 ? v + size : v;
                                            } else {
                                              const auto c = true_coords(f.e)[std::size_t(flat)];
                                              for (std::size_t d = 0; d < c.size(); ++d)
                                                src[std::size_t(f.axis) + d] = c[d];
                                            }
                                          }
                                        }});
  }
  std::vector<int64_t> out_shape;
  for (const Group& g : groups) out_shape.insert(out_shape.end(), g.dims.begin(), g.dims.end());
  std::vector<double> out;
  const int64_t n = product(out_shape);
  std::vector<int64_t> o(out_shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t r = flat;
    for (std::size_t d = out_shape.size(); d-- > 0;) {
      o[d] = r % out_shape[d];
      r /= out_shape[d];
    }
    std::vector<int64_t> src = fixed;
    std::size_t at = 0;
    for (const Group& g : groups) {
      g.fill(o.data() + at, src);
      at += g.dims.size();
    }
    int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + src[d];
    out.push_back(data[std::size_t(off)]);
  }
  return std::make_pair(out_shape, out);
}

/// A random spec for `shape`: basic entries only, or fancy ones too.
std::vector<RefEntry> random_spec(const std::vector<int64_t>& shape, bool fancy,
                                  std::mt19937& rng) {
  const int64_t ndim = int64_t(shape.size());
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<RefEntry> spec;
  bool ellipsis = false;
  int64_t axis = 0;
  // After an ellipsis the entries must cover the rest exactly, so that the
  // ellipsis expands to the axes it jumped over.
  while (axis < ndim && (ellipsis || uni(0, 5) > 0)) {
    const int64_t size = shape[std::size_t(axis)];
    const int64_t kind = uni(0, fancy ? 8 : 5);
    RefEntry e;
    if (kind == 0) {
      e.kind = RefEntry::integer;
      e.k = uni(-size, size - 1);
      ++axis;
    } else if (kind == 1 || kind == 2) {
      e.kind = RefEntry::slice;
      auto bound = [&]() -> std::optional<int64_t> {
        if (uni(0, 2) == 0) return std::nullopt;
        return uni(-size - 2, size + 2);
      };
      e.start = bound();
      e.stop = bound();
      e.step = uni(0, 1) ? uni(1, 3) : -uni(1, 3);
      ++axis;
    } else if (kind == 3) {
      e.kind = RefEntry::newaxis;
    } else if (kind == 4) {
      if (ellipsis) continue;
      ellipsis = true;
      e.kind = RefEntry::ellipsis;
      // Jump ahead: the ellipsis covers the axes the remaining entries leave.
      axis += uni(0, ndim - axis);
    } else if (kind == 5) {
      e.kind = RefEntry::all;
      ++axis;
    } else if (kind <= 7) {
      e.kind = RefEntry::tensor;
      const int64_t rank = uni(0, 2);
      for (int64_t d = 0; d < rank; ++d) e.shape.push_back(uni(1, 3));
      for (int64_t j = 0; j < product(e.shape); ++j) e.data.push_back(uni(-size, size - 1));
      ++axis;
    } else {
      e.kind = RefEntry::mask;
      const int64_t k = uni(0, std::min<int64_t>(2, ndim - axis));
      for (int64_t d = 0; d < k; ++d) e.shape.push_back(shape[std::size_t(axis + d)]);
      for (int64_t j = 0; j < product(e.shape); ++j) e.data.push_back(uni(0, 2) > 0);
      axis += k;
    }
    spec.push_back(e);
  }
  return spec;
}

}  // namespace

TEST_CASE("indexing agrees with a brute-force NumPy-semantics reference", "[diff][index]") {
  std::mt19937 rng(20261129);
  int checked_basic = 0, checked_outer = 0, checked_vector = 0, rejected = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<int64_t> shape;
    const int64_t rank = std::uniform_int_distribution<int64_t>(1, 4)(rng);
    for (int64_t d = 0; d < rank; ++d)
      shape.push_back(std::uniform_int_distribution<int64_t>(1, 4)(rng));
    const st::Shape s(shape.begin(), shape.end());
    const st::Tensor x = st::randn(s, uint64_t(trial), st::f64);
    const std::vector<double> data = x.to_vector<double>();
    const int mode = trial % 3;  // basic, outer, vectorized
    const std::vector<RefEntry> spec = random_spec(shape, mode != 0, rng);
    std::vector<st::Index> index;
    for (const RefEntry& e : spec) index.push_back(to_index(e));
    const auto expected = reference(shape, data, spec, mode == 2);
    INFO("trial " << trial << " mode " << mode << " shape " << s);
    if (!expected) {
      REQUIRE_THROWS_AS(x.vix(index), st::IndexError);
      ++rejected;
      continue;
    }
    const st::Tensor y = mode == 0 ? x.ix(index) : mode == 1 ? x.oix(index) : x.vix(index);
    REQUIRE(y.shape() == st::Shape(expected->first.begin(), expected->first.end()));
    REQUIRE(y.to_vector<double>() == expected->second);
    if (mode == 0) {
      REQUIRE(shares_storage(y, x));
      // Basic specs give the same result through oix and vix.
      REQUIRE(x.oix(index).to_vector<double>() == expected->second);
      REQUIRE(x.vix(index).to_vector<double>() == expected->second);
      ++checked_basic;
    } else {
      (mode == 1 ? checked_outer : checked_vector)++;
    }
  }
  // The generator reaches every mode (and some vix rejections).
  CHECK(checked_basic > 150);
  CHECK(checked_outer > 150);
  CHECK(checked_vector > 100);
  CHECK(rejected > 0);
}
