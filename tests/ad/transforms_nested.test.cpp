// SPDX-License-Identifier: MIT
// Tests for ad/transforms.hpp, continued: higher derivatives through every
// composition of modes, transforms nested inside each other (no perturbation
// confusion between levels or calls), and transforms run from several threads
// at once. Every expected value comes from
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

#include "support/device.hpp"
#include "support/transforms_ref.hpp"

namespace st = strata;

using namespace transforms_ref;  // NOLINT: the shared references of these tests

TEST_CASE("derivatives of tanh at 2.0 up to order 3", "[ad]") {
  // tanh' = 1 - t^2, tanh'' = -2 t (1 - t^2), tanh''' = (1 - t^2)(6 t^2 - 2).
  const double d1 = 0.0706508249, d2 = -0.1362186874, d3 = 0.2526540651;
  const double tol = 1e-9;
  auto f = [](const auto& x) { return st::tanh(x); };
  const st::Tensor x = scalar(2.0);
  auto F = fwd_derivative;
  auto R = rev_derivative;

  SECTION("grad of grad") {
    CHECK(value(st::grad(f, x)) == Approx(d1).margin(tol));
    CHECK(value(st::grad(st::grad(f))(x)) == Approx(d2).margin(tol));
    CHECK(value(st::grad(st::grad(st::grad(f)))(x)) == Approx(d3).margin(tol));
  }
  SECTION("jvp of jvp") {
    CHECK(value(F(f)(x)) == Approx(d1).margin(tol));
    CHECK(value(F(F(f))(x)) == Approx(d2).margin(tol));
    CHECK(value(F(F(F(f)))(x)) == Approx(d3).margin(tol));
  }
  SECTION("every mix of modes") {
    CHECK(value(R(F(f))(x)) == Approx(d2).margin(tol));
    CHECK(value(F(R(f))(x)) == Approx(d2).margin(tol));
    CHECK(value(R(R(F(f)))(x)) == Approx(d3).margin(tol));
    CHECK(value(R(F(R(f)))(x)) == Approx(d3).margin(tol));
    CHECK(value(R(F(F(f)))(x)) == Approx(d3).margin(tol));
    CHECK(value(F(R(R(f)))(x)) == Approx(d3).margin(tol));
    CHECK(value(F(R(F(f)))(x)) == Approx(d3).margin(tol));
    CHECK(value(F(F(R(f)))(x)) == Approx(d3).margin(tol));
  }
  SECTION("f32 gives the same to f32 precision") {
    const st::Tensor x32 = st::full({}, 2.0, st::f32);
    const st::Tensor g = st::grad(st::grad(f))(x32);
    CHECK(g.dtype() == st::f32);
    CHECK(value(g) == Approx(d2).margin(1e-5));
  }
}

TEST_CASE("second derivatives agree across fwd/rev compositions", "[ad]") {
  const Vec wv = random_values(kRows * kCols, 7), xv = random_values(kCols, 11);
  const st::Tensor w = tensor(wv, {4, 3}), x = tensor(xv, {3});
  auto f = make_quartic(w);
  const Vec h_exact = quartic_hessian_ref(wv, xv);
  const Vec h_fd = fd_hessian([&](const Vec& y) { return quartic_ref(wv, y); }, xv);
  // The closed form and the finite differences agree: a check of the references.
  for (std::size_t i = 0; i < h_exact.size(); ++i)
    REQUIRE(h_fd[i] == Approx(h_exact[i]).margin(1e-5));

  SECTION("value and gradient") {
    auto [v, g] = st::value_and_grad(f, x);
    CHECK(value(v) == Approx(quartic_ref(wv, xv)).epsilon(1e-12));
    require_close(g, quartic_grad_ref(wv, xv));
  }
  SECTION("all four compositions and hessian") {
    const st::Tensor ff = st::jacfwd(st::jacfwd(f), x);
    const st::Tensor fr = st::jacfwd(st::jacrev(f), x);
    const st::Tensor rf = st::jacrev(st::jacfwd(f), x);
    const st::Tensor rr = st::jacrev(st::jacrev(f), x);
    const st::Tensor h = st::hessian(f, x);
    const st::Tensor h2 = st::hessian(f)(x);
    for (const st::Tensor* t : {&ff, &fr, &rf, &rr, &h, &h2}) {
      require_shape(*t, {3, 3});
      require_close(*t, h_exact, 1e-10);
      require_close(*t, h_fd, 1e-5);
    }
    require_close(fr, ff.to_vector<double>(), 1e-12);
    require_close(rf, ff.to_vector<double>(), 1e-12);
    require_close(rr, ff.to_vector<double>(), 1e-12);
  }
  SECTION("the hessian is symmetric") {
    const Vec h = st::hessian(f, x).to_vector<double>();
    for (std::size_t i = 0; i < kCols; ++i) {
      for (std::size_t j = 0; j < kCols; ++j) {
        CHECK(h[i * kCols + j] == Approx(h[j * kCols + i]).margin(1e-12));
      }
    }
  }
  SECTION("a function with every entry of the hessian distinct, against finite differences") {
    // q(x) = log(sum(exp(x^2))) + x0 x1 x2 (x [3]).
    auto q = [](const auto& y) {
      auto head = st::reshape(st::matmul(st::reshape(st::slice(y, 0, 0, 2), {1, 2}),
                                         st::reshape(st::slice(y, 0, 1, 3), {2, 1})),
                              {});
      return st::log(st::sum(st::exp(y * y))) + head;
    };
    auto q_ref = [](const Vec& y) {
      double s = 0;
      for (double v : y) s += std::exp(v * v);
      return std::log(s) + y[0] * y[1] + y[1] * y[2];
    };
    const Vec yv = {0.3, -0.7, 0.45};
    const st::Tensor h = st::hessian(q, tensor(yv, {3}));
    require_shape(h, {3, 3});
    require_close(h, fd_hessian(q_ref, yv), 1e-5);
    const Vec hv = h.to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 3; ++j)
        CHECK(hv[i * 3 + j] == Approx(hv[j * 3 + i]).margin(1e-12));
    }
  }
}

TEST_CASE("nested transforms are not confused", "[ad]") {
  SECTION("grad(x -> grad(y -> x y)(x))(2) is 1") {
    auto outer = [](const auto& x) { return st::grad([&x](const auto& y) { return x * y; })(x); };
    CHECK(value(st::grad(outer)(scalar(2.0))) == Approx(1.0).margin(1e-12));
    // The same with forward mode outside and inside.
    auto fouter = [](const auto& x) {
      return st::jvp([&x](const auto& y) { return x * y; }, x, st::constant_like(x, 1.0)).second;
    };
    CHECK(value(fwd_derivative(fouter)(scalar(2.0))) == Approx(1.0).margin(1e-12));
  }
  SECTION("f(x) = x grad(y -> x + y)(constant_like(x, 1)): f'(3) = 1") {
    auto f = [](const auto& x) {
      return x * st::grad([&x](const auto& y) { return x + y; })(st::constant_like(x, 1.0));
    };
    CHECK(value(st::grad(f)(scalar(3.0))) == Approx(1.0).margin(1e-12));
  }
  SECTION("the same with a plain inner argument: 1 or an error naming constant_like, never 2") {
    const st::Tensor one = scalar(1.0);
    auto f = [&one](const auto& x) {
      return x * st::grad([&x](const auto& y) { return x + y; })(one);
    };
    try {
      const double g = value(st::grad(f)(scalar(3.0)));
      CHECK(g == Approx(1.0).margin(1e-12));
    } catch (const st::Error& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains("st::constant_like"));
    }
  }
  SECTION("forward mode: a captured outer value and a plain inner argument throws") {
    const st::Tensor one = scalar(1.0);
    auto f = [&one](const auto& x) {
      return x * st::jvp([&x](const auto& y) { return x * y; }, one, one).second;
    };
    REQUIRE_THROWS_AS(st::jvp(f, scalar(3.0), scalar(1.0)), st::ValueError);
    try {
      st::jvp(f, scalar(3.0), scalar(1.0));
    } catch (const st::Error& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains("st::constant_like"));
    }
    // With constant_like the answer is right: f = x * x, f'(3) = 6.
    auto g = [](const auto& x) {
      auto c = st::constant_like(x, 1.0);
      return x * st::jvp([&x](const auto& y) { return x * y; }, c, c).second;
    };
    CHECK(value(st::jvp(g, scalar(3.0), scalar(1.0)).second) == Approx(6.0).margin(1e-12));
  }
  SECTION("an inner function returning the captured outer value: derivative 0, never 1") {
    // f(x) = x * d/dy[x] = x * 0 = 0, so f'(3) = 0. The inner transform must not
    // read the outer transform's derivative of x as its own.
    const st::Tensor one = scalar(1.0);
    auto right = [](const auto& x) {
      return x * st::grad([&x](const auto&) { return x; })(st::constant_like(x, 1.0));
    };
    CHECK(value(st::grad(right)(scalar(3.0))) == Approx(0.0).margin(1e-12));
    auto plain_rev = [&one](const auto& x) {
      return x * st::grad([&x](const auto&) { return x; })(one);
    };
    try {
      const double g = value(st::grad(plain_rev)(scalar(3.0)));
      CHECK(g == Approx(0.0).margin(1e-12));
    } catch (const st::Error& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains("st::constant_like"));
    }
    auto fright = [](const auto& x) {
      auto c = st::constant_like(x, 1.0);
      return x * st::jvp([&x](const auto&) { return x; }, c, c).second;
    };
    CHECK(value(st::jvp(fright, scalar(3.0), scalar(1.0)).second) == Approx(0.0).margin(1e-12));
    auto plain_fwd = [&one](const auto& x) {
      return x * st::jvp([&x](const auto&) { return x; }, one, one).second;
    };
    try {
      const double g = value(st::jvp(plain_fwd, scalar(3.0), scalar(1.0)).second);
      CHECK(g == Approx(0.0).margin(1e-12));
    } catch (const st::Error& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains("st::constant_like"));
    }
  }
}

TEST_CASE("transforms run concurrently", "[ad][threads]") {
  const Vec wv = random_values(kRows * kCols, 71);
  const st::Tensor w = tensor(wv, {4, 3});
  const std::vector<Vec> xs = {random_values(3, 72), random_values(3, 73), random_values(3, 74),
                               random_values(3, 75)};
  // Four different jobs, each returning its result as a flat vector.
  auto job = [&](int which) -> Vec {
    const st::Tensor x = tensor(xs[std::size_t(which)], {3});
    switch (which) {
      case 0:
        return st::grad(make_quartic(w), x).to_vector<double>();
      case 1:
        return st::hessian(make_quartic(w), x).to_vector<double>();
      case 2:
        return st::jacrev(make_vector_fn(w), x).to_vector<double>();
      default:
        return st::grad(st::grad([](const auto& a) { return st::sum(st::tanh(a) * a); }))(
                   st::sum(x))
            .to_vector<double>();
    }
  };
  std::vector<Vec> sequential;
  for (int j = 0; j < 4; ++j) sequential.push_back(job(j));
  // The sequential answers are right, so agreeing with them means right.
  require_close(tensor(sequential[0], {3}), quartic_grad_ref(wv, xs[0]));
  require_close(tensor(sequential[1], {9}), quartic_hessian_ref(wv, xs[1]));
  require_close(tensor(sequential[2], {12}),
                fd_jacobian([&](const Vec& v) { return vector_fn_ref(wv, v); }, xs[2]), 1e-7);
  // d2/ds2 (s tanh s) = 2 (1 - t^2)(1 - s t).
  const double s = xs[3][0] + xs[3][1] + xs[3][2], t = std::tanh(s);
  require_close(tensor(sequential[3], {1}), {2 * (1 - t * t) * (1 - s * t)});

  constexpr int kRepeats = 5;
  std::vector<std::vector<Vec>> results(4);
  std::vector<std::exception_ptr> errors(4);
  std::vector<std::thread> threads;
  for (int j = 0; j < 4; ++j) {
    threads.emplace_back([&, j] {
      const st::DefaultDevice on(st::testing::test_device());  // a new thread starts on the CPU
      try {
        for (int r = 0; r < kRepeats; ++r) results[std::size_t(j)].push_back(job(j));
      } catch (...) {
        errors[std::size_t(j)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int j = 0; j < 4; ++j) {
    INFO("job " << j);
    if (errors[std::size_t(j)]) std::rethrow_exception(errors[std::size_t(j)]);
    REQUIRE(results[std::size_t(j)].size() == std::size_t(kRepeats));
    for (const Vec& r : results[std::size_t(j)]) {
      require_close(tensor(r, {int64_t(r.size())}), sequential[std::size_t(j)], 1e-14);
    }
  }
}
