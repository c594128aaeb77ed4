// SPDX-License-Identifier: MIT
// Tests for nn/layers.hpp: Linear, MLP, Embedding and the activations against
// plain f64 loops, their derivatives (to second order, through every mode)
// against finite differences, and their errors.
#include <cmath>
#include <numbers>
#include <set>

#include "helpers.hpp"
#include "support/check_grads.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
namespace nn = st::nn;

namespace {

/// y[r, o] = sum_k x[r, k] w[o, k] + b[o] for row-major x [rows, in], w [out, in].
Vec linear_ref(const Vec& x, const Vec& w, const Vec& b, std::size_t in, std::size_t out) {
  const std::size_t rows = x.size() / in;
  Vec y(rows * out);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (std::size_t k = 0; k < in; ++k) s += x[r * in + k] * w[o * in + k];
      y[r * out + o] = s;
    }
  }
  return y;
}

nn::Params f64_params(const nn::Params& p) {
  nn::Params out;
  for (const auto& [k, v] : p) out.emplace(k, v.to(st::f64));
  return out;
}

}  // namespace

TEST_CASE("Linear forward matches a loop, for inputs of rank 1 to 3", "[nn]") {
  const nn::Linear lin(4, 3, true, st::f64);
  const Vec w = random_values(12, 1), b = random_values(3, 2), x = random_values(2 * 5 * 4, 3);
  const nn::Params p{{"weight", tensor(w, {3, 4})}, {"bias", tensor(b, {3})}};
  SECTION("rank 2") {
    const Vec xs(x.begin(), x.begin() + 20);
    const st::Tensor y = lin(p, tensor(xs, {5, 4}));
    CHECK(y.shape() == st::Shape{5, 3});
    require_close(y, linear_ref(xs, w, b, 4, 3));
  }
  SECTION("rank 3 (leading axes are batch axes)") {
    const st::Tensor y = lin(p, tensor(x, {2, 5, 4}));
    CHECK(y.shape() == st::Shape{2, 5, 3});
    require_close(y, linear_ref(x, w, b, 4, 3));
  }
  SECTION("rank 1") {
    const Vec xs(x.begin(), x.begin() + 4);
    const st::Tensor y = lin(p, tensor(xs, {4}));
    CHECK(y.shape() == st::Shape{3});
    require_close(y, linear_ref(xs, w, b, 4, 3));
  }
  SECTION("without bias") {
    const nn::Linear nobias(4, 3, false, st::f64);
    const Vec xs(x.begin(), x.begin() + 20);
    require_close(nobias(nn::Params{{"weight", tensor(w, {3, 4})}}, tensor(xs, {5, 4})),
                  linear_ref(xs, w, {}, 4, 3));
    CHECK(nobias.init(0).size() == 1);
  }
}

TEST_CASE("Linear init: PyTorch's default bounds, seeded", "[nn]") {
  const nn::Linear lin(16, 8);
  const nn::Params a = lin.init(7), b = lin.init(7), c = lin.init(8);
  REQUIRE(a.size() == 2);
  CHECK(a.at("weight").shape() == st::Shape{8, 16});
  CHECK(a.at("bias").shape() == st::Shape{8});
  CHECK(a.at("weight").dtype() == st::f32);
  const double bound = 1.0 / std::sqrt(16.0);
  for (const auto& [name, t] : a) {
    const Vec v = t.to_vector<double>();
    CHECK(v == b.at(name).to_vector<double>());
    CHECK(v != c.at(name).to_vector<double>());
    CHECK(std::set<double>(v.begin(), v.end()).size() == v.size());  // no repeats
    for (double e : v) CHECK((e >= -bound && e < bound));
  }
}

TEST_CASE("Linear and MLP reject bad input", "[nn]") {
  const nn::Linear lin(4, 3);
  const nn::Params p = lin.init(0);
  CHECK_THAT(message_of<st::ShapeError>([&] {
               lin(p, st::zeros({5, 3}));
             }),
             Contains("[5, 3]") && Contains("in_features = 4"));
  CHECK_THAT(message_of<st::ShapeError>([&] { lin(p, st::zeros({})); }), Contains("Linear"));
  CHECK_THAT(message_of<st::ValueError>([&] {
               lin(nn::Params{{"bias", p.at("bias")}}, st::zeros({2, 4}));
             }),
             Contains("'weight'") && Contains("bias"));
  nn::Params wrong = p;
  wrong["weight"] = st::zeros({4, 3});
  CHECK_THAT(message_of<st::ShapeError>([&] {
               lin(wrong, st::zeros({2, 4}));
             }),
             Contains("'weight'") && Contains("[4, 3]") && Contains("[3, 4]"));
  CHECK_THROWS_AS(nn::Linear(0, 3), st::ValueError);
  CHECK_THROWS_AS(nn::Linear(2, 3, true, st::i64), st::DTypeError);
  CHECK_THROWS_AS(nn::MLP({4}), st::ValueError);
  const nn::MLP mlp({4, 8, 2});
  CHECK_THAT(message_of<st::ValueError>([&] {
               mlp(lin.init(0), st::zeros({2, 4}));
             }),
             Contains("'0.weight'"));
}

TEST_CASE("MLP: names, shapes, and the forward pass against a loop", "[nn]") {
  const nn::MLP mlp({3, 5, 4, 2}, nn::Activation::tanh, st::f64);
  const nn::Params p = mlp.init(11);
  std::set<std::string> names;
  for (const auto& [k, v] : p) names.insert(k);
  CHECK(names ==
        std::set<std::string>{"0.bias", "0.weight", "1.bias", "1.weight", "2.bias", "2.weight"});
  CHECK(p.at("1.weight").shape() == st::Shape{4, 5});
  CHECK(nn::num_parameters(p) == 3 * 5 + 5 + 5 * 4 + 4 + 4 * 2 + 2);
  CHECK(p.at("0.weight").to_vector<double>() != p.at("1.weight").to_vector<double>());

  const Vec x = random_values(6 * 3, 21, -2, 2);
  Vec h = x;
  std::size_t width = 3;
  const std::vector<std::size_t> widths{3, 5, 4, 2};
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    const std::string k = std::to_string(i);
    h = linear_ref(h, p.at(k + ".weight").to_vector<double>(),
                   p.at(k + ".bias").to_vector<double>(), width, widths[i + 1]);
    if (i + 2 < widths.size()) {
      for (double& e : h) e = std::tanh(e);
    }
    width = widths[i + 1];
  }
  require_close(mlp(p, tensor(x, {6, 3})), h);
}

TEST_CASE("activations against their closed forms", "[nn]") {
  const Vec x = random_values(40, 5, -6, 6);
  auto each = [&](nn::Activation a, double (*f)(double)) {
    INFO(nn::activation_name(a));
    Vec want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = f(x[i]);
    require_close(nn::activate(a, tensor(x, {40})), want, 1e-12);
    CHECK(nn::activation_from_name(nn::activation_name(a)) == a);
  };
  each(nn::Activation::identity, [](double v) { return v; });
  each(nn::Activation::relu, [](double v) { return v > 0 ? v : 0.0; });
  each(nn::Activation::tanh, [](double v) { return std::tanh(v); });
  each(nn::Activation::sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); });
  each(nn::Activation::silu, [](double v) { return v / (1 + std::exp(-v)); });
  each(nn::Activation::softplus, [](double v) { return std::log1p(std::exp(v)); });
  each(nn::Activation::gelu, [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
  });
  CHECK_THAT(message_of<st::ValueError>([] { nn::activation_from_name("swish"); }),
             Contains("swish"));
}

TEST_CASE("derivatives through an MLP match finite differences", "[nn]") {
  const nn::MLP mlp({3, 6, 2}, nn::Activation::tanh, st::f64);
  const nn::Params p = mlp.init(3);
  const st::Tensor x = tensor(random_values(4 * 3, 31), {4, 3});
  SECTION("with respect to the input, to order 2, every mode") {
    st::testing::check_grads<2>([&](const auto& v) { return mlp(p, v); }, {x});
  }
  SECTION("with respect to one weight, to order 2 (parameters lifted to the argument's level)") {
    auto f = [&](const auto& w) {
      using U = std::decay_t<decltype(w)>;
      nn::ParamsOf<U> q;
      for (const auto& [k, v] : p) q.emplace(k, st::lift<U>(v));
      q["0.weight"] = w;
      return mlp(q, x);
    };
    st::testing::check_grads<2>(f, {p.at("0.weight")});
  }
  SECTION("st::grad of a loss over the whole parameter map, along a random direction") {
    const st::Tensor y = tensor(random_values(4 * 2, 32), {4, 2});
    auto loss = [&](const auto& q) { return nn::mse(mlp(q, x), y); };
    const nn::Params g = st::grad(loss, p);
    REQUIRE(g.size() == p.size());
    double ad = 0;
    nn::Params plus, minus;
    const double eps = 1e-6;
    uint64_t seed = 100;
    for (const auto& [k, v] : p) {
      REQUIRE(g.at(k).shape() == v.shape());
      const st::Tensor dir = tensor(random_values(std::size_t(v.numel()), seed++), v.shape());
      ad += st::sum(g.at(k) * dir).item<double>();
      plus.emplace(k, v + dir * eps);
      minus.emplace(k, v - dir * eps);
    }
    const double fd = (loss(plus).item<double>() - loss(minus).item<double>()) / (2 * eps);
    CHECK(std::abs(ad - fd) <= 1e-7 * (1 + std::abs(fd)));
  }
  SECTION("st::hessian with respect to the input is symmetric and matches finite differences") {
    const st::Tensor x1 = tensor(random_values(3, 33), {3});
    auto f = [&](const auto& v) { return st::sum(mlp(p, v)); };
    const st::Tensor H = st::hessian(f, x1);
    REQUIRE(H.shape() == st::Shape{3, 3});
    const Vec h = H.to_vector<double>(), xv = x1.to_vector<double>();
    const double e = 1e-4;
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 3; ++j) {
        auto at = [&](double si, double sj) {
          Vec y = xv;
          y[i] += si * e;
          y[j] += sj * e;
          return f(tensor(y, {3})).item<double>();
        };
        const double fd = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * e * e);
        CHECK(std::abs(h[i * 3 + j] - fd) <= 1e-5 * (1 + std::abs(fd)));
        CHECK(h[i * 3 + j] == Approx(h[j * 3 + i]).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("f64 parameters converted from an f32 init give the same MLP", "[nn]") {
  const nn::MLP mlp32({2, 3, 1});
  const nn::Params p = mlp32.init(1);
  const st::Tensor x = tensor(random_values(8, 41), {4, 2});
  const Vec a = mlp32(p, x.to(st::f32)).to_vector<double>();
  const Vec b = mlp32(f64_params(p), x).to_vector<double>();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-5));
}

TEST_CASE("Embedding looks up rows; its gradient scatters back, duplicates adding", "[nn]") {
  const nn::Embedding emb(5, 3, st::f64);
  const nn::Params p = emb.init(2);
  const Vec w = p.at("weight").to_vector<double>();
  const std::vector<int64_t> ids{4, 0, 4, 2, 1, 4};
  const st::Tensor idx = st::from_vector(ids, {2, 3});
  const st::Tensor y = emb(p, idx);
  REQUIRE(y.shape() == st::Shape{2, 3, 3});
  Vec want;
  for (int64_t i : ids) {
    for (int d = 0; d < 3; ++d) want.push_back(w[std::size_t(i) * 3 + d]);
  }
  require_close(y, want, 0);
  // d/dW sum(emb(W)[idx] * c) adds c's rows into the looked-up rows.
  const Vec c = random_values(18, 3);
  const nn::Params g = st::grad(
      [&](const auto& q) {
        return st::sum(emb(q, idx) * tensor(c, {2, 3, 3}));
      },
      p);
  Vec gw(15, 0.0);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    for (int d = 0; d < 3; ++d) gw[std::size_t(ids[k]) * 3 + d] += c[k * 3 + d];
  }
  require_close(g.at("weight"), gw);
  // i32 indices work too; bad indices throw.
  CHECK(emb(p, idx.to(st::i32)).to_vector<double>() == y.to_vector<double>());
  CHECK_THAT(message_of<st::IndexError>([&] {
               emb(p, st::from_vector(std::vector<int64_t>{1, 5}));
             }),
             Contains("5") && Contains("[0, 5)"));
  CHECK_THROWS_AS(emb(p, st::from_vector(std::vector<int64_t>{-1})), st::IndexError);
  CHECK_THROWS_AS(emb(p, st::from_vector(std::vector<double>{1.0})), st::DTypeError);
  // Init: N(0, 1), seeded.
  const Vec big = nn::Embedding(200, 50).init(9).at("weight").to_vector<double>();
  double mean = 0, sq = 0;
  for (double v : big) mean += v / double(big.size());
  for (double v : big) sq += (v - mean) * (v - mean) / double(big.size());
  CHECK(std::abs(mean) < 0.03);
  CHECK(std::abs(std::sqrt(sq) - 1) < 0.03);
}
