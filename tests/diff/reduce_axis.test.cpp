// SPDX-License-Identifier: MIT
// Tests for the one-axis reductions of diff/reductions.hpp and
// diff/statistics.hpp and their Ops methods
// (st::sum(x, 1), st::logsumexp(x, -1, true), x.mean(-2)): every reduction over
// every axis, negative ones included, against naive f64 loops over the slices
// written here, and identical to the same call with a one-element list {axis}.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;
using Catch::Matchers::Contains;

namespace {

/// f applied to every 1-D slice of the row-major [d0, d1, d2] values `v`
/// along `axis` (in 0..2); the results in row-major order of the other axes.
Vec along(const Vec& v, const std::vector<int64_t>& dims, int64_t axis,
          const std::function<double(const Vec&)>& f) {
  const int64_t strides[3] = {dims[1] * dims[2], dims[2], 1};
  Vec out;
  int64_t idx[3];
  for (idx[0] = 0; idx[0] < (axis == 0 ? 1 : dims[0]); ++idx[0]) {
    for (idx[1] = 0; idx[1] < (axis == 1 ? 1 : dims[1]); ++idx[1]) {
      for (idx[2] = 0; idx[2] < (axis == 2 ? 1 : dims[2]); ++idx[2]) {
        Vec slice;
        for (int64_t k = 0; k < dims[std::size_t(axis)]; ++k) {
          int64_t at = 0;
          for (int64_t d = 0; d < 3; ++d) at += (d == axis ? k : idx[d]) * strides[d];
          slice.push_back(v[std::size_t(at)]);
        }
        out.push_back(f(slice));
      }
    }
  }
  return out;
}

double ref_sum(const Vec& s) {
  double a = 0;
  for (double x : s) a += x;
  return a;
}
double ref_mean(const Vec& s) { return ref_sum(s) / double(s.size()); }
double ref_max(const Vec& s) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : s) m = std::max(m, x);
  return m;
}
double ref_min(const Vec& s) {
  double m = std::numeric_limits<double>::infinity();
  for (double x : s) m = std::min(m, x);
  return m;
}
double ref_var(const Vec& s) {
  const double mu = ref_mean(s);
  double a = 0;
  for (double x : s) a += (x - mu) * (x - mu);
  return a / double(s.size());
}
double ref_std(const Vec& s) { return std::sqrt(ref_var(s)); }
double ref_norm(const Vec& s) {
  double a = 0;
  for (double x : s) a += x * x;
  return std::sqrt(a);
}
double ref_logsumexp(const Vec& s) {
  const double m = ref_max(s);
  double a = 0;
  for (double x : s) a += std::exp(x - m);
  return m + std::log(a);
}
/// Index of the first maximum (minimum).
double ref_argmax(const Vec& s) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < s.size(); ++i)
    if (s[i] > s[best]) best = i;
  return double(best);
}
double ref_argmin(const Vec& s) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < s.size(); ++i)
    if (s[i] < s[best]) best = i;
  return double(best);
}

/// The shape of a [3, 4, 5] tensor reduced over `axis` (in 0..2).
st::Shape reduced_shape(int64_t axis, bool keepdims) {
  const int64_t dims[3] = {3, 4, 5};
  st::Shape s;
  for (int64_t d = 0; d < 3; ++d) {
    if (d != axis) {
      s.push_back(dims[d]);
    } else if (keepdims) {
      s.push_back(1);
    }
  }
  return s;
}

void require_close(const st::Tensor& got, const st::Shape& shape, const Vec& want, double tol) {
  REQUIRE(got.shape() == shape);
  const Vec v = got.to_vector<double>();
  REQUIRE(v.size() == want.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": " << v[i] << " vs " << want[i]);
    CHECK(std::fabs(v[i] - want[i]) <= tol * (1 + std::fabs(want[i])));
  }
}

/// Same shape and dtype (required) and bits (checked).
void check_same(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  CHECK(a.to_vector<double>() == b.to_vector<double>());
}

/// Whether st::sum(x, a) and x.sum(a) compile for an `a` of type A.
template <class A>
concept SumTakes = requires(const st::Tensor& t, A a) {
  st::sum(t, a);
};
template <class A>
concept MethodSumTakes = requires(const st::Tensor& t, A a) {
  t.sum(a);
};

}  // namespace

TEST_CASE("reduce_axis: every reduction over one integer axis", "[diff]") {
  const std::vector<int64_t> dims{3, 4, 5};
  const Vec xv = random_values(60, 7);
  const st::Tensor x = st::from_vector(xv, {3, 4, 5});
  struct Case {
    const char* name;
    std::function<st::Tensor(const st::Tensor&, int, bool)> by_int;
    std::function<st::Tensor(const st::Tensor&, const st::Shape&, bool)> by_list;
    std::function<st::Tensor(const st::Tensor&, int64_t, bool)> by_method;
    double (*ref)(const Vec&);
  };
  const std::vector<Case> cases{
      {"sum", [](auto& t, int a, bool k) { return st::sum(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::sum(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.sum(a, k); }, ref_sum},
      {"mean", [](auto& t, int a, bool k) { return st::mean(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::mean(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.mean(a, k); }, ref_mean},
      {"max", [](auto& t, int a, bool k) { return st::max(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::max(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.max(a, k); }, ref_max},
      {"min", [](auto& t, int a, bool k) { return st::min(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::min(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.min(a, k); }, ref_min},
      {"var", [](auto& t, int a, bool k) { return st::var(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::var(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.var(a, k); }, ref_var},
      {"std", [](auto& t, int a, bool k) { return st::std(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::std(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.std(a, k); }, ref_std},
      {"norm", [](auto& t, int a, bool k) { return st::norm(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::norm(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.norm(a, k); }, ref_norm},
      {"logsumexp", [](auto& t, int a, bool k) { return st::logsumexp(t, a, k); },
       [](auto& t, auto& a, bool k) { return st::logsumexp(t, a, k); },
       [](auto& t, int64_t a, bool k) { return t.logsumexp(a, k); }, ref_logsumexp},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      for (int axis = -3; axis < 3; ++axis) {
        for (bool keep : {false, true}) {
          INFO(c.name << " axis " << axis << " keepdims " << keep);
          const int64_t a = axis < 0 ? axis + 3 : axis;
          const st::Tensor got = c.by_int(x, axis, keep);
          require_close(got, reduced_shape(a, keep), along(xv, dims, a, c.ref), 1e-13);
          check_same(got, c.by_list(x, {axis}, keep));
          check_same(got, c.by_method(x, axis, keep));
        }
      }
    }
  }
}

TEST_CASE("reduce_axis: spellings", "[diff]") {
  const Vec xv = random_values(60, 11);
  const st::Tensor x = st::from_vector(xv, {3, 4, 5});
  SECTION("keepdims defaults to false") {
    check_same(st::sum(x, 1), st::sum(x, 1, false));
    check_same(x.logsumexp(-1), st::logsumexp(x, -1, false));
    CHECK(st::mean(x, -1).shape() == st::Shape{3, 4});
  }
  SECTION("any integer type names an axis") {
    const int64_t a64 = -2;
    const unsigned au = 2;
    const short as = 0;
    check_same(st::sum(x, a64), st::sum(x, {1}));
    check_same(st::max(x, au), st::max(x, {2}));
    check_same(x.min(as, true), st::min(x, {0}, true));
  }
  SECTION("braced lists keep meaning a list of axes") {
    // {} is still "every axis", not axis 0; {1} and {0, 2} are lists.
    CHECK(st::sum(x, {}).shape() == st::Shape{});
    CHECK(st::sum(x, {}, true).shape() == st::Shape{1, 1, 1});
    CHECK(x.sum({}).shape() == st::Shape{});
    check_same(st::sum(x, {1}), st::sum(x, 1));
    CHECK(st::sum(x, {0, 2}).shape() == st::Shape{4});
    // A bool is a keepdims flag, never an axis: st::sum(x, true) does not compile.
    STATIC_REQUIRE(!SumTakes<bool>);
    STATIC_REQUIRE(!MethodSumTakes<bool>);
    STATIC_REQUIRE(SumTakes<int>);
    STATIC_REQUIRE(MethodSumTakes<long>);
  }
  SECTION("integer tensors") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{1, -2, 3, 4, 5, -6}, {2, 3});
    const st::Tensor s = st::sum(i, 1);
    CHECK(s.dtype() == st::i64);
    CHECK(s.to_vector<int64_t>() == std::vector<int64_t>{2, 3});
    const st::Tensor m = i.mean(-2);
    CHECK(m.dtype() == st::f32);
    CHECK(m.to_vector<double>() == Vec{2.5, 1.5, -1.5});
  }
  SECTION("argmax and argmin as methods") {
    const std::vector<int64_t> dims{3, 4, 5};
    for (int axis = -3; axis < 3; ++axis) {
      const int64_t a = axis < 0 ? axis + 3 : axis;
      for (bool keep : {false, true}) {
        const st::Tensor am = x.argmax(axis, keep);
        CHECK(am.dtype() == st::i64);
        require_close(am, reduced_shape(a, keep), along(xv, dims, a, ref_argmax), 0);
        check_same(am, st::argmax(x, axis, keep));
        require_close(x.argmin(axis, keep), reduced_shape(a, keep), along(xv, dims, a, ref_argmin),
                      0);
      }
    }
  }
  SECTION("norm over a list of axes") {
    Vec sq(3, 0.0);
    for (std::size_t i = 0; i < xv.size(); ++i) sq[i / 20] += xv[i] * xv[i];
    require_close(st::norm(x, {1, 2}), {3}, {std::sqrt(sq[0]), std::sqrt(sq[1]), std::sqrt(sq[2])},
                  1e-13);
    check_same(st::norm(x, st::Shape{}), st::norm(x));
  }
}

TEST_CASE("reduce_axis: derivatives through an integer axis", "[diff]") {
  const Vec xv = random_values(12, 5);
  const st::Tensor x = st::from_vector(xv, {3, 4});
  // d/dx sum(logsumexp(x, -1)) is softmax along the last axis: e^x / row sums.
  const st::Tensor g = st::grad([](const auto& t) { return st::sum(st::logsumexp(t, -1)); }, x);
  Vec want(12);
  for (std::size_t r = 0; r < 3; ++r) {
    double z = 0;
    for (std::size_t c = 0; c < 4; ++c) z += std::exp(xv[r * 4 + c]);
    for (std::size_t c = 0; c < 4; ++c) want[r * 4 + c] = std::exp(xv[r * 4 + c]) / z;
  }
  require_close(g, {3, 4}, want, 1e-13);
  // d/dx sum(x.mean(0)^2) = 2 mean_col / 3, through the method at the Reverse level.
  const st::Tensor h = st::grad(
      [](const auto& t) {
        const auto m = t.mean(0);
        return st::sum(m * m);
      },
      x);
  Vec want_h(12);
  for (std::size_t c = 0; c < 4; ++c) {
    const double mu = (xv[c] + xv[4 + c] + xv[8 + c]) / 3;
    for (std::size_t r = 0; r < 3; ++r) want_h[r * 4 + c] = 2 * mu / 3;
  }
  require_close(h, {3, 4}, want_h, 1e-13);
}

TEST_CASE("reduce_axis: bad axes", "[diff]") {
  const st::Tensor x = st::from_vector(random_values(6, 3), {2, 3});
  CHECK_THROWS_WITH(st::sum(x, 2), Contains("sum") && Contains("2"));
  CHECK_THROWS_AS(st::sum(x, 2), st::IndexError);
  CHECK_THROWS_AS(st::sum(x, -3), st::IndexError);
  CHECK_THROWS_AS(x.mean(5), st::IndexError);
  CHECK_THROWS_WITH(x.mean(5), Contains("mean"));
  CHECK_THROWS_AS(st::logsumexp(x, -4, true), st::IndexError);
  CHECK_THROWS_AS(st::norm(x, 2), st::IndexError);
  CHECK_THROWS_AS(x.argmax(3), st::IndexError);
  // A rank-0 tensor has no axis 0 (as in NumPy), but reduces over the empty list.
  const st::Tensor s = st::from_vector(Vec{2.5}, {});
  CHECK_THROWS_AS(st::sum(s, 0), st::IndexError);
  CHECK_THROWS_AS(st::max(s, -1), st::IndexError);
  CHECK(st::sum(s).item<double>() == 2.5);
}
