// SPDX-License-Identifier: MIT
// st::value_and_grad_with_hook (ad/hooks.hpp) and the tape's LeafHook: every chosen leaf
// gets one call, with the gradient value_and_grad returns, at the moment the backward pass
// has finished accumulating it. When is observed through identity "taps" made with
// st::custom_vjp, whose backward rule logs that the pass has reached them.
#include <catch2/catch.hpp>
#include <map>
#include <strata.hpp>
#include <string>
#include <vector>

namespace st = strata;

namespace {

using Params = std::map<std::string, st::Tensor>;

// The log the taps and the hook write to, in the order things happened.
std::vector<std::string>& events() {
  static std::vector<std::string> e;
  return e;
}

// The identity; its backward rule logs "tap <name>" when the walk reaches it.
auto tap(const char* name) {
  return st::custom_vjp([](const auto& x) { return x; },
                        [](const auto& x) {
                          return std::pair{x, x};
                        },
                        [name](const auto&, const auto& g) {
                          events().push_back(std::string("tap ") + name);
                          return g;
                        },
                        name);
}

Params mlp_params() {
  return {{"w1", st::randn({3, 4}, 1, st::f64)}, {"b1", st::randn({4}, 2, st::f64)},
          {"w2", st::randn({4, 4}, 3, st::f64)}, {"b2", st::randn({4}, 4, st::f64)},
          {"w3", st::randn({4, 2}, 5, st::f64)}, {"b3", st::randn({2}, 6, st::f64)}};
}

// Three layers, a tap after each of the first two.
auto mlp_loss(const st::Tensor& x) {
  return [x](const auto& p, const auto& scale) {
    const auto t1 = tap("1"), t2 = tap("2");
    auto h1 = t1(st::tanh(st::matmul(x, p.at("w1")) + p.at("b1")));
    auto h2 = t2(st::tanh(st::matmul(h1, p.at("w2")) + p.at("b2")));
    return st::sum(st::pow(st::matmul(h2, p.at("w3")) + p.at("b3"), 2.0)) * scale;
  };
}

std::size_t position(const std::string& what) {
  const auto& e = events();
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e[i] == what) return i;
  }
  FAIL("event '" << what << "' never happened");
  return 0;
}

void require_equal(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.to_vector<double>() == b.to_vector<double>());
}

}  // namespace

TEST_CASE("value_and_grad_with_hook: each gradient when the pass has finished it", "[ad][hooks]") {
  const st::Tensor x = st::randn({5, 3}, 7, st::f64);
  const st::Tensor scale = st::full({}, 0.5, st::f64);
  const Params p = mlp_params();
  const auto loss = mlp_loss(x);
  const auto [ref_value, ref] = st::value_and_grad(loss, st::argnums<0>, p, scale);

  events().clear();
  // Map order: b1, b2, b3, w1, w2, w3.
  const std::vector<std::string> names{"b1", "b2", "b3", "w1", "w2", "w3"};
  std::vector<int> calls(names.size(), 0);
  std::map<std::string, st::Tensor> seen;
  auto hook = [&](std::size_t k, const st::Tensor& g) {
    REQUIRE(k < names.size());
    ++calls[k];
    events().push_back(names[k]);
    seen[names[k]] = g.to(st::f64) * 1.0;  // a copy, not the accumulator itself
  };
  const auto [value, grads] = st::value_and_grad_with_hook(loss, hook, st::argnums<0>, p, scale);
  CHECK(value.item<double>() == ref_value.item<double>());
  for (std::size_t k = 0; k < names.size(); ++k) {
    INFO(names[k]);
    CHECK(calls[k] == 1);
    require_equal(grads.at(names[k]), ref.at(names[k]));
    require_equal(seen.at(names[k]), ref.at(names[k]));
  }
  // Layer 3's parameters are final before the walk reaches layer 2, layer 2's before layer 1.
  CHECK(position("w3") < position("tap 2"));
  CHECK(position("b3") < position("tap 2"));
  CHECK(position("tap 2") < position("w2"));
  CHECK(position("tap 2") < position("b2"));
  CHECK(position("w2") < position("tap 1"));
  CHECK(position("b2") < position("tap 1"));
  CHECK(position("tap 1") < position("w1"));
  CHECK(position("tap 1") < position("b1"));
}

TEST_CASE("value_and_grad_with_hook: a leaf used at two depths is final after its first use",
          "[ad][hooks]") {
  const st::Tensor x = st::randn({2, 3}, 8, st::f64);
  const st::Tensor w = st::randn({3, 3}, 9, st::f64);
  // w is used in the first layer and again in the last (tied weights).
  auto loss = [&](const auto& w_) {
    const auto t = tap("middle");
    auto h = t(st::tanh(st::matmul(x, w_)));
    return st::sum(st::matmul(st::sin(h), w_));
  };
  events().clear();
  st::Tensor seen;
  int calls = 0;
  auto [value, g] = st::value_and_grad_with_hook(
      loss,
      [&](std::size_t k, const st::Tensor& gk) {
        CHECK(k == 0);
        ++calls;
        events().push_back("w");
        seen = gk * 1.0;
      },
      w);
  CHECK(calls == 1);
  CHECK(position("tap middle") < position("w"));  // not after its last-layer use alone
  require_equal(seen, st::grad(loss, w));
  require_equal(g, seen);
}

TEST_CASE("value_and_grad_with_hook: unused leaves and constant outputs get zeros", "[ad][hooks]") {
  const st::Tensor a = st::randn({2}, 10, st::f64), b = st::randn({3}, 11, st::f64);
  std::vector<st::Tensor> got(2);
  std::vector<int> calls(2, 0);
  auto hook = [&](std::size_t k, const st::Tensor& g) {
    ++calls.at(k);
    got.at(k) = g * 1.0;
  };
  SECTION("b unused") {
    auto [v, g] = st::value_and_grad_with_hook(
        [](const auto& a_, const auto&) { return st::sum(st::exp(a_)); }, hook, a, b);
    CHECK(calls == std::vector<int>{1, 1});
    require_equal(got[0], st::exp(a));
    require_equal(got[1], st::zeros({3}, st::f64));
    require_equal(std::get<1>(g), st::zeros({3}, st::f64));
  }
  SECTION("the output depends on neither") {
    const st::Tensor c = st::full({}, 2.0, st::f64);
    auto [v, g] =
        st::value_and_grad_with_hook([&](const auto&, const auto&) { return c; }, hook, a, b);
    CHECK(v.item<double>() == 2.0);
    CHECK(calls == std::vector<int>{1, 1});
    require_equal(got[0], st::zeros({2}, st::f64));
    require_equal(got[1], st::zeros({3}, st::f64));
  }
  SECTION("the output is a leaf itself") {
    const st::Tensor s = st::full({}, 3.0, st::f64);
    std::vector<st::Tensor> one(1);
    auto [v, g] = st::value_and_grad_with_hook(
        [](const auto& s_) { return s_; },
        [&](std::size_t k, const st::Tensor& gk) { one.at(k) = gk; }, s);
    require_equal(one[0], st::ones({}, st::f64));
    require_equal(g, st::ones({}, st::f64));
  }
  SECTION("argnums: only the chosen arguments' leaves, indexed from 0") {
    auto [v, g] = st::value_and_grad_with_hook(
        [](const auto& a_, const auto& b_) { return st::sum(a_) * st::sum(b_); }, hook,
        st::argnums<1>, a, b);
    CHECK(calls == std::vector<int>{1, 0});
    require_equal(got[0], st::full({3}, st::sum(a).item<double>(), st::f64));
    require_equal(g, got[0]);
  }
}

TEST_CASE("value_and_grad_with_hook: an exception from the hook propagates", "[ad][hooks]") {
  const st::Tensor a = st::randn({2}, 12, st::f64);
  auto throwing = [](std::size_t, const st::Tensor&) { throw st::ValueError("hook: stop"); };
  CHECK_THROWS_WITH(
      st::value_and_grad_with_hook([](const auto& a_) { return st::sum(a_ * a_); }, throwing, a),
      "hook: stop");
}
