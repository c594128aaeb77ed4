// SPDX-License-Identifier: MIT
// Tests for nn/losses.hpp: values against f64 loops (log-sum-exp written out
// here), gradients against closed forms and finite differences, stability at
// extreme logits, and the errors for bad labels and shapes.
#include <cmath>

#include "helpers.hpp"
#include "support/check_grads.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
namespace nn = st::nn;

TEST_CASE("mse: value and gradient", "[nn]") {
  const Vec p = random_values(12, 1), t = random_values(12, 2);
  double want = 0;
  Vec grad(12);
  for (std::size_t i = 0; i < 12; ++i) {
    want += (p[i] - t[i]) * (p[i] - t[i]) / 12;
    grad[i] = 2 * (p[i] - t[i]) / 12;
  }
  const st::Tensor P = tensor(p, {3, 4}), T = tensor(t, {3, 4});
  CHECK(nn::mse(P, T).item<double>() == Approx(want).epsilon(1e-14));
  CHECK(nn::mse(P, T).shape() == st::Shape{});
  require_close(st::grad([&](const auto& x) { return nn::mse(x, T); }, P), grad);
  st::testing::check_grads<2>([](const auto& a, const auto& b) { return nn::mse(a, b); }, {P, T});
  CHECK_THAT(message_of<st::ShapeError>([&] { nn::mse(P, tensor(t, {12})); }),
             Contains("[3, 4]") && Contains("[12]"));
}

TEST_CASE("cross_entropy: value, gradient, stability, labels", "[nn]") {
  const std::size_t n = 5, c = 4;
  const Vec z = random_values(n * c, 3, -3, 3);
  const std::vector<int64_t> labels{2, 0, 3, 3, 1};
  // Reference: mean of logsumexp(row) - row[label], and (softmax - onehot) / n.
  double want = 0;
  Vec grad(n * c);
  for (std::size_t i = 0; i < n; ++i) {
    double m = -INFINITY;
    for (std::size_t j = 0; j < c; ++j) m = std::max(m, z[i * c + j]);
    double s = 0;
    for (std::size_t j = 0; j < c; ++j) s += std::exp(z[i * c + j] - m);
    const double lse = m + std::log(s);
    want += (lse - z[i * c + std::size_t(labels[i])]) / double(n);
    for (std::size_t j = 0; j < c; ++j) {
      grad[i * c + j] =
          (std::exp(z[i * c + j] - lse) - (int64_t(j) == labels[i] ? 1.0 : 0.0)) / double(n);
    }
  }
  const st::Tensor Z = tensor(z, {int64_t(n), int64_t(c)});
  const st::Tensor L = st::from_vector(labels);
  CHECK(nn::cross_entropy(Z, L).item<double>() == Approx(want).epsilon(1e-14));
  CHECK(nn::cross_entropy(Z, L.to(st::i32)).item<double>() == Approx(want).epsilon(1e-14));
  require_close(st::grad([&](const auto& x) { return nn::cross_entropy(x, L); }, Z), grad);
  st::testing::check_grads<2>([&](const auto& x) { return nn::cross_entropy(x, L); }, {Z});

  SECTION("huge logits stay finite and exact") {
    // Shifting a row by a constant does not change the loss.
    Vec shifted = z;
    for (std::size_t k = 0; k < shifted.size(); ++k) shifted[k] += k < c ? 1000.0 : -800.0;
    const double v = nn::cross_entropy(tensor(shifted, {int64_t(n), int64_t(c)}), L).item<double>();
    CHECK(v == Approx(want).epsilon(1e-10));
    const st::Tensor g = st::grad([&](const auto& x) { return nn::cross_entropy(x, L); },
                                  tensor(shifted, {int64_t(n), int64_t(c)}));
    require_close(g, grad, 1e-10);
  }
  SECTION("f32 logits give an f32 loss close to the f64 one") {
    const st::Tensor v = nn::cross_entropy(Z.to(st::f32), L);
    CHECK(v.dtype() == st::f32);
    CHECK(v.item<double>() == Approx(want).epsilon(1e-5));
  }
  SECTION("bad labels and shapes") {
    CHECK_THAT(message_of<st::IndexError>([&] {
                 nn::cross_entropy(Z, st::from_vector(std::vector<int64_t>{0, 1, 4, 0, 0}));
               }),
               Contains("label 4") && Contains("position 2") && Contains("[0, 4)"));
    CHECK_THROWS_AS(nn::cross_entropy(Z, st::from_vector(std::vector<int64_t>{0, 1, -1, 0, 0})),
                    st::IndexError);
    CHECK_THAT(message_of<st::DTypeError>([&] { nn::cross_entropy(Z, L.to(st::f32)); }),
               Contains("labels"));
    CHECK_THAT(message_of<st::ShapeError>([&] {
                 nn::cross_entropy(Z, st::from_vector(std::vector<int64_t>{0, 1}));
               }),
               Contains("[2]") && Contains("[5, 4]"));
    CHECK_THROWS_AS(nn::cross_entropy(tensor(z, {20}), L), st::ShapeError);
    CHECK_THROWS_AS(nn::cross_entropy(st::zeros({0, 3}), st::zeros({0}, st::i64)), st::ValueError);
  }
}

TEST_CASE("binary_cross_entropy from logits: value, gradient, extreme logits", "[nn]") {
  const Vec x = random_values(10, 4, -4, 4), t = random_values(10, 5, 0, 1);
  double want = 0;
  Vec grad(10);
  for (std::size_t i = 0; i < 10; ++i) {
    const double s = 1 / (1 + std::exp(-x[i]));
    want += -(t[i] * std::log(s) + (1 - t[i]) * std::log(1 - s)) / 10;
    grad[i] = (s - t[i]) / 10;
  }
  const st::Tensor X = tensor(x, {10}), T = tensor(t, {10});
  CHECK(nn::binary_cross_entropy(X, T).item<double>() == Approx(want).epsilon(1e-13));
  require_close(st::grad([&](const auto& v) { return nn::binary_cross_entropy(v, T); }, X), grad,
                1e-13);
  st::testing::check_grads<2>([&](const auto& v) { return nn::binary_cross_entropy(v, T); }, {X});
  // At |x| = 200, sigmoid is 0 or 1 in f64; the loss is still exact: for
  // target 1, -log(sigmoid(x)) = log(1 + e^-x) = 200 at x = -200 and ~0 at 200.
  const st::Tensor big = st::from_vector(Vec{-200, 200});
  const st::Tensor ones = st::from_vector(Vec{1, 1});
  CHECK(nn::binary_cross_entropy(big, ones).item<double>() == Approx(100.0).epsilon(1e-14));
  const st::Tensor g =
      st::grad([&](const auto& v) { return nn::binary_cross_entropy(v, ones); }, big);
  require_close(g, {-0.5, 0.0});
  // A confident right answer keeps its digits in f32: log(1 + e^-10) = 4.5398899e-5.
  const st::Tensor ten = st::full({1}, 10.0, st::f32), one = st::full({1}, 1.0, st::f32);
  CHECK(double(nn::binary_cross_entropy(ten, one).item<float>()) ==
        Approx(4.5398899e-5).epsilon(1e-6));
  CHECK_THROWS_AS(nn::binary_cross_entropy(X, tensor(t, {2, 5})), st::ShapeError);
}

TEST_CASE("accuracy counts argmax hits", "[nn]") {
  const st::Tensor logits = st::from_vector(
      Vec{0.1, 0.9, 0.0, /**/ 2.0, -1.0, 0.5, /**/ 0.2, 0.1, 0.3, /**/ 1, 5, 2}, {4, 3});
  const st::Tensor labels = st::from_vector(std::vector<int64_t>{1, 0, 0, 1});
  CHECK(nn::accuracy(logits, labels) == 0.75);
  CHECK(nn::accuracy(logits, labels.to(st::i32)) == 0.75);
  CHECK_THROWS_AS(nn::accuracy(logits, st::from_vector(std::vector<int64_t>{1})), st::ShapeError);
}
