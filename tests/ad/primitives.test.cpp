// SPDX-License-Identifier: MIT
// Derivative tests for every differentiable primitive of the Diffable set
// (diff/diffable.hpp, rules in ad/rules.hpp): check_grads against central
// finite differences in f64, forward and reverse mode, up to order 3 through
// nested dual types. Linear primitives are wrapped in sin so that their
// second and third derivatives are not trivially zero. Also the tie
// conventions of maximum/minimum and max (split evenly, like JAX), with
// exact values, and the self-test that shows check_grads can fail.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <strata.hpp>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::check_grads_error;
using st::testing::GradCheckOptions;
using st::testing::Modes;

namespace {

/// Standard normal f64 values of a shape, from a fixed seed.
st::Tensor normal(const st::Shape& s, uint64_t seed) { return st::randn(s, seed, st::f64); }
/// Values in [0.5, 1.5): positive and away from 0.
st::Tensor positive(const st::Shape& s, uint64_t seed) { return st::rand(s, seed, st::f64) + 0.5; }
/// Normal values pushed at least 0.3 away from 0 (for abs and division).
st::Tensor nonzero(const st::Shape& s, uint64_t seed) {
  const st::Tensor t = normal(s, seed);
  return t + st::sign(t) * 0.3;
}
st::Tensor f64s(const std::vector<double>& v, const st::Shape& s) { return st::from_vector(v, s); }
st::Tensor i64s(const std::vector<int64_t>& v, const st::Shape& s) { return st::from_vector(v, s); }

template <class X>
using prims_of = st::Prims<std::remove_cvref_t<X>>;

}  // namespace

TEST_CASE("check_grads: accepts correct derivatives and rejects wrong ones", "[ad]") {
  const st::Tensor x = normal({2, 3}, 1);
  SECTION("a correct function passes at every order and mode") {
    auto f = [](const auto& x) { return st::sum(st::tanh(x) * x); };
    const auto r = check_grads_error(f, {x}, 3);
    INFO(r.report);
    CHECK(r.ok());
    CHECK(r.checks == 2 * (2 + 4 + 8));  // (primal + derivative) per check, 14 checks
    CHECK(r.worst < 1e-2);               // finite differences far inside the tolerance
  }
  SECTION("x * stop_gradient(x) is not the derivative of x * x, in either mode") {
    // AD says d/dx = x (the second factor is a constant); the finite difference sees 2x.
    auto bad = [](const auto& x) { return x * st::stop_gradient(x); };
    for (Modes m : {Modes::fwd, Modes::rev}) {
      const auto r = check_grads_error(bad, {x}, 1, m);
      INFO(r.report);
      CHECK_FALSE(r.ok());
      CHECK(r.worst > 1e3);
    }
  }
  SECTION("a derivative right at order 1 but wrong at order 2 is caught by the recursion") {
    // Value x^2; AD's first derivative sg(x) + x = 2x is right, but its own
    // derivative by AD is 1 (stop_gradient strips every level) instead of 2.
    auto bad2 = [](const auto& x) {
      const auto s = st::stop_gradient(x);
      return s * x + (x * x - s * s) * 0.5;
    };
    for (Modes m : {Modes::fwd, Modes::rev}) {
      const auto r1 = check_grads_error(bad2, {x}, 1, m);
      INFO(r1.report);
      CHECK(r1.ok());
      const auto r2 = check_grads_error(bad2, {x}, 2, m);
      INFO(r2.report);
      CHECK_FALSE(r2.ok());
      CHECK(r2.worst > 10);
    }
  }
  SECTION("a wrong gradient of one of two arguments is caught") {
    auto bad = [](const auto& a, const auto& b) { return a * st::stop_gradient(b); };
    const auto r = check_grads_error(bad, {x, normal({2, 3}, 2)}, 1);
    INFO(r.report);
    CHECK_FALSE(r.ok());
  }
  SECTION("check_grads itself reports through Catch") {
    check_grads([](const auto& x) { return st::exp(x); }, {x}, 2);
  }
}

TEST_CASE("primitive derivatives: unary", "[ad]") {
  const st::Tensor x = normal({2, 3}, 11);
  const st::Tensor p = positive({2, 3}, 12);
  SECTION("neg") {
    check_grads([](const auto& x) { return -x * st::sin(x); }, {x}, 3);
  }
  SECTION("exp") {
    check_grads([](const auto& x) { return st::exp(x); }, {x}, 3);
  }
  SECTION("log") {
    check_grads([](const auto& x) { return st::log(x); }, {p}, 3);
  }
  SECTION("sin") {
    check_grads([](const auto& x) { return st::sin(x); }, {x}, 3);
  }
  SECTION("cos") {
    check_grads([](const auto& x) { return st::cos(x); }, {x}, 3);
  }
  SECTION("sqrt") {
    check_grads([](const auto& x) { return st::sqrt(x); }, {p}, 3);
  }
  SECTION("tanh") {
    check_grads([](const auto& x) { return st::tanh(x); }, {x}, 3);
  }
  SECTION("abs") {
    check_grads([](const auto& x) { return st::sin(st::abs(x)); }, {nonzero({2, 3}, 13)}, 3);
  }
  SECTION("sign has derivative zero") {
    const st::Tensor z = nonzero({2, 3}, 14);
    check_grads([](const auto& x) { return st::sign(x) * x; }, {z}, 2);
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::sign(x)); }, z);
    CHECK(g.to_vector<double>() == std::vector<double>(6, 0.0));
  }
}

TEST_CASE("primitive derivatives: binary", "[ad]") {
  const st::Tensor a = normal({2, 3}, 21), b = normal({2, 3}, 22);
  SECTION("add") {
    check_grads([](const auto& a, const auto& b) { return st::sin(a + b); }, {a, b}, 3);
  }
  SECTION("sub") {
    check_grads([](const auto& a, const auto& b) { return st::sin(a - b); }, {a, b}, 3);
  }
  SECTION("mul") {
    check_grads([](const auto& a, const auto& b) { return a * b; }, {a, b}, 3);
    check_grads([](const auto& a) { return a * a * a; }, {a}, 3);
  }
  SECTION("div") {
    check_grads([](const auto& a, const auto& b) { return a / b; }, {a, nonzero({2, 3}, 23)}, 3);
  }
  SECTION("pow") {
    check_grads([](const auto& a, const auto& b) { return st::pow(a, b); },
                {positive({2, 3}, 24), b}, 3);
  }
  SECTION("maximum") {
    check_grads([](const auto& a, const auto& b) { return st::sin(st::maximum(a, b)); }, {a, b}, 3);
  }
  SECTION("minimum") {
    check_grads([](const auto& a, const auto& b) { return st::sin(st::minimum(a, b)); }, {a, b}, 3);
  }
}

TEST_CASE("primitive derivatives: where", "[ad]") {
  const st::Tensor a = normal({2, 3}, 31), b = normal({2, 3}, 32);
  const st::Tensor cond = normal({2, 3}, 33) > 0.0;
  check_grads([cond](const auto& a, const auto& b) { return st::sin(st::where(cond, a, b)); },
              {a, b}, 3);
  check_grads([cond](const auto& a) { return st::sin(st::where(cond, a * a, 0.5)); }, {a}, 3);
}

TEST_CASE("primitive derivatives: reductions", "[ad]") {
  const st::Tensor x = normal({2, 3, 2}, 41);
  SECTION("sum") {
    check_grads([](const auto& x) { return st::sin(st::sum(x, {1})); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::sum(x, {0, 2}, true)); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::sum(x, {-1}, true)); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::sum(x, {-1, 0})); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::sum(x)); }, {x}, 3);
  }
  SECTION("max") {
    check_grads([](const auto& x) { return st::sin(st::max(x, {1})); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::max(x, {0, 2}, true)); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::max(x, {2}, false)); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::max(x, {-1, 0})); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::max(x, {-2}, true)); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::max(x)); }, {x}, 3);
  }
}

TEST_CASE("primitive derivatives: movement", "[ad]") {
  SECTION("permute") {
    check_grads(
        [](const auto& x) {
          return st::sin(st::permute(x, {2, 0, 1}));
        },
        {normal({2, 3, 2}, 51)}, 3);
  }
  SECTION("expand: the gradient sums back to the input shape") {
    const st::Tensor x = normal({3, 1}, 52);
    auto f = [](const auto& x) { return st::sin(st::expand(x, {2, 3, 4})); };
    check_grads(f, {x}, 3);
    auto g = st::grad([&f](const auto& x) { return st::sum(f(x)); }, x);
    CHECK(g.shape() == st::Shape{3, 1});
    // d/dx sum(sin(broadcast x)) = 8 cos(x) (2 * 4 copies of each element).
    const std::vector<double> xv = x.to_vector<double>(), gv = g.to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) CHECK(gv[i] == Approx(8 * std::cos(xv[i])).epsilon(1e-12));
    check_grads([](const auto& x) { return st::sin(st::expand(x, {3, 4})); }, {normal({4}, 53)}, 3);
  }
  SECTION("reshape") {
    const st::Tensor x = normal({2, 3}, 54);
    check_grads([](const auto& x) { return st::sin(st::reshape(x, {3, 2})); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::reshape(x, {-1})); }, {x}, 2);
    // A non-contiguous input: reshape has to copy.
    check_grads(
        [](const auto& x) {
          return st::sin(st::reshape(st::permute(x, {1, 0}), {6}));
        },
        {x}, 3);
  }
  SECTION("slice with steps and negative steps") {
    const st::Tensor x = normal({3, 5}, 55);
    check_grads([](const auto& x) { return st::sin(st::slice(x, 1, 0, 5, 2)); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::slice(x, 1, 4, std::nullopt, -2)); }, {x},
                3);
    check_grads([](const auto& x) { return st::sin(st::slice(x, 1, 3, 0, -1)); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::slice(x, 0, -2, std::nullopt, 1)); }, {x},
                2);
    check_grads([](const auto& x) { return st::sin(st::slice(x, -1, 1, 4, 1)); }, {x}, 2);
    // Slices of slices, overlapping the same elements twice.
    check_grads(
        [](const auto& x) {
          const auto s = st::slice(x, 1, std::nullopt, std::nullopt, -1);
          return st::sin(st::slice(s, 1, 1, 4, 2) * st::slice(x, 1, 0, 2, 1));
        },
        {x}, 3);
  }
  SECTION("flip") {
    const st::Tensor x = normal({2, 3}, 56);
    check_grads([](const auto& x) { return st::sin(st::flip(x, 1)) * x; }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::flip(x, 0)) * x; }, {x}, 3);
  }
  SECTION("pad") {
    const st::Tensor x = normal({2, 3}, 57);
    check_grads([](const auto& x) { return st::sin(st::pad(x, {{1, 0}, {0, 2}})); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::pad(x, {{0, 0}, {2, 1}})); }, {x}, 2);
  }
  SECTION("concat") {
    const st::Tensor a = normal({2, 3}, 58), b = normal({2, 2}, 59), c = normal({3, 2}, 62);
    check_grads(
        [](const auto& a, const auto& b) {
          return st::sin(st::concat({a, b}, 1));
        },
        {a, b}, 3);
    check_grads(
        [](const auto& a, const auto& b) {
          return st::sin(st::concat({b, a}, -1));
        },
        {a, b}, 2);
    // Three pieces, one of them a transposed view, one argument used twice.
    check_grads(
        [](const auto& a, const auto& c) {
          return st::sin(st::concat({a, st::permute(c, {1, 0}), a * 2.0}, 0));
        },
        {a, c}, 3);
  }
  SECTION("cast f64 -> f32 -> f64") {
    // The round trip through f32 limits the accuracy of both the values and
    // the derivatives: a larger step and tolerance.
    GradCheckOptions o;
    o.eps = 1e-2;
    o.tol = o.tol_higher = 2e-3;
    auto f = [](const auto& x) { return st::cast(st::sin(st::cast(x, st::f32)), st::f64) * x; };
    check_grads(f, {normal({2, 3}, 60)}, 3, Modes::both, o);
    const st::Tensor x = normal({4}, 61);
    auto [y, dy] = st::jvp([](const auto& x) { return st::cast(st::cast(x, st::f32), st::f64); }, x,
                           st::ones({4}, st::f64));
    CHECK(dy.dtype() == st::f64);
    CHECK(dy.to_vector<double>() == std::vector<double>(4, 1.0));
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::cast(x, st::f32)); }, x);
    CHECK(g.dtype() == st::f64);
    CHECK(g.to_vector<double>() == std::vector<double>(4, 1.0));
  }
}

TEST_CASE("primitive derivatives: matmul", "[ad]") {
  SECTION("plain") {
    check_grads([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                {normal({2, 3}, 71), normal({3, 2}, 72)}, 3);
  }
  SECTION("transposed operands") {
    check_grads([](const auto& a, const auto& b) { return st::matmul(st::transpose(a, 0, 1), b); },
                {normal({3, 2}, 73), normal({3, 4}, 74)}, 2);
    check_grads(
        [](const auto& a, const auto& b) { return st::sin(st::matmul(a, st::transpose(b, 0, 1))); },
        {normal({2, 3}, 75), normal({2, 3}, 76)}, 3);
  }
  SECTION("batch-broadcast operands [2,1,3,4] x [5,4,2]") {
    const st::Tensor a = normal({2, 1, 3, 4}, 77), b = normal({5, 4, 2}, 78);
    check_grads([](const auto& a, const auto& b) { return st::matmul(a, b); }, {a, b}, 2);
    auto [ga, gb] = st::grad(
        [](const auto& a, const auto& b) { return st::sum(st::sin(st::matmul(a, b))); }, a, b);
    CHECK(ga.shape() == a.shape());
    CHECK(gb.shape() == b.shape());
    check_grads([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                {normal({2, 1, 1, 2}, 79), normal({3, 2, 1}, 80)}, 3);
    // Batch dims on one side only, either side.
    check_grads([](const auto& a, const auto& b) { return st::matmul(a, b); },
                {normal({3, 4}, 86), normal({5, 4, 2}, 87)}, 2);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                {normal({2, 2, 3}, 88), normal({3, 2}, 89)}, 3);
  }
}

TEST_CASE("primitive derivatives: rank-0 and empty tensors", "[ad]") {
  SECTION("rank 0") {
    const st::Tensor x = normal({}, 95);
    check_grads([](const auto& x) { return st::exp(x) * st::sin(x); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::expand(x, {2, 3})) * st::sum(x); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::reshape(x, {1, 1})) * st::max(x); }, {x}, 3);
    check_grads([](const auto& a, const auto& b) { return st::pow(a * a + 1.0, b); },
                {x, normal({}, 96)}, 3);
  }
  SECTION("empty tensors: derivatives are empty, or zero, of the right shapes") {
    const st::Tensor e = normal({2, 0}, 97);
    check_grads([](const auto& x) { return st::exp(x); }, {e}, 2);
    check_grads([](const auto& x) { return st::sin(st::sum(x, {1})) + st::sum(x * x); }, {e}, 2);
    check_grads([](const auto& a, const auto& b) { return st::matmul(a, b); },
                {e, normal({0, 3}, 98)}, 2);
    check_grads(
        [](const auto& a, const auto& b) {
          return st::sin(st::concat({a, b}, 1));
        },
        {e, normal({2, 2}, 99)}, 2);
    const st::Tensor g = st::grad([](const auto& x) { return st::sum(st::exp(x)); }, e);
    CHECK(g.shape() == st::Shape{2, 0});
  }
}

TEST_CASE("primitive derivatives: index_select and index_add", "[ad]") {
  SECTION("index_select with repeated indices") {
    const st::Tensor x = normal({4, 3}, 81);
    const st::Tensor idx = i64s({2, 0, 2, 1, 2}, {5});
    check_grads(
        [idx](const auto& x) { return st::sin(prims_of<decltype(x)>::index_select(x, 0, idx)); },
        {x}, 3);
    const st::Tensor idx2 = i64s({1, 1, 0, 2}, {2, 2});  // an index of rank 2 replaces axis 1
    check_grads(
        [idx2](const auto& x) { return st::sin(prims_of<decltype(x)>::index_select(x, 1, idx2)); },
        {x}, 3);
    // Repeated picks accumulate: row 2 is picked three times.
    const st::Tensor g = st::grad(
        [idx](const auto& x) { return st::sum(prims_of<decltype(x)>::index_select(x, 0, idx)); },
        x);
    CHECK(g.to_vector<double>() == std::vector<double>{1, 1, 1, 1, 1, 1, 3, 3, 3, 0, 0, 0});
  }
  SECTION("index_add with repeated indices") {
    const st::Tensor x = normal({4, 3}, 82), src = normal({5, 3}, 83);
    const st::Tensor idx = i64s({1, 3, 1, 0, 1}, {5});
    check_grads(
        [idx](const auto& x, const auto& src) {
          return st::sin(prims_of<decltype(x)>::index_add(x, 0, idx, src));
        },
        {x, src}, 3);
    const st::Tensor idx2 = i64s({2, 2}, {2});
    check_grads(
        [idx2](const auto& x, const auto& src) {
          return st::sin(prims_of<decltype(x)>::index_add(x, 1, idx2, src)) * x;
        },
        {x, normal({4, 2}, 84)}, 3);
    // Negative axes.
    check_grads(
        [idx2](const auto& x, const auto& src) {
          const auto y = prims_of<decltype(x)>::index_add(x, -1, idx2, src);
          return st::sin(prims_of<decltype(x)>::index_select(y, -1, idx2));
        },
        {x, normal({4, 2}, 85)}, 3);
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
    check_grads([](const auto& x) { return st::exp(x) * st::sum(x, {1}, true); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::slice(x, 1, 2, std::nullopt, -1)); }, {x},
                2);
    check_grads([](const auto& a, const auto& b) { return st::matmul(a, st::transpose(b, 0, 1)); },
                {x, r}, 2);
    const st::Tensor idx = i64s({2, 2, 0}, {3});
    check_grads(
        [idx](const auto& x) { return st::sin(prims_of<decltype(x)>::index_select(x, 1, idx)); },
        {x}, 2);
    check_grads(
        [idx](const auto& x, const auto& src) {
          return st::sin(prims_of<decltype(x)>::index_add(x, 1, idx, src));
        },
        {x, s}, 2);
    check_grads(
        [](const auto& x) {
          return st::sin(st::max(x, {1})) * st::pad(x, {{0, 0}, {1, 0}}).sum();
        },
        {x}, 2);
  }
}

TEST_CASE("ties split the derivative evenly, like JAX", "[ad]") {
  const st::Tensor x = f64s({1.5, -2, 0.25, 3}, {4});
  const st::Tensor y = f64s({1.5, -2, 0.25, 3}, {4});  // equal values, a separate tensor
  const st::Tensor ones = st::ones({4}, st::f64), zeros = st::zeros({4}, st::f64);
  const std::vector<double> half(4, 0.5), one(4, 1.0);
  SECTION("maximum and minimum at x == y: 0.5 to each operand") {
    auto fmax = [](const auto& a, const auto& b) { return st::sum(st::maximum(a, b)); };
    auto fmin = [](const auto& a, const auto& b) { return st::sum(st::minimum(a, b)); };
    for (int k = 0; k < 2; ++k) {
      auto [ga, gb] = k == 0 ? st::grad(fmax, x, y) : st::grad(fmin, x, y);
      CHECK(ga.to_vector<double>() == half);
      CHECK(gb.to_vector<double>() == half);
    }
    // Forward mode: the tangent of one operand gives half of itself.
    auto fm = [](const auto& ab) { return st::maximum(ab[0], ab[1]); };
    auto [m, dm] = st::jvp(fm, std::vector<st::Tensor>{x, y}, std::vector<st::Tensor>{ones, zeros});
    CHECK(dm.to_vector<double>() == half);
    auto [n, dn] = st::jvp(fm, std::vector<st::Tensor>{x, y}, std::vector<st::Tensor>{ones, ones});
    CHECK(dn.to_vector<double>() == one);
  }
  SECTION("maximum(x, x) and minimum(x, x) have derivative 1") {
    CHECK(
        st::grad([](const auto& a) { return st::sum(st::maximum(a, a)); }, x).to_vector<double>() ==
        one);
    CHECK(
        st::grad([](const auto& a) { return st::sum(st::minimum(a, a)); }, x).to_vector<double>() ==
        one);
    auto [v, dv] = st::jvp([](const auto& a) { return st::maximum(a, a); }, x, ones);
    CHECK(dv.to_vector<double>() == one);
  }
  SECTION("ties at some positions only") {
    const st::Tensor b = f64s({1.5, 0, 0.25, 4}, {4});
    auto [ga, gb] =
        st::grad([](const auto& a, const auto& b) { return st::sum(st::maximum(a, b)); }, x, b);
    CHECK(ga.to_vector<double>() == std::vector<double>{0.5, 0, 0.5, 0});
    CHECK(gb.to_vector<double>() == std::vector<double>{0.5, 1, 0.5, 1});
  }
  SECTION("max over an axis with equal maxima: an equal share to each") {
    const st::Tensor t = f64s({1, 3, 3, 2, 0, 1, 5, 5, 5}, {3, 3});
    const std::vector<double> expected{0, 0.5, 0.5, 1, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    auto f = [](const auto& t) { return st::sum(st::max(t, {1})); };
    CHECK(st::grad(f, t).to_vector<double>() == expected);
    auto fk = [](const auto& t) { return st::sum(st::max(t, {1}, true)); };
    CHECK(st::grad(fk, t).to_vector<double>() == expected);
    // The Jacobian of the row maxima, forward and reverse: shape [3] ++ [3, 3].
    auto rows = [](const auto& t) { return st::max(t, {1}); };
    const std::vector<double> jac{0, 0.5, 0.5, 0, 0, 0, 0,       0,       0,  //
                                  0, 0,   0,   1, 0, 0, 0,       0,       0,  //
                                  0, 0,   0,   0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    const st::Tensor jf = st::jacfwd(rows, t), jr = st::jacrev(rows, t);
    CHECK(jf.shape() == st::Shape{3, 3, 3});
    CHECK(jf.to_vector<double>() == jac);
    CHECK(jr.to_vector<double>() == jac);
    // Over every element: two global maxima among 9 values... here three (the 5s).
    const std::vector<double> all{0, 0, 0, 0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    CHECK(st::grad([](const auto& t) { return st::max(t); }, t).to_vector<double>() == all);
    auto [v, dv] =
        st::jvp([](const auto& t) { return st::max(t, {0}); }, t, st::ones({3, 3}, st::f64));
    CHECK(dv.to_vector<double>() == std::vector<double>{1, 1, 1});
  }
  SECTION("the tie rule is itself differentiable: second derivatives at a tie") {
    // d/dx sum(maximum(x^2, y^2)) at x == y is 0.5 * 2x; its derivative is 1 (0.5 * 2).
    auto f = [](const auto& a) { return st::sum(st::maximum(a * a, st::stop_gradient(a) * a)); };
    const st::Tensor h = st::hessian(f, x);
    const std::vector<double> hv = h.to_vector<double>();
    // maximum(a^2, c a) with c = a: ties everywhere; d/da = 0.5 (2a) + 0.5 c = 1.5 a,
    // so the Hessian is diag(0.5 * 2) = diag(1) (c is a constant).
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 4; ++j) CHECK(hv[i * 4 + j] == (i == j ? 1.0 : 0.0));
    }
  }
}
