// SPDX-License-Identifier: MIT
// Values of the packed-triangle ops (diff/triangle.hpp) on plain tensors:
// tril_indices / triu_indices against NumPy's documented outputs, pack and
// unpack against loops over the matrix, on square, rectangular, batched and
// transposed inputs, and their bad inputs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

namespace st = strata;

namespace {
using I64 = std::vector<int64_t>;
using Vec = std::vector<double>;
}  // namespace

TEST_CASE("tril_indices and triu_indices are NumPy's", "[diff][triangle]") {
  // numpy.tril_indices(3) and numpy.triu_indices(4, 1), printed by NumPy 1.24.
  auto [r, c] = st::tril_indices(3);
  CHECK(r.to_vector<int64_t>() == I64{0, 1, 1, 2, 2, 2});
  CHECK(c.to_vector<int64_t>() == I64{0, 0, 1, 0, 1, 2});
  auto [ur, uc] = st::triu_indices(4, 1);
  CHECK(ur.to_vector<int64_t>() == I64{0, 0, 0, 1, 1, 2});
  CHECK(uc.to_vector<int64_t>() == I64{1, 2, 3, 2, 3, 3});
  CHECK(r.dtype() == st::i64);
  // numpy.tril_indices(3, -1, 4) and numpy.triu_indices(2, -1, 3) (rectangular, offset).
  auto [rr, rc] = st::tril_indices(3, -1, 4);
  CHECK(rr.to_vector<int64_t>() == I64{1, 2, 2});
  CHECK(rc.to_vector<int64_t>() == I64{0, 0, 1});
  auto [tr, tc] = st::triu_indices(2, -1, 3);
  CHECK(tr.to_vector<int64_t>() == I64{0, 0, 0, 1, 1, 1});
  CHECK(tc.to_vector<int64_t>() == I64{0, 1, 2, 0, 1, 2});
  CHECK(st::tril_indices(0).first.shape() == st::Shape{0});
  CHECK_THROWS_AS(st::tril_indices(-1), st::ValueError);
  // The positions read the triangle with vectorized indexing.
  const st::Tensor m = st::arange(0, 9, 1, st::f64).reshape({3, 3});
  CHECK(m.vix(r, c).to_vector<double>() == Vec{0, 3, 4, 6, 7, 8});
}

TEST_CASE("tril_unpack and triu_unpack fill a triangle of zeros", "[diff][triangle]") {
  for (int64_t k : {-2, -1, 0, 1}) {
    for (int64_t cols : {3, 4, 5}) {
      INFO("k = " << k << ", m = " << cols);
      for (bool lower : {true, false}) {
        auto [r, c] = lower ? st::tril_indices(4, k, cols) : st::triu_indices(4, k, cols);
        const int64_t count = r.numel();
        const st::Tensor v = st::randn({2, count}, uint64_t(10 + k + cols), st::f64);
        const st::Tensor m =
            lower ? st::tril_unpack(v, 4, k, cols) : st::triu_unpack(v, 4, k, cols);
        REQUIRE(m.shape() == st::Shape{2, 4, cols});
        const Vec vv = v.to_vector<double>(), mv = m.to_vector<double>();
        const I64 rv = r.to_vector<int64_t>(), cv = c.to_vector<int64_t>();
        Vec want(std::size_t(2 * 4 * cols), 0.0);
        for (int64_t b = 0; b < 2; ++b) {
          for (int64_t p = 0; p < count; ++p) {
            want[std::size_t(b * 4 * cols + rv[p] * cols + cv[p])] = vv[std::size_t(b * count + p)];
          }
        }
        CHECK(mv == want);
        // Packing reads the same triangle back.
        const st::Tensor back = lower ? st::tril_pack(m, k) : st::triu_pack(m, k);
        CHECK(back.to_vector<double>() == vv);
      }
    }
  }
}

TEST_CASE("tril_pack reads transposed and strided matrices", "[diff][triangle]") {
  const st::Tensor a = st::randn({3, 5, 5}, 41, st::f64);
  const st::Tensor t = a.transpose(1, 2);  // a strided view
  const Vec packed = st::tril_pack(t, -1).to_vector<double>();
  const Vec av = a.to_vector<double>();
  Vec want;
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t i = 0; i < 5; ++i) {
      for (int64_t j = 0; j < i; ++j) want.push_back(av[std::size_t(b * 25 + j * 5 + i)]);
    }
  }
  CHECK(packed == want);
  // The strict lower triangle packed column by column (GMM's precision factors) is the strict
  // upper triangle of the transpose packed row by row.
  const st::Tensor l = st::arange(1, 7, 1, st::f64);
  const st::Tensor L = st::triu_unpack(l, 4, 1).transpose(0, 1);
  CHECK(L.to_vector<double>() == Vec{0, 0, 0, 0, 1, 0, 0, 0, 2, 4, 0, 0, 3, 5, 6, 0});
}

TEST_CASE("packed triangles: bad input", "[diff][triangle]") {
  CHECK_THROWS_AS(st::tril_unpack(st::zeros({5}, st::f64), 3), st::ShapeError);
  CHECK_THROWS_AS(st::tril_unpack(st::zeros({}, st::f64), 1), st::ShapeError);
  CHECK_THROWS_AS(st::triu_pack(st::zeros({3}, st::f64)), st::ShapeError);
  try {
    (void)st::tril_unpack(st::zeros({2, 5}, st::f64), 3);
    FAIL("no error");
  } catch (const st::ShapeError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("tril_unpack") &&
                             Catch::Matchers::Contains("has 6 elements") &&
                             Catch::Matchers::Contains("[2, 5]"));
  }
}
