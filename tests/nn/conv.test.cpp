// SPDX-License-Identifier: MIT
// Tests for nn/conv.hpp: Conv's parameters (names, shapes, PyTorch's initialisation bounds),
// its forward pass against st::conv on the same parameters, gradients with respect to the
// parameter map (against finite differences), MaxPool, and their errors.
#include <cmath>
#include <type_traits>

#include "helpers.hpp"
#include "support/check_grads.hpp"
#include "support/message_of.hpp"

namespace st = strata;
namespace nn = st::nn;
using Catch::Matchers::Contains;

TEST_CASE("Conv: parameters as PyTorch's, forward pass through st::conv", "[nn][conv]") {
  const nn::Conv conv(4, 6, {3, 2}, {.stride = {2}, .padding = {1}, .groups = 2}, true, st::f64,
                      "c1.");
  const nn::Params p = conv.init(7);
  REQUIRE(p.size() == 2);
  CHECK(p.at("c1.weight").shape() == st::Shape{6, 2, 3, 2});
  CHECK(p.at("c1.bias").shape() == st::Shape{6});
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 4 / 2 * 3 * 2 = 12.
  const double bound = 1 / std::sqrt(12.0);
  for (const auto& [name, t] : p) {
    for (double v : t.to_vector<double>()) CHECK(std::abs(v) <= bound);
    CHECK(st::max(st::abs(t)).item<double>() > 0.2 * bound);
  }
  CHECK(conv.init(7).at("c1.weight").to_vector<double>() == p.at("c1.weight").to_vector<double>());
  CHECK(conv.init(8).at("c1.weight").to_vector<double>() != p.at("c1.weight").to_vector<double>());
  const st::Tensor x = st::randn({2, 4, 5, 6}, 3971, st::f64);
  const st::Tensor y = conv(p, x);
  const st::Tensor want = st::conv(x, p.at("c1.weight"), p.at("c1.bias"), conv.options());
  CHECK(y.shape() == st::Shape{2, 6, 3, 4});
  CHECK(y.to_vector<double>() == want.to_vector<double>());
  // Without bias, unbatched.
  const nn::Conv plain(4, 3, {2}, {}, false, st::f64);
  const nn::Params q = plain.init(1);
  CHECK(q.size() == 1);
  CHECK(plain(q, st::ones({4, 5}, st::f64)).shape() == st::Shape{3, 4});
}

TEST_CASE("Conv and MaxPool: gradients with respect to the parameters", "[nn][conv]") {
  const nn::Conv conv(2, 3, {2, 2}, {.padding = {1}}, true, st::f64);
  const nn::Params p = conv.init(3);
  const st::Tensor x = st::randn({1, 2, 4, 3}, 3972, st::f64);
  const nn::MaxPool pool({2, 2}, {.ceil_mode = true});
  // grad over the map equals check_grads' finite differences on each tensor in turn.
  st::testing::check_grads<2>(
      [&](const auto& w, const auto& b) {
        using T = std::decay_t<decltype(w)>;
        const nn::ParamsOf<T> m{{"weight", w}, {"bias", b}};
        return st::sin(pool(conv(m, x)));
      },
      {p.at("weight"), p.at("bias")});
  const nn::Params g = st::grad([&](const auto& m) { return st::sum(pool(conv(m, x))); }, p);
  CHECK(g.at("weight").shape() == st::Shape{3, 2, 2, 2});
  CHECK(g.at("bias").shape() == st::Shape{3});
}

TEST_CASE("Conv and MaxPool: errors name the layer and the shapes", "[nn][conv]") {
  using st::testing::message_of;
  CHECK_THROWS_AS(nn::Conv(3, 4, {3}, {.groups = 2}), st::ValueError);
  CHECK_THROWS_AS(nn::Conv(0, 4, {3}), st::ValueError);
  CHECK_THROWS_AS(nn::Conv(2, 4, {3, 0}), st::ValueError);
  CHECK_THROWS_AS(nn::Conv(2, 4, {}), st::ValueError);
  CHECK_THROWS_AS(nn::Conv(2, 4, {3}, {}, true, st::i64), st::DTypeError);
  CHECK_THROWS_AS(nn::MaxPool({}), st::ValueError);
  const nn::Conv conv(2, 4, {3, 3});
  nn::Params p = conv.init(0);
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)conv(p, st::zeros({1, 3, 5, 5}));
             }),
             Contains("3 channels"));
  p["weight"] = st::zeros({4, 2, 3});
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)conv(p, st::zeros({1, 2, 5, 5}));
             }),
             Contains("Conv") && Contains("'weight'") && Contains("[4, 2, 3, 3]"));
  p.erase("bias");
  p["weight"] = st::zeros({4, 2, 3, 3});
  CHECK_THROWS_AS(conv(p, st::zeros({1, 2, 5, 5})), st::ValueError);
}
