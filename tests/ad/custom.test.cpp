// SPDX-License-Identifier: MIT
// st::custom_jvp and st::custom_vjp (ad/custom.hpp): a user's derivative rule
// replaces differentiation through f's ops under every transform. References:
// the derivatives written out in double precision, finite differences
// (check_grads), and the identities between modes.
#include <catch2/catch.hpp>
#include <cmath>
#include <strata.hpp>
#include <utility>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::doubles;
using st::testing::example;
using st::testing::f64s;
using st::testing::normal;
using st::testing::require_close;

namespace {

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// log(1 + e^x) written naively (as in JAX's custom_jvp documentation): differentiated
// through its ops, the derivative at large x is 1 / (1 + inf) * inf (NaN in JAX, 0 with
// strata's NaN-safe products: wrong either way); the rule gives sigmoid(x), 1 there.
auto log1pexp_rule = [](const auto& x, const auto& t) {
  return std::pair{st::log1p(st::exp(x)), st::sigmoid(x) * t};
};
const auto log1pexp =
    st::custom_jvp([](const auto& x) { return st::log1p(st::exp(x)); }, log1pexp_rule, "log1pexp");

// The same function by a custom vjp: the residual is x itself.
const auto log1pexp_vjp =
    st::custom_vjp([](const auto& x) { return st::log1p(st::exp(x)); },
                   [](const auto& x) {
                     return std::pair{st::log1p(st::exp(x)), x};
                   },
                   [](const auto& x, const auto& g) { return st::sigmoid(x) * g; }, "log1pexp_vjp");

// The identity whose backward pass clips the cotangent to [-1, 1].
const auto clip_gradient = st::custom_vjp(
    [](const auto& x) { return x; },
    [](const auto& x) {
      return std::pair{x, x};
    },
    [](const auto&, const auto& g) { return st::clamp(g, -1.0, 1.0); }, "clip_gradient");

// Two arguments: f(a, b) = a * sin(b), by hand.
const auto a_sin_b = st::custom_vjp([](const auto& a, const auto& b) { return a * st::sin(b); },
                                    [](const auto& a, const auto& b) {
                                      return std::pair{a * st::sin(b), std::tuple{a, b}};
                                    },
                                    [](const auto& res, const auto& g) {
                                      const auto& [a, b] = res;
                                      return std::tuple{g * st::sin(b), g * a * st::cos(b)};
                                    },
                                    "a_sin_b");
const auto a_sin_b_jvp =
    st::custom_jvp([](const auto& a, const auto& b) { return a * st::sin(b); },
                   [](const auto& a, const auto& b, const auto& ta, const auto& tb) {
                     return std::pair{a * st::sin(b), ta * st::sin(b) + a * st::cos(b) * tb};
                   },
                   "a_sin_b_jvp");

}  // namespace

TEST_CASE("custom_jvp: log1pexp has a finite derivative at x = 1000", "[ad][custom]") {
  const st::Tensor x = f64s({-3.0, 0.0, 2.5, 1000.0}, {4});
  auto f = [&](const auto& v) { return st::sum(log1pexp(v)); };
  const std::vector<double> g = doubles(st::grad(f, x));
  for (std::size_t i = 0; i < 4; ++i) {
    const double xi = doubles(x)[i];
    CHECK(g[i] == Approx(logistic(xi)).epsilon(1e-12));
  }
  CHECK(g[3] == 1.0);
  // Without the rule, the ops' own derivative is wrong there: 1 / (1 + e^x) = 0 times
  // e^x = inf, which the NaN-safe product makes 0 (JAX and PyTorch give NaN).
  const auto naive =
      doubles(st::grad([](const auto& v) { return st::sum(st::log1p(st::exp(v))); }, x));
  CHECK(naive[3] == 0.0);
  // The value is f's: log(1 + e^x), infinite at 1000 as in JAX.
  const std::vector<double> y = doubles(log1pexp(x));
  CHECK(y[2] == Approx(std::log1p(std::exp(2.5))));
  CHECK(std::isinf(y[3]));
  SECTION("every mode agrees, second order included") {
    const auto [y1, t] =
        st::jvp([&](const auto& v) { return log1pexp(v); }, x, f64s({1, 1, 1, 1}, {4}));
    CHECK(doubles(t) == g);
    const std::vector<double> jf =
        doubles(st::jacfwd([&](const auto& v) { return log1pexp(v); }, x));
    const std::vector<double> jr =
        doubles(st::jacrev([&](const auto& v) { return log1pexp(v); }, x));
    CHECK(jf == jr);
    CHECK(jf[15] == 1.0);
    // The second derivative differentiates the rule: sigmoid'(x) = s (1 - s), 0 at 1000.
    const std::vector<double> h = doubles(st::hessian(f, x));
    for (std::size_t i = 0; i < 4; ++i) {
      const double s = logistic(doubles(x)[i]);
      CHECK(h[i * 5] == Approx(s * (1 - s)).epsilon(1e-10));
    }
    CHECK(h[15] == 0.0);
  }
  SECTION("vmap(grad(f)) equals a loop of grads") {
    const st::Tensor xs = normal({5, 3}, 7) * 4.0;
    auto per = [&](const auto& v) { return st::sum(log1pexp(v)); };
    const st::Tensor batched = st::vmap(st::grad(per))(xs);
    for (int64_t i = 0; i < 5; ++i) {
      require_close(example(batched, 0, i), st::grad(per, example(xs, 0, i)), 0, "vmap(grad)");
    }
    // and grad of a function that maps log1pexp over its rows.
    const st::Tensor gv =
        st::grad([&](const auto& v) { return st::sum(st::vmap(log1pexp)(v)); }, xs);
    require_close(gv, st::grad(per, xs), 0, "grad(vmap)");
  }
}

TEST_CASE("custom_vjp: log1pexp and a gradient-clipping identity", "[ad][custom]") {
  const st::Tensor x = f64s({-3.0, 0.0, 2.5, 1000.0}, {4});
  auto f = [&](const auto& v) { return st::sum(log1pexp_vjp(v)); };
  const std::vector<double> g = doubles(st::grad(f, x));
  for (std::size_t i = 0; i < 4; ++i) CHECK(g[i] == Approx(logistic(doubles(x)[i])).epsilon(1e-12));
  CHECK(g[3] == 1.0);
  // Forward mode transposes the (linear) backward rule.
  const auto [y, t] =
      st::jvp([&](const auto& v) { return log1pexp_vjp(v); }, x, f64s({1.0, -2.0, 0.5, 3.0}, {4}));
  CHECK(doubles(t)[1] == Approx(-2.0 * 0.5));
  CHECK(doubles(t)[3] == 3.0);
  CHECK(doubles(st::jacfwd([&](const auto& v) { return log1pexp_vjp(v); }, x)) ==
        doubles(st::jacrev([&](const auto& v) { return log1pexp_vjp(v); }, x)));
  // Second order differentiates the backward rule: sigmoid'(x).
  const std::vector<double> h = doubles(st::hessian(f, x));
  CHECK(h[0] == Approx(logistic(-3.0) * (1 - logistic(-3.0))).epsilon(1e-10));
  CHECK(h[15] == 0.0);

  SECTION("clip_gradient: identity forward, clipped cotangents backward") {
    const st::Tensor w = normal({6}, 11);
    CHECK(doubles(clip_gradient(w)) == doubles(w));
    auto loss = [&](const auto& v) {
      return st::sum(clip_gradient(v) * 5.0 - clip_gradient(v * 0.25));
    };
    // d/dv: clip(5) + 0.25 * clip(-1) = 1 - 0.25
    for (double gi : doubles(st::grad(loss, w))) CHECK(gi == 0.75);
    // vmap of the per-example gradient clips each example's cotangent.
    const st::Tensor ws = normal({3, 4}, 12);
    const st::Tensor pe =
        st::vmap(st::grad([&](const auto& v) { return st::sum(clip_gradient(v) * 3.0); }))(ws);
    for (double gi : doubles(pe)) CHECK(gi == 1.0);
  }
}

TEST_CASE("custom rules of two arguments match finite differences", "[ad][custom]") {
  const st::Tensor a = normal({3, 2}, 21);
  const st::Tensor b = normal({3, 2}, 22);
  check_grads<2>([](const auto& u, const auto& v) { return a_sin_b(u, v) * u; }, {a, b});
  check_grads<2>([](const auto& u, const auto& v) { return a_sin_b_jvp(u, v) * v; }, {a, b});
  check_grads<2>([](const auto& u) { return log1pexp(u * 2.0); }, {a});
  check_grads<2>([](const auto& u) { return log1pexp_vjp(st::sin(u)); }, {a});
  // Both rules agree with differentiating f's own ops.
  auto plain = [](const auto& u, const auto& v) { return st::sum(u * st::sin(v) * v); };
  auto by_vjp = [](const auto& u, const auto& v) { return st::sum(a_sin_b(u, v) * v); };
  auto by_jvp = [](const auto& u, const auto& v) { return st::sum(a_sin_b_jvp(u, v) * v); };
  const auto [ga, gb] = st::grad(plain, a, b);
  const auto [va, vb] = st::grad(by_vjp, a, b);
  const auto [ja, jb] = st::grad(by_jvp, a, b);
  require_close(va, ga, 1e-12, "va");
  require_close(vb, gb, 1e-12, "vb");
  require_close(ja, ga, 1e-12, "ja");
  require_close(jb, gb, 1e-12, "jb");
  // A constant argument gets no cotangent, and the rule still runs.
  const st::Tensor gonly = st::grad([&](const auto& v) { return st::sum(a_sin_b(a, v)); }, b);
  require_close(gonly, a * st::cos(b), 1e-12, "gonly");
}

TEST_CASE("custom rules: a rule that returns the wrong thing is an error naming it",
          "[ad][custom]") {
  const st::Tensor x = normal({3}, 31);
  auto doubler = [](const auto& v) { return v * 2.0; };
  auto doubler_fwd = [](const auto& v) { return std::pair{v * 2.0, v}; };
  auto bad_shape = st::custom_vjp(
      doubler, doubler_fwd, [](const auto&, const auto& g) { return st::sum(g); }, "doubler");
  auto loss_shape = [&](const auto& v) { return st::sum(bad_shape(v)); };
  CHECK_THROWS_AS(st::grad(loss_shape, x), st::ShapeError);
  CHECK_THROWS_WITH(st::grad(loss_shape, x), Catch::Contains("doubler"));

  auto bad_dtype = st::custom_vjp(
      doubler, doubler_fwd, [](const auto&, const auto& g) { return g.to(st::f32); }, "to_f32");
  auto loss_dtype = [&](const auto& v) { return st::sum(bad_dtype(v)); };
  CHECK_THROWS_AS(st::grad(loss_dtype, x), st::DTypeError);
  CHECK_THROWS_WITH(st::grad(loss_dtype, x), Catch::Contains("to_f32"));

  auto bad_count = st::custom_vjp([](const auto& u, const auto& v) { return u * v; },
                                  [](const auto& u, const auto& v) {
                                    return std::pair{u * v, u};
                                  },
                                  [](const auto&, const auto& g) { return g; }, "product");
  auto loss_count = [&](const auto& u, const auto& v) { return st::sum(bad_count(u, v)); };
  CHECK_THROWS_AS(st::grad(loss_count, x, x), st::ValueError);
  CHECK_THROWS_WITH(st::grad(loss_count, x, x),
                    Catch::Contains("product") && Catch::Contains("1 cotangent"));

  auto bad_tangent = st::custom_jvp(
      doubler,
      [](const auto& v, const auto& t) {
        return std::pair{v * 2.0, st::reshape(t, {3, 1})};
      },
      "bad_jvp");
  auto apply_bad = [&](const auto& v) { return bad_tangent(v); };
  auto loss_tangent = [&](const auto& v) { return st::sum(bad_tangent(v)); };
  CHECK_THROWS_AS(st::jvp(apply_bad, x, x), st::ShapeError);
  CHECK_THROWS_WITH(st::jvp(apply_bad, x, x), Catch::Contains("bad_jvp"));
  CHECK_THROWS_AS(st::grad(loss_tangent, x), st::ShapeError);
  CHECK_THROWS_WITH(st::grad(loss_tangent, x), Catch::Contains("bad_jvp"));
}
