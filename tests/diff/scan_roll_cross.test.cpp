// SPDX-License-Identifier: MIT
// Values of cumsum, cumprod (diff/scan.hpp), roll (diff/roll.hpp), cross
// (diff/cross.hpp) and concat/stack's default axis on plain tensors, against
// naive f64 loops written here, on contiguous, transposed and strided inputs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

namespace st = strata;

namespace {

using Vec = std::vector<double>;

/// Running sum or product of v's rows (v is [rows, cols] row-major) along axis 1, or along
/// axis 0 when `down`.
Vec running(const Vec& v, int64_t rows, int64_t cols, bool down, bool product) {
  Vec out(v.size());
  const int64_t outer = down ? cols : rows, inner = down ? rows : cols;
  for (int64_t o = 0; o < outer; ++o) {
    double acc = product ? 1.0 : 0.0;
    for (int64_t i = 0; i < inner; ++i) {
      const std::size_t at = std::size_t(down ? i * cols + o : o * cols + i);
      acc = product ? acc * v[at] : acc + v[at];
      out[at] = acc;
    }
  }
  return out;
}

void require_values(const st::Tensor& got, const Vec& want, double tol = 1e-12) {
  const Vec g = got.to(st::f64).to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}

}  // namespace

TEST_CASE("cumsum and cumprod along an axis", "[diff][scan]") {
  // Lengths around the short / long switch (16), odd ones at every level of the recursion.
  for (int64_t n : {1, 2, 3, 5, 16, 17, 31, 33, 64, 100}) {
    INFO("n = " << n);
    const st::Tensor x = st::rand({3, n}, uint64_t(n), st::f64) + 0.5;
    const Vec xv = x.to_vector<double>();
    require_values(st::cumsum(x, 1), running(xv, 3, n, false, false));
    require_values(st::cumprod(x, -1), running(xv, 3, n, false, true));
    require_values(st::cumsum(x, 0), running(xv, 3, n, true, false));
    require_values(x.cumprod(0), running(xv, 3, n, true, true));
    // A transposed input: the scan runs along its axis 0, which is x's axis 1.
    require_values(st::cumsum(x.transpose(0, 1), 0).transpose(0, 1),
                   running(xv, 3, n, false, false));
  }
}

TEST_CASE("cumsum and cumprod: flattened, strided, dtypes, zeros", "[diff][scan]") {
  const st::Tensor x = st::randn({4, 5}, 7, st::f64);
  const Vec xv = x.to_vector<double>();
  require_values(st::cumsum(x), running(xv, 1, 20, false, false));  // numpy's axis=None
  CHECK(st::cumsum(x).shape() == st::Shape{20});
  CHECK(x.cumprod().shape() == st::Shape{20});
  // Every second column of a wider matrix (a strided view), and a reversed one.
  const st::Tensor wide = st::randn({4, 40}, 8, st::f64);
  const st::Tensor cols = wide.ix(st::all, st::slice(st::none, st::none, 2));
  require_values(st::cumprod(cols * 0.1 + 1.0, 1),
                 running((cols * 0.1 + 1.0).to_vector<double>(), 4, 20, false, true));
  const st::Tensor back = wide.ix(st::all, st::slice(st::none, st::none, -1));
  require_values(st::cumsum(back, 1), running(back.to_vector<double>(), 4, 40, false, false));
  // Integers stay integers, bools count as i64 (numpy.cumsum of a mask).
  const st::Tensor i = st::arange(1, 7);
  CHECK(st::cumsum(i).dtype() == st::i64);
  CHECK(st::cumprod(i).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 6, 24, 120, 720});
  const st::Tensor mask = st::from_vector(std::vector<bool>{true, false, true, true});
  CHECK(st::cumsum(mask).dtype() == st::i64);
  CHECK(st::cumsum(mask).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 2, 3});
  // A zero stops the running product, exactly.
  const st::Tensor z = st::from_vector(Vec{2, 3, 0, 5, -1});
  CHECK(st::cumprod(z).to_vector<double>() == Vec{2, 6, 0, 0, 0});
  // Empty and one-element axes.
  CHECK(st::cumsum(st::zeros({3, 0}, st::f64), 1).shape() == st::Shape{3, 0});
  CHECK(st::cumprod(st::full({1}, 4.0, st::f64)).item<double>() == 4.0);
}

TEST_CASE("cumsum and cumprod: bad axes", "[diff][scan]") {
  const st::Tensor x = st::zeros({2, 3}, st::f64);
  CHECK_THROWS_AS(st::cumsum(x, 2), st::IndexError);
  CHECK_THROWS_AS(st::cumprod(x, -3), st::IndexError);
  CHECK_THROWS_AS(st::cumsum(st::zeros({}, st::f64), 0), st::IndexError);
  CHECK(st::cumsum(st::full({}, 2.0, st::f64)).shape() == st::Shape{1});  // flattened, as numpy
}

TEST_CASE("roll", "[diff][roll]") {
  const st::Tensor v = st::arange(0, 5, 1, st::f64);
  CHECK(st::roll(v, 1).to_vector<double>() == Vec{4, 0, 1, 2, 3});
  CHECK(st::roll(v, -2).to_vector<double>() == Vec{2, 3, 4, 0, 1});
  CHECK(st::roll(v, 7).to_vector<double>() == Vec{3, 4, 0, 1, 2});  // 7 mod 5
  CHECK(st::roll(v, -5).to_vector<double>() == v.to_vector<double>());
  // Against the definition y[i] = x[(i - shift) mod n], along each axis of a transposed input.
  const st::Tensor m = st::randn({4, 3}, 11, st::f64).transpose(0, 1);  // [3, 4], strided
  const Vec mv = m.to_vector<double>();
  for (int64_t shift : {-5, -1, 0, 2, 9}) {
    INFO("shift " << shift);
    Vec along1(12), along0(12), flat(12);
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t c = 0; c < 4; ++c) {
        const int64_t c_from = (((c - shift) % 4) + 4) % 4, r_from = (((r - shift) % 3) + 3) % 3;
        along1[std::size_t(r * 4 + c)] = mv[std::size_t(r * 4 + c_from)];
        along0[std::size_t(r * 4 + c)] = mv[std::size_t(r_from * 4 + c)];
        const int64_t i = r * 4 + c, from = (((i - shift) % 12) + 12) % 12;
        flat[std::size_t(i)] = mv[std::size_t(from)];
      }
    }
    require_values(st::roll(m, shift, 1), along1);
    require_values(m.roll(shift, -2), along0);
    require_values(st::roll(m, shift), flat);
    CHECK(st::roll(m, shift).shape() == m.shape());
  }
  CHECK_THROWS_AS(st::roll(m, 1, 2), st::IndexError);
  CHECK(st::roll(st::zeros({0}, st::f64), 3, 0).shape() == st::Shape{0});
}

TEST_CASE("cross", "[diff][cross]") {
  const st::Tensor a = st::randn({5, 3}, 21, st::f64), b = st::randn({5, 3}, 22, st::f64);
  const Vec av = a.to_vector<double>(), bv = b.to_vector<double>();
  Vec want(15);
  for (std::size_t r = 0; r < 5; ++r) {
    const double* x = &av[3 * r];
    const double* y = &bv[3 * r];
    want[3 * r + 0] = x[1] * y[2] - x[2] * y[1];
    want[3 * r + 1] = x[2] * y[0] - x[0] * y[2];
    want[3 * r + 2] = x[0] * y[1] - x[1] * y[0];
  }
  require_values(st::cross(a, b), want);
  // Vectors as columns (axis 0) of transposed operands give the transposed result.
  require_values(st::cross(a.transpose(0, 1), b.transpose(0, 1), 0).transpose(0, 1), want);
  // Broadcasting one vector against many, and a C++-typed mix of dtypes.
  const st::Tensor e3 = st::from_vector(Vec{0, 0, 1});
  const st::Tensor e1 = st::from_vector(Vec{1, 0, 0}), e2 = st::from_vector(Vec{0, 1, 0});
  CHECK(st::cross(e1, e2).to_vector<double>() == Vec{0, 0, 1});
  CHECK(st::cross(e2, e1).to_vector<double>() == Vec{0, 0, -1});
  CHECK(st::cross(st::stack({e1, e2}), e3).to_vector<double>() == Vec{0, -1, 0, 1, 0, 0});
  CHECK(st::cross(e1.to(st::f32), e2).dtype() == st::f64);
  CHECK_THROWS_AS(st::cross(st::zeros({4}, st::f64), st::zeros({4}, st::f64)), st::ShapeError);
  CHECK_THROWS_AS(st::cross(st::zeros({2, 3}, st::f64), st::zeros({4, 3}, st::f64)),
                  st::ShapeError);
  CHECK_THROWS_AS(st::cross(a, b, 2), st::IndexError);
}

TEST_CASE("concat and stack join along axis 0 by default", "[diff][movement]") {
  const st::Tensor a = st::randn({2, 3}, 31, st::f64), b = st::randn({4, 3}, 32, st::f64);
  CHECK(st::concat({a, b}).shape() == st::Shape{6, 3});
  CHECK(st::concat(std::vector<st::Tensor>{a, b}).to_vector<double>() ==
        st::concat({a, b}, 0).to_vector<double>());
  CHECK(st::stack({a, a}).shape() == st::Shape{2, 2, 3});
  CHECK(st::stack(std::vector<st::Tensor>{a, a, a}).shape() == st::Shape{3, 2, 3});
  // The spellings with an axis are unchanged.
  CHECK(st::concat({a, a}, 1).shape() == st::Shape{2, 6});
  CHECK(st::stack({a, a}, -1).shape() == st::Shape{2, 3, 2});
}
