// SPDX-License-Identifier: MIT
// Tests for trees of tensors as transform arguments (ad/tree.hpp): gradients
// and tangents come back in the structure of the arguments, with values from
// closed forms evaluated by f64 loops here.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <strata.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/transforms_ref.hpp"

namespace st = strata;
using st::testing::f64s;
using transforms_ref::dot;
using transforms_ref::scalar;

namespace {

using Vec = std::vector<double>;

void require_leaf(const st::Tensor& t, const st::Shape& shape, const Vec& expected,
                  double tol = 1e-10) {
  INFO("shape " << t.shape() << ", expected " << shape);
  REQUIRE(t.shape() == shape);
  REQUIRE(t.dtype() == st::f64);
  const Vec got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    REQUIRE(std::abs(got[i] - expected[i]) <= tol * (1.0 + std::abs(expected[i])));
  }
}

/// Central difference of a scalar f64 function at x along coordinate i.
template <class Fn>
double fd_partial(Fn f, Vec x, std::size_t i, double h = 1e-6) {
  x[i] += h;
  const double up = f(x);
  x[i] -= 2 * h;
  return (up - f(x)) / (2 * h);
}

}  // namespace

TEST_CASE("grad with a std::vector of tensors", "[ad]") {
  // f(p) = sum(p0 * p0) * p2 + sum(sin(p1)): grads 2 p0 p2, cos(p1), sum(p0^2).
  const Vec a = {0.5, -1.5, 2.0}, b = {0.25, 1.0, -0.75, 2.5};
  const double c = -1.25;
  const std::vector<st::Tensor> p = {f64s(a, {3}), f64s(b, {2, 2}), scalar(c)};
  auto f = [](const auto& q) { return st::sum(q[0] * q[0]) * q[2] + st::sum(st::sin(q[1])); };
  auto g = st::grad(f, p);
  static_assert(std::is_same_v<decltype(g), std::vector<st::Tensor>>);
  REQUIRE(g.size() == 3);
  Vec ga, gb;
  for (double v : a) ga.push_back(2 * v * c);
  for (double v : b) gb.push_back(std::cos(v));
  require_leaf(g[0], {3}, ga);
  require_leaf(g[1], {2, 2}, gb);
  require_leaf(g[2], {}, {dot(a, a)});

  SECTION("value_and_grad and vjp keep the structure") {
    auto [v, g2] = st::value_and_grad(f, p);
    double expected = dot(a, a) * c;
    for (double x : b) expected += std::sin(x);
    CHECK(v.item<double>() == Approx(expected));
    require_leaf(g2[1], {2, 2}, gb);
    auto [y, pullback] = st::vjp(f, p);
    const std::vector<st::Tensor> ct = pullback(scalar(-2.0));
    REQUIRE(ct.size() == 3);
    Vec scaled;
    for (double x : ga) scaled.push_back(-2.0 * x);
    require_leaf(ct[0], {3}, scaled);
  }
}

TEST_CASE("grad with a std::array of tensors", "[ad]") {
  const Vec a = {1.0, -2.0, 0.5, 3.0, -0.25, 1.5}, b = {0.75, 2.0, -1.0, 0.5, 4.0, -3.0};
  const std::array<st::Tensor, 2> p = {f64s(a, {2, 3}), f64s(b, {2, 3})};
  auto g = st::grad([](const auto& q) { return st::sum(q[0] * q[1]); }, p);
  static_assert(std::is_same_v<decltype(g), std::array<st::Tensor, 2>>);
  require_leaf(g[0], {2, 3}, b);
  require_leaf(g[1], {2, 3}, a);
}

TEST_CASE("grad with a std::map of tensors", "[ad]") {
  // f(p) = sum(tanh(W x + b)): dW[i, j] = (1 - t_i^2) x_j, db = 1 - t^2.
  const Vec wv = {0.5, -0.25, 1.0, 0.75, 0.125, -1.5}, bv = {0.1, -0.2}, xv = {1.0, -0.5, 2.0};
  const std::map<std::string, st::Tensor> p = {{"w", f64s(wv, {2, 3})}, {"b", f64s(bv, {2})}};
  const st::Tensor x = f64s(xv, {3});
  auto f = [&x](const auto& q) { return st::sum(st::tanh(st::matmul(q.at("w"), x) + q.at("b"))); };
  auto g = st::grad(f, p);
  static_assert(std::is_same_v<decltype(g), std::map<std::string, st::Tensor>>);
  REQUIRE(g.size() == 2);
  REQUIRE(g.count("w") == 1);
  REQUIRE(g.count("b") == 1);
  Vec gw, gb;
  for (std::size_t i = 0; i < 2; ++i) {
    double z = bv[i];
    for (std::size_t j = 0; j < 3; ++j) z += wv[i * 3 + j] * xv[j];
    const double d = 1 - std::tanh(z) * std::tanh(z);
    gb.push_back(d);
    for (std::size_t j = 0; j < 3; ++j) gw.push_back(d * xv[j]);
  }
  require_leaf(g.at("w"), {2, 3}, gw);
  require_leaf(g.at("b"), {2}, gb);
}

// A std::tuple as the only argument: the tuple itself is the tree.
TEST_CASE("grad with a std::tuple of a tensor and a vector", "[ad]") {
  // f(t) = sum(t0 * t1[0]) + sum(exp(t1[1])).
  const Vec a = {0.5, -1.0}, b = {2.0, 3.0}, c = {0.25, -0.5, 1.0};
  const std::tuple<st::Tensor, std::vector<st::Tensor>> p{
      f64s(a, {2}), std::vector<st::Tensor>{f64s(b, {2}), f64s(c, {3})}};
  auto f = [](const auto& t) {
    const auto& rest = std::get<1>(t);
    return st::sum(std::get<0>(t) * rest[0]) + st::sum(st::exp(rest[1]));
  };
  auto g = st::grad(f, p);
  static_assert(std::is_same_v<decltype(g), std::tuple<st::Tensor, std::vector<st::Tensor>>>);
  require_leaf(std::get<0>(g), {2}, b);
  REQUIRE(std::get<1>(g).size() == 2);
  require_leaf(std::get<1>(g)[0], {2}, a);
  Vec ec;
  for (double v : c) ec.push_back(std::exp(v));
  require_leaf(std::get<1>(g)[1], {3}, ec);
  auto [y, pullback] = st::vjp(f, p);
  auto ct = pullback(scalar(2.0));
  require_leaf(std::get<0>(ct), {2}, {2 * b[0], 2 * b[1]});
}

TEST_CASE("grad with a std::tuple tree beside another argument", "[ad]") {
  // f(s, t) = s * (sum(t0 * t1[0]) + sum(exp(t1[1]))).
  const Vec a = {0.5, -1.0}, b = {2.0, 3.0}, c = {0.25, -0.5, 1.0};
  const double s = 1.5;
  const std::tuple<st::Tensor, std::vector<st::Tensor>> p{
      f64s(a, {2}), std::vector<st::Tensor>{f64s(b, {2}), f64s(c, {3})}};
  auto f = [](const auto& k, const auto& t) {
    const auto& rest = std::get<1>(t);
    return k * (st::sum(std::get<0>(t) * rest[0]) + st::sum(st::exp(rest[1])));
  };
  auto [gs, g] = st::grad(f, scalar(s), p);
  static_assert(std::is_same_v<decltype(g), std::tuple<st::Tensor, std::vector<st::Tensor>>>);
  double inner = dot(a, b);
  Vec ec;
  for (double v : c) {
    ec.push_back(s * std::exp(v));
    inner += std::exp(v);
  }
  require_leaf(gs, {}, {inner});
  require_leaf(std::get<0>(g), {2}, {s * b[0], s * b[1]});
  REQUIRE(std::get<1>(g).size() == 2);
  require_leaf(std::get<1>(g)[0], {2}, {s * a[0], s * a[1]});
  require_leaf(std::get<1>(g)[1], {3}, ec);
}

TEST_CASE("grad with a nested map of vectors (a two-layer network)", "[ad]") {
  // y = sum(W2 tanh(W1 x + b1) + b2), W1 [3, 2], b1 [3], W2 [2, 3], b2 [2], x [2].
  const Vec w1 = {0.5, -0.3, 0.8, 0.1, -0.6, 0.4}, b1 = {0.05, -0.1, 0.2};
  const Vec w2 = {1.2, -0.7, 0.3, 0.4, 0.9, -1.1}, b2 = {0.3, -0.2}, xv = {0.7, -1.3};
  using Params = std::map<std::string, std::vector<st::Tensor>>;
  const Params p = {{"layer1", {f64s(w1, {3, 2}), f64s(b1, {3})}},
                    {"layer2", {f64s(w2, {2, 3}), f64s(b2, {2})}}};
  const st::Tensor x = f64s(xv, {2});
  auto f = [&x](const auto& q) {
    const auto& l1 = q.at("layer1");
    const auto& l2 = q.at("layer2");
    const auto h = st::tanh(st::matmul(l1[0], x) + l1[1]);
    return st::sum(st::matmul(l2[0], h) + l2[1]);
  };
  // The same network in f64 loops, on a flat parameter vector (w1, b1, w2, b2).
  auto f_ref = [&](const Vec& flat) {
    double y = flat[15] + flat[16];
    for (std::size_t i = 0; i < 3; ++i) {
      double z = flat[6 + i];
      for (std::size_t j = 0; j < 2; ++j) z += flat[i * 2 + j] * xv[j];
      const double h = std::tanh(z);
      for (std::size_t k = 0; k < 2; ++k) y += flat[9 + k * 3 + i] * h;
    }
    return y;
  };
  Vec flat;
  for (const Vec* part : {&w1, &b1, &w2, &b2}) flat.insert(flat.end(), part->begin(), part->end());
  REQUIRE(flat.size() == 17);
  Vec fd;
  for (std::size_t i = 0; i < flat.size(); ++i) fd.push_back(fd_partial(f_ref, flat, i));
  auto part = [&](std::size_t from, std::size_t n) {
    return Vec(fd.begin() + std::ptrdiff_t(from), fd.begin() + std::ptrdiff_t(from + n));
  };

  auto [v, g] = st::value_and_grad(f, p);
  static_assert(std::is_same_v<decltype(g), Params>);
  CHECK(v.item<double>() == Approx(f_ref(flat)));
  REQUIRE(g.size() == 2);
  REQUIRE(g.at("layer1").size() == 2);
  REQUIRE(g.at("layer2").size() == 2);
  require_leaf(g.at("layer1")[0], {3, 2}, part(0, 6), 1e-7);
  require_leaf(g.at("layer1")[1], {3}, part(6, 3), 1e-7);
  require_leaf(g.at("layer2")[0], {2, 3}, part(9, 6), 1e-7);
  require_leaf(g.at("layer2")[1], {2}, part(15, 2), 1e-7);
  // Closed form for the last layer: dW2[k, i] = tanh(z_i), db2 = 1.
  Vec gw2;
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t i = 0; i < 3; ++i) {
      double z = b1[i];
      for (std::size_t j = 0; j < 2; ++j) z += w1[i * 2 + j] * xv[j];
      gw2.push_back(std::tanh(z));
    }
  }
  require_leaf(g.at("layer2")[0], {2, 3}, gw2);
  require_leaf(g.at("layer2")[1], {2}, {1.0, 1.0});
}

TEST_CASE("jvp with tree primals and tangents", "[ad]") {
  SECTION("std::vector") {
    const Vec a = {0.5, -1.5, 2.0}, b = {1.0, 0.25, -0.5}, va = {0.3, 0.1, -0.2},
              vb = {-1.0, 2.0, 0.5};
    const std::vector<st::Tensor> p = {f64s(a, {3}), f64s(b, {3})};
    const std::vector<st::Tensor> v = {f64s(va, {3}), f64s(vb, {3})};
    auto [y, dy] = st::jvp([](const auto& q) { return st::sum(q[0] * q[1]); }, p, v);
    CHECK(y.item<double>() == Approx(dot(a, b)));
    CHECK(dy.item<double>() == Approx(dot(va, b) + dot(a, vb)));
  }
  SECTION("std::map with a vector-valued output") {
    const Vec wv = {0.5, -0.25, 1.0, 0.75}, bv = {0.1, -0.2}, xv = {1.0, -0.5};
    const Vec dw = {0.2, 0.4, -0.1, 0.3}, db = {-0.5, 0.25};
    const st::Tensor x = f64s(xv, {2});
    const std::map<std::string, st::Tensor> p = {{"w", f64s(wv, {2, 2})}, {"b", f64s(bv, {2})}};
    const std::map<std::string, st::Tensor> t = {{"w", f64s(dw, {2, 2})}, {"b", f64s(db, {2})}};
    auto f = [&x](const auto& q) { return st::tanh(st::matmul(q.at("w"), x) + q.at("b")); };
    auto [y, dy] = st::jvp(f, p, t);
    Vec ey, edy;
    for (std::size_t i = 0; i < 2; ++i) {
      double z = bv[i], dz = db[i];
      for (std::size_t j = 0; j < 2; ++j) z += wv[i * 2 + j] * xv[j], dz += dw[i * 2 + j] * xv[j];
      ey.push_back(std::tanh(z));
      edy.push_back((1 - std::tanh(z) * std::tanh(z)) * dz);
    }
    require_leaf(y, {2}, ey);
    require_leaf(dy, {2}, edy);
  }
  SECTION("std::tuple, std::array and nesting") {
    const std::tuple<st::Tensor, std::array<st::Tensor, 2>> p{
        scalar(2.0), std::array<st::Tensor, 2>{scalar(3.0), scalar(-1.0)}};
    const std::tuple<st::Tensor, std::array<st::Tensor, 2>> t{
        scalar(0.5), std::array<st::Tensor, 2>{scalar(1.0), scalar(2.0)}};
    // f = a * b * c: df = bc da + ac db + ab dc = -3 (0.5) - 2 (1) + 6 (2) = 8.5.
    auto f = [](const auto& q) {
      const auto& arr = std::get<1>(q);
      return std::get<0>(q) * arr[0] * arr[1];
    };
    auto [y, dy] = st::jvp(f, p, t);
    CHECK(y.item<double>() == Approx(-6.0));
    CHECK(dy.item<double>() == Approx(8.5));
  }
  SECTION("trees that do not match") {
    const std::vector<st::Tensor> p = {scalar(1.0), scalar(2.0)};
    const std::vector<st::Tensor> short_t = {scalar(1.0)};
    auto f = [](const auto& q) { return q[0] * q[1]; };
    CHECK_THROWS_AS(st::jvp(f, p, short_t), st::ShapeError);
    const std::map<std::string, st::Tensor> m = {{"a", scalar(1.0)}};
    const std::map<std::string, st::Tensor> other = {{"b", scalar(1.0)}};
    CHECK_THROWS_AS(st::jvp([](const auto& q) { return q.at("a"); }, m, other), st::ShapeError);
  }
}

TEST_CASE("multi-argument grad with trees", "[ad]") {
  // f(ps, s) = s * sum(ps0 * ps1): d/dps0 = s ps1, d/dps1 = s ps0, d/ds = sum(ps0 ps1).
  const Vec a = {1.0, 2.0}, b = {-0.5, 3.0};
  const std::vector<st::Tensor> ps = {f64s(a, {2}), f64s(b, {2})};
  auto [gp, gs] = st::grad([](const auto& q, const auto& s) { return s * st::sum(q[0] * q[1]); },
                           ps, scalar(1.5));
  static_assert(std::is_same_v<decltype(gp), std::vector<st::Tensor>>);
  static_assert(std::is_same_v<decltype(gs), st::Tensor>);
  require_leaf(gp[0], {2}, {1.5 * b[0], 1.5 * b[1]});
  require_leaf(gp[1], {2}, {1.5 * a[0], 1.5 * a[1]});
  require_leaf(gs, {}, {dot(a, b)});
}
