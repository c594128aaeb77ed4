// SPDX-License-Identifier: MIT
// Tests for ad/transforms.hpp: jvp, vjp, grad, value_and_grad, jacfwd, jacrev
// and hessian, nested in every mix of modes. Every expected value comes from
// a closed form evaluated by f64 loops here, from finite differences of such
// loops, or from an identity (<u, J v> = <J^T u, v>, symmetry) -- never from
// the transforms themselves.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <exception>
#include <random>
#include <strata.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/transforms_ref.hpp"

namespace st = strata;

using namespace transforms_ref;  // NOLINT: the shared references of these tests
TEST_CASE("<u, J v> equals <J^T u, v>", "[ad]") {
  const Vec wv = random_values(kRows * kCols, 21);
  const st::Tensor w = tensor(wv, {4, 3});
  auto g = make_vector_fn(w);
  const Vec xv = random_values(kCols, 22);
  const st::Tensor x = tensor(xv, {3});
  const Vec jac = fd_jacobian([&](const Vec& y) { return vector_fn_ref(wv, y); }, xv);
  for (uint64_t trial = 0; trial < 3; ++trial) {
    const Vec uv = random_values(kRows, 100 + trial), vv = random_values(kCols, 200 + trial);
    auto [y1, jv] = st::jvp(g, x, tensor(vv, {3}));
    auto [y2, pullback] = st::vjp(g, x);
    const st::Tensor jtu = pullback(tensor(uv, {4}));
    require_shape(jv, {4});
    require_shape(jtu, {3});
    require_close(y1, vector_fn_ref(wv, xv));
    require_close(y2, vector_fn_ref(wv, xv));
    const double lhs = dot(uv, jv.to_vector<double>());
    const double rhs = dot(jtu.to_vector<double>(), vv);
    CHECK(lhs == Approx(rhs).epsilon(1e-12).margin(1e-14));
    // Both against the finite-difference Jacobian.
    Vec jv_fd(kRows, 0.0), jtu_fd(kCols, 0.0);
    for (std::size_t i = 0; i < kRows; ++i) {
      for (std::size_t j = 0; j < kCols; ++j) {
        jv_fd[i] += jac[i * kCols + j] * vv[j];
        jtu_fd[j] += jac[i * kCols + j] * uv[i];
      }
    }
    require_close(jv, jv_fd, 1e-7);
    require_close(jtu, jtu_fd, 1e-7);
  }
}

TEST_CASE("jacfwd equals jacrev, shape out ++ in", "[ad]") {
  SECTION("in [2, 3], out [4]") {
    const Vec av = random_values(24, 31), xv = random_values(6, 32);
    const st::Tensor a = tensor(av, {4, 6});
    auto f = [a](const auto& x) { return st::tanh(st::matmul(a, st::flatten(x))); };
    const st::Tensor x = tensor(xv, {2, 3});
    const st::Tensor jf = st::jacfwd(f, x), jr = st::jacrev(f, x);
    require_shape(jf, {4, 2, 3});
    require_shape(jr, {4, 2, 3});
    // J[i, j, k] = (1 - tanh(z_i)^2) A[i, 3 j + k].
    const Vec z = matvec(av, 4, xv);
    Vec expected(24);
    for (std::size_t i = 0; i < 4; ++i) {
      const double t = std::tanh(z[i]);
      for (std::size_t c = 0; c < 6; ++c) expected[i * 6 + c] = (1 - t * t) * av[i * 6 + c];
    }
    require_close(jf, expected);
    require_close(jr, expected);
  }
  SECTION("in [3], out [2, 2]") {
    const Vec bv = random_values(12, 41), xv = random_values(3, 42);
    const st::Tensor b = tensor(bv, {4, 3});
    auto f = [b](const auto& x) { return st::reshape(st::matmul(b, x * x), {2, 2}); };
    const st::Tensor jf = st::jacfwd(f, tensor(xv, {3})), jr = st::jacrev(f, tensor(xv, {3}));
    require_shape(jf, {2, 2, 3});
    require_shape(jr, {2, 2, 3});
    Vec expected(12);
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 3; ++j) expected[i * 3 + j] = bv[i * 3 + j] * 2 * xv[j];
    }
    require_close(jf, expected);
    require_close(jr, expected);
  }
  SECTION("in [4], out [] (logsumexp: the Jacobian is softmax)") {
    const Vec xv = {0.5, -1.25, 2.0, 0.125};
    auto f = [](const auto& x) { return st::logsumexp(x); };
    const st::Tensor jf = st::jacfwd(f, tensor(xv, {4})), jr = st::jacrev(f, tensor(xv, {4}));
    require_shape(jf, {4});
    require_shape(jr, {4});
    double s = 0;
    for (double v : xv) s += std::exp(v);
    Vec expected;
    for (double v : xv) expected.push_back(std::exp(v) / s);
    require_close(jf, expected);
    require_close(jr, expected);
  }
  SECTION("in [2, 2], out [2, 2] (softmax along axis 1)") {
    const Vec xv = {0.25, -0.5, 1.5, 0.75};
    auto f = [](const auto& x) { return st::softmax(x, 1); };
    const st::Tensor jf = st::jacfwd(f, tensor(xv, {2, 2})), jr = st::jacrev(f, tensor(xv, {2, 2}));
    require_shape(jf, {2, 2, 2, 2});
    require_shape(jr, {2, 2, 2, 2});
    // J[i, j, k, l] = [i == k] s_ij ([j == l] - s_il).
    Vec s(4);
    for (std::size_t i = 0; i < 2; ++i) {
      const double den = std::exp(xv[i * 2]) + std::exp(xv[i * 2 + 1]);
      for (std::size_t j = 0; j < 2; ++j) s[i * 2 + j] = std::exp(xv[i * 2 + j]) / den;
    }
    Vec expected(16, 0.0);
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 2; ++j) {
        for (std::size_t l = 0; l < 2; ++l) {
          expected[((i * 2 + j) * 2 + i) * 2 + l] = s[i * 2 + j] * ((j == l) - s[i * 2 + l]);
        }
      }
    }
    require_close(jf, expected);
    require_close(jr, expected);
  }
  SECTION("in [], out [3]") {
    const Vec cv = {1.5, -2.0, 0.25};
    const st::Tensor c = tensor(cv, {3});
    auto f = [c](const auto& x) { return st::sin(x * c); };
    const double x0 = 0.8;
    const st::Tensor jf = st::jacfwd(f, scalar(x0)), jr = st::jacrev(f, scalar(x0));
    require_shape(jf, {3});
    require_shape(jr, {3});
    Vec expected;
    for (double v : cv) expected.push_back(v * std::cos(v * x0));
    require_close(jf, expected);
    require_close(jr, expected);
  }
}

TEST_CASE("value_and_grad returns f(x) and the gradient", "[ad]") {
  const Vec xv = {0.5, -1.5, 2.0, 3.0};
  const st::Tensor x = tensor(xv, {2, 2});
  auto f = [](const auto& a) { return st::sum(a * a * a); };
  double cubes = 0;
  Vec grad3;
  for (double v : xv) {
    cubes += v * v * v;
    grad3.push_back(3 * v * v);
  }
  auto [v, g] = st::value_and_grad(f, x);
  CHECK(value(v) == Approx(cubes));
  require_shape(g, {2, 2});
  require_close(g, grad3);
  auto [v2, g2] = st::value_and_grad(f)(x);
  CHECK(value(v2) == Approx(cubes));
  require_close(g2, grad3);
  auto [v3, grads] = st::value_and_grad([](const auto& a, const auto& b) { return st::sum(a * b); },
                                        x, tensor({1, 2, 3, 4}, {2, 2}));
  CHECK(value(v3) == Approx(0.5 - 3.0 + 6.0 + 12.0));
  require_close(std::get<0>(grads), {1, 2, 3, 4});
  require_close(std::get<1>(grads), xv);
}

TEST_CASE("a vjp pullback may run many times and is linear", "[ad]") {
  const Vec wv = random_values(kRows * kCols, 51), xv = random_values(kCols, 52);
  auto g = make_vector_fn(tensor(wv, {4, 3}));
  auto [y, pullback] = st::vjp(g, tensor(xv, {3}));
  require_close(y, vector_fn_ref(wv, xv));
  const Vec u1 = random_values(4, 53), u2 = random_values(4, 54);
  const Vec p1 = pullback(tensor(u1, {4})).to_vector<double>();
  const Vec p2 = pullback(tensor(u2, {4})).to_vector<double>();
  Vec sum_u(4), scaled_u(4), sum_p(3), scaled_p(3);
  for (std::size_t i = 0; i < 4; ++i) sum_u[i] = u1[i] + u2[i], scaled_u[i] = -2.5 * u1[i];
  for (std::size_t j = 0; j < 3; ++j) sum_p[j] = p1[j] + p2[j], scaled_p[j] = -2.5 * p1[j];
  require_close(pullback(tensor(sum_u, {4})), sum_p, 1e-12);
  require_close(pullback(tensor(scaled_u, {4})), scaled_p, 1e-12);
  // The same cotangent again gives the same answer (the tape is not consumed).
  require_close(pullback(tensor(u1, {4})), p1, 0.0);
  // And each one is J^T u for the finite-difference J.
  const Vec jac = fd_jacobian([&](const Vec& v) { return vector_fn_ref(wv, v); }, xv);
  Vec expected(3, 0.0);
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 3; ++j) expected[j] += jac[i * 3 + j] * u2[i];
  }
  require_close(tensor(p2, {3}), expected, 1e-7);
}

TEST_CASE("multi-argument grad returns a tuple", "[ad]") {
  // f(a, B) = a^T B a: grad_a = (B + B^T) a, grad_B = a a^T.
  const Vec av = {0.5, -1.0, 2.0}, bv = random_values(9, 61);
  const st::Tensor a = tensor(av, {3}), b = tensor(bv, {3, 3});
  auto f = [](const auto& x, const auto& m) { return st::dot(x, st::matmul(m, x)); };
  auto result = st::grad(f, a, b);
  static_assert(std::is_same_v<decltype(result), std::tuple<st::Tensor, st::Tensor>>);
  auto [ga, gb] = result;
  Vec ga_ref(3, 0.0), gb_ref(9);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      ga_ref[i] += (bv[i * 3 + j] + bv[j * 3 + i]) * av[j];
      gb_ref[i * 3 + j] = av[i] * av[j];
    }
  }
  require_shape(ga, {3});
  require_shape(gb, {3, 3});
  require_close(ga, ga_ref);
  require_close(gb, gb_ref);

  SECTION("three arguments, and the function-returning form") {
    auto h = [](const auto& x, const auto& y, const auto& z) {
      return st::sum(x * y * st::exp(z));
    };
    const st::Tensor c = tensor({0.25, -0.5, 1.0}, {3});
    auto [gx, gy, gz] = st::grad(h)(a, tensor({1.0, 2.0, 3.0}, {3}), c);
    const Vec yv = {1, 2, 3}, cv = {0.25, -0.5, 1.0};
    Vec ex, ey, ez;
    for (std::size_t i = 0; i < 3; ++i) {
      ex.push_back(yv[i] * std::exp(cv[i]));
      ey.push_back(av[i] * std::exp(cv[i]));
      ez.push_back(av[i] * yv[i] * std::exp(cv[i]));
    }
    require_close(gx, ex);
    require_close(gy, ey);
    require_close(gz, ez);
  }
}

TEST_CASE("grad with respect to an unused argument is zeros", "[ad]") {
  const st::Tensor a = tensor({1.5, -2.0}, {2}), b = tensor({3.0, 4.0, 5.0, 6.0, 7.0, 8.0}, {2, 3});
  auto [ga, gb] = st::grad([](const auto& x, const auto&) { return st::sum(x * x); }, a, b);
  require_close(ga, {3.0, -4.0});
  require_shape(gb, {2, 3});
  CHECK(gb.dtype() == st::f64);
  require_close(gb, Vec(6, 0.0), 0.0);
  // Also when the output does not depend on any argument.
  const st::Tensor c = st::grad([](const auto& x) { return st::sum(st::stop_gradient(x)); }, b);
  require_shape(c, {2, 3});
  require_close(c, Vec(6, 0.0), 0.0);
  // And a constant output (a captured plain value).
  const st::Tensor k = scalar(4.0);
  const st::Tensor d = st::grad([k](const auto&) { return k; }, a);
  require_close(d, {0.0, 0.0}, 0.0);
}

TEST_CASE("function-returning forms", "[ad]") {
  const Vec xv = {0.3, -0.6};
  const st::Tensor x = tensor(xv, {2});
  // f(x) = sum(x^3) + x0 x1.
  auto f = [](const auto& a) {
    return st::sum(a * a * a) + st::sum(st::slice(a, 0, 0, 1) * st::slice(a, 0, 1, 2));
  };
  const Vec g_ref = {3 * xv[0] * xv[0] + xv[1], 3 * xv[1] * xv[1] + xv[0]};
  const Vec h_ref = {6 * xv[0], 1.0, 1.0, 6 * xv[1]};
  require_close(st::grad(f)(x), g_ref);
  require_close(st::jacfwd(st::grad(f))(x), h_ref);
  require_close(st::jacrev(st::grad(f))(x), h_ref);
  require_close(st::hessian(f)(x), h_ref);
  auto [v, g] = st::value_and_grad(f)(x);
  CHECK(value(v) == Approx(xv[0] * xv[0] * xv[0] + xv[1] * xv[1] * xv[1] + xv[0] * xv[1]));
  require_close(g, g_ref);
  // Third derivative d3 f / dx0^3 = 6 through a composed chain of forms.
  auto first = [](const auto& a) { return st::sum(a * a * a * a); };  // d/dx0: 4 x0^3
  auto third = st::jacfwd(st::jacrev(st::grad(first)));
  const st::Tensor t = third(x);
  require_shape(t, {2, 2, 2});
  Vec t_ref(8, 0.0);
  t_ref[0] = 24 * xv[0];
  t_ref[7] = 24 * xv[1];
  require_close(t, t_ref);
}

TEST_CASE("captured tensors and C++ scalars mix with traced values", "[ad]") {
  const Vec wv = {0.5, -1.5, 2.0, 0.25, 3.0, -0.75}, xv = {1.0, -2.0, 0.5, 1.5, -0.25, 2.5};
  const st::Tensor w = tensor(wv, {2, 3}), x = tensor(xv, {2, 3});
  // f = sum((x * W + 2) * x): grad = 2 W x + 2.
  auto f = [&w](const auto& a) { return st::sum((a * w + 2.0) * a); };
  Vec g_ref;
  for (std::size_t i = 0; i < 6; ++i) g_ref.push_back(2 * wv[i] * xv[i] + 2.0);
  require_close(st::grad(f, x), g_ref);
  // Forward mode sees the same: J v = sum(g * v).
  const Vec vv = random_values(6, 81);
  CHECK(value(st::jvp(f, x, tensor(vv, {2, 3})).second) == Approx(dot(g_ref, vv)).epsilon(1e-12));
  SECTION("scalars of every kind on either side") {
    // q = sum(3 * a - a / 2 + 1 - 2.0 / (a * a + 1)): q' = 3 - 0.5 + 4 a / (a^2 + 1)^2.
    auto q = [](const auto& a) { return st::sum(3 * a - a / 2 + 1 - 2.0 / (a * a + 1)); };
    Vec expected;
    for (double v : xv) expected.push_back(2.5 + 4 * v / ((v * v + 1) * (v * v + 1)));
    require_close(st::grad(q, x), expected);
  }
  SECTION("an f32 argument keeps f32 through double scalars") {
    const st::Tensor x32 = x.to(st::f32);
    // W is f64, so the product is computed in f64; the gradient comes back as f32.
    const st::Tensor g = st::grad(f, x32);
    CHECK(g.dtype() == st::f32);
    require_close(g, g_ref, 1e-6);
    auto f32fn = [](const auto& a) { return st::sum(a * 1.5 + 0.25); };
    const st::Tensor g32 = st::grad(f32fn, x32);
    CHECK(g32.dtype() == st::f32);
    require_close(g32, Vec(6, 1.5), 1e-7);
  }
  SECTION("a captured tensor inside a hessian") {
    // H of sum(W x^2) is diag(2 W) (x, W of shape [2, 3]: H of shape [2, 3, 2, 3]).
    auto p = [&w](const auto& a) { return st::sum(w * a * a); };
    const st::Tensor h = st::hessian(p, x);
    require_shape(h, {2, 3, 2, 3});
    Vec expected(36, 0.0);
    for (std::size_t i = 0; i < 6; ++i) expected[i * 6 + i] = 2 * wv[i];
    require_close(h, expected);
  }
}

TEST_CASE("stop_gradient blocks derivatives", "[ad]") {
  const Vec xv = {0.5, -1.25, 2.0};
  const st::Tensor x = tensor(xv, {3});
  auto f = [](const auto& a) { return st::sum(a * st::stop_gradient(a)); };
  require_close(st::grad(f, x), xv);  // x, not 2 x
  const Vec vv = {1.0, 2.0, -3.0};
  CHECK(value(st::jvp(f, x, tensor(vv, {3})).second) == Approx(dot(xv, vv)));
  // sum(sg(x) x^2): H = 2 diag(x), not the 6 diag(x) of sum(x^3).
  auto g = [](const auto& a) { return st::sum(st::stop_gradient(a) * a * a); };
  require_close(st::hessian(g, x), {2 * xv[0], 0, 0, 0, 2 * xv[1], 0, 0, 0, 2 * xv[2]});
  // stop_gradient of a plain tensor is the tensor.
  require_close(st::stop_gradient(x), xv, 0.0);
}

TEST_CASE("plain tangents and cotangents inside a transform are lifted", "[ad]") {
  // d/dx of <v, J_f(x) v> for f(x) = x^3 (elementwise) is 6 x v^2; v is a plain
  // tensor used as the tangent (jvp) and as the cotangent (vjp) inside grad.
  const st::Tensor x = st::from_vector(Vec{0.5, -1.25, 2.0});
  const st::Tensor v = st::from_vector(Vec{1.5, 0.75, -2.0});
  auto cube = [](const auto& a) { return a * a * a; };
  const Vec expected{6 * 0.5 * 1.5 * 1.5, 6 * -1.25 * 0.75 * 0.75, 6 * 2.0 * 4.0};
  const st::Tensor by_jvp =
      st::grad([&](const auto& a) { return st::sum(st::jvp(cube, a, v).second * v); }, x);
  const st::Tensor by_vjp = st::grad(
      [&](const auto& a) {
        auto [y, pullback] = st::vjp(cube, a);
        return st::sum(pullback(v) * v);
      },
      x);
  const auto got_jvp = by_jvp.to_vector<double>(), got_vjp = by_vjp.to_vector<double>();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    REQUIRE(got_jvp[i] == Approx(expected[i]).epsilon(1e-12));
    REQUIRE(got_vjp[i] == Approx(expected[i]).epsilon(1e-12));
  }
}
