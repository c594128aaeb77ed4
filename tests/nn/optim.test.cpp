// SPDX-License-Identifier: MIT
// Tests for nn/optim.hpp. Each optimiser's first steps are compared with its
// published update equations, evaluated independently here in plain double
// loops (SGD: PyTorch's documented form; Adam: Kingma & Ba, Algorithm 1;
// AdamW: Loshchilov & Hutter's decoupled decay), on random parameters and
// gradients that change every step. Warmed-up steps must allocate nothing.
#include <cmath>

#include "helpers.hpp"
#include "support/device.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
namespace nn = st::nn;

namespace {

/// Two parameters, "a" [3, 4] and "b" [5], and per step gradients, from seeds.
struct ParamsAndGrads {
  std::map<std::string, Vec> p;
  std::vector<std::map<std::string, Vec>> grads;
  explicit ParamsAndGrads(int steps) {
    p["a"] = random_values(12, 1, -2, 2);
    p["b"] = random_values(5, 2, -2, 2);
    for (int s = 0; s < steps; ++s) {
      grads.push_back({{"a", random_values(12, 100 + uint64_t(s), -3, 3)},
                       {"b", random_values(5, 200 + uint64_t(s), -3, 3)}});
    }
  }
  static st::Shape shape(const std::string& k) { return k == "a" ? st::Shape{3, 4} : st::Shape{5}; }
  nn::Params params(st::DType dtype = st::f64) const {
    nn::Params out;
    for (const auto& [k, v] : p) out.emplace(k, tensor(v, shape(k)).to(dtype));
    return out;
  }
  nn::Params grad(int s, st::DType dtype = st::f64) const {
    nn::Params out;
    for (const auto& [k, v] : grads[std::size_t(s)]) out.emplace(k, tensor(v, shape(k)).to(dtype));
    return out;
  }
};

/// Runs opt over every step of pr and compares with reference(p, g, t, state) per element.
template <class Ref>
void compare(nn::Optimizer& opt, const ParamsAndGrads& pr, Ref reference, double tol = 1e-13) {
  nn::Params params = pr.params();
  std::map<std::string, Vec> ref = pr.p;
  std::map<std::string, std::vector<Vec>> state;  // reference state per parameter
  for (int s = 0; s < int(pr.grads.size()); ++s) {
    opt.step(params, pr.grad(s));
    for (auto& [k, v] : ref) reference(v, pr.grads[std::size_t(s)].at(k), s + 1, state[k]);
    for (const auto& [k, v] : ref) {
      INFO("step " << s + 1 << ", parameter " << k);
      require_close(params.at(k), v, tol);
    }
  }
  CHECK(opt.steps() == int64_t(pr.grads.size()));
}

}  // namespace

TEST_CASE("SGD against its update equations", "[nn]") {
  const ParamsAndGrads pr(4);
  SECTION("plain: p -= lr g") {
    nn::SGD opt(0.1);
    compare(opt, pr, [](Vec& p, const Vec& g, int, std::vector<Vec>&) {
      for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.1 * g[i];
    });
  }
  for (const bool nesterov : {false, true}) {
    SECTION(nesterov ? "momentum, weight decay, nesterov" : "momentum and weight decay") {
      const double lr = 0.05, mu = 0.9, wd = 0.01;
      nn::SGD opt(lr, mu, wd, nesterov);
      compare(opt, pr, [&](Vec& p, const Vec& g, int t, std::vector<Vec>& st) {
        if (st.empty()) st.emplace_back(p.size(), 0.0);
        Vec& buf = st[0];
        for (std::size_t i = 0; i < p.size(); ++i) {
          const double d = g[i] + wd * p[i];
          buf[i] = t == 1 ? d : mu * buf[i] + d;
          p[i] -= lr * (nesterov ? d + mu * buf[i] : buf[i]);
        }
      });
    }
  }
}

TEST_CASE("SGD's one-pass f32 update has the bits of p - lr * g in tensor ops", "[nn]") {
  const ParamsAndGrads pr(3);
  nn::Params params = pr.params(st::f32);
  nn::Params want = pr.params(st::f32);
  nn::SGD opt(0.037);
  for (int s = 0; s < 3; ++s) {
    const nn::Params g = pr.grad(s, st::f32);
    opt.step(params, g);
    for (auto& [k, w] : want) w = w - g.at(k) * 0.037;
  }
  for (const auto& [k, w] : want) {
    INFO("parameter " << k);
    CHECK(params.at(k).to_vector<float>() == w.to_vector<float>());
  }
}

TEST_CASE("Adam and AdamW against Kingma & Ba / Loshchilov & Hutter", "[nn]") {
  const ParamsAndGrads pr(5);
  const double lr = 0.01, b1 = 0.8, b2 = 0.95, eps = 1e-6;
  // Algorithm 1 of Kingma & Ba, with L2 decay (wd_l2) folded into g, or the
  // decoupled decay of AdamW (wd_decoupled) applied to the parameter first.
  auto adam = [&](double wd_l2, double wd_decoupled) {
    return [=](Vec& p, const Vec& g, int t, std::vector<Vec>& st) {
      if (st.empty()) st.assign(2, Vec(p.size(), 0.0));
      Vec &m = st[0], &v = st[1];
      for (std::size_t i = 0; i < p.size(); ++i) {
        const double gi = g[i] + wd_l2 * p[i];
        p[i] -= lr * wd_decoupled * p[i];
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        const double mhat = m[i] / (1 - std::pow(b1, t));
        const double vhat = v[i] / (1 - std::pow(b2, t));
        p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
      }
    };
  };
  SECTION("Adam") {
    nn::Adam opt({.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps});
    compare(opt, pr, adam(0, 0), 1e-12);
  }
  SECTION("Adam with L2 weight decay") {
    nn::Adam opt({.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay = 0.1});
    compare(opt, pr, adam(0.1, 0), 1e-12);
  }
  SECTION("AdamW") {
    nn::AdamW opt({.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay = 0.1});
    compare(opt, pr, adam(0, 0.1), 1e-12);
  }
  SECTION("AdamW decays only parameters of decay_min_ndim dims or more (nanoGPT's groups)") {
    const nn::AdamOptions o{.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay = 0.1};
    nn::AdamOptions grouped_o = o, none_o = o;
    grouped_o.decay_min_ndim = 2;
    none_o.weight_decay = 0;
    nn::AdamW grouped(grouped_o), all(o), none(none_o);
    nn::Params pg = pr.params(), pa = pr.params(), pn = pr.params();
    for (int s = 0; s < 5; ++s) {
      grouped.step(pg, pr.grad(s));
      all.step(pa, pr.grad(s));
      none.step(pn, pr.grad(s));
    }
    // "a" is [3, 4]: decayed; "b" is [5]: not.
    CHECK(pg.at("a").to_vector<double>() == pa.at("a").to_vector<double>());
    CHECK(pg.at("b").to_vector<double>() == pn.at("b").to_vector<double>());
    CHECK(pg.at("b").to_vector<double>() != pa.at("b").to_vector<double>());
    CHECK_THROWS_AS(nn::AdamW(nn::AdamOptions{.decay_min_ndim = -1}), st::ValueError);
  }
  SECTION("defaults (lr 1e-3, betas 0.9/0.999, eps 1e-8; AdamW decay 0.01)") {
    nn::Params params = pr.params(), ref = pr.params();
    nn::Adam a;
    nn::Adam b({.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8});
    a.step(params, pr.grad(0));
    b.step(ref, pr.grad(0));
    for (const auto& [k, v] : params) CHECK(v.to_vector<double>() == ref.at(k).to_vector<double>());
    nn::Params pw = pr.params(), rw = pr.params();
    nn::AdamW aw;
    nn::AdamW bw({.lr = 1e-3, .weight_decay = 0.01});
    aw.step(pw, pr.grad(0));
    bw.step(rw, pr.grad(0));
    for (const auto& [k, v] : pw) CHECK(v.to_vector<double>() == rw.at(k).to_vector<double>());
  }
  SECTION("f32 parameters follow the f64 equations to f32 precision") {
    nn::Adam opt({.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps});
    nn::Params params = pr.params(st::f32);
    std::map<std::string, Vec> ref = pr.p;
    std::map<std::string, std::vector<Vec>> state;
    auto f = adam(0, 0);
    for (int s = 0; s < 5; ++s) {
      opt.step(params, pr.grad(s, st::f32));
      for (auto& [k, v] : ref) f(v, pr.grads[std::size_t(s)].at(k), s + 1, state[k]);
    }
    for (const auto& [k, v] : ref) require_close(params.at(k), v, 1e-5);
  }
}

TEST_CASE("optimiser steps allocate nothing once warmed up", "[nn]") {
  const ParamsAndGrads pr(6);
  auto run = [&](nn::Optimizer& opt, st::DType dtype) {
    nn::Params params = pr.params(dtype);
    std::vector<nn::Params> grads;
    for (int s = 0; s < 6; ++s) grads.push_back(pr.grad(s, dtype));
    opt.step(params, grads[0]);  // warm-up: allocates the state
    const st::AllocatorStats before = st::testing::test_allocator().stats();
    for (int s = 1; s < 6; ++s) opt.step(params, grads[std::size_t(s)]);
    const st::AllocatorStats after = st::testing::test_allocator().stats();
    CHECK(after.from_system == before.from_system);
    CHECK(after.from_cache == before.from_cache);  // not even a cached block
    CHECK(opt.steps() == 6);
  };
  for (const st::DType dtype : {st::f32, st::f64}) {
    nn::SGD plain(0.1);
    run(plain, dtype);
    nn::SGD sgd(0.1, 0.9, 1e-3, true);
    run(sgd, dtype);
    nn::Adam adam({.lr = 0.01, .weight_decay = 0.01});
    run(adam, dtype);
    nn::AdamW adamw(0.01, 0.1);
    run(adamw, dtype);
  }
}

TEST_CASE("optimisers update in place: views of a parameter see the step", "[nn]") {
  const ParamsAndGrads pr(1);
  nn::Params params = pr.params();
  const st::Tensor view = params.at("a").transpose(0, 1);
  nn::SGD(0.5).step(params, pr.grad(0));
  Vec want = pr.p.at("a");
  for (std::size_t i = 0; i < want.size(); ++i) want[i] -= 0.5 * pr.grads[0].at("a")[i];
  require_close(view.transpose(0, 1), want);
}

TEST_CASE("optimisers reject mismatched maps and bad hyperparameters", "[nn]") {
  const ParamsAndGrads pr(1);
  nn::Params params = pr.params();
  const nn::Params before = pr.params();
  nn::Adam opt(0.1);
  auto unchanged = [&] {
    for (const auto& [k, v] : params)
      CHECK(v.to_vector<double>() == before.at(k).to_vector<double>());
  };
  nn::Params g = pr.grad(0);
  g.erase("b");
  CHECK_THAT(message_of<st::ValueError>([&] { opt.step(params, g); }),
             Contains("Adam.step") && Contains("'b'"));
  g = pr.grad(0);
  g["c"] = st::zeros({2}, st::f64);
  CHECK_THAT(message_of<st::ValueError>([&] { opt.step(params, g); }), Contains("'c'"));
  g = pr.grad(0);
  g["a"] = st::zeros({4, 3}, st::f64);
  CHECK_THAT(message_of<st::ShapeError>([&] { opt.step(params, g); }),
             Contains("'a'") && Contains("[4, 3]") && Contains("[3, 4]"));
  g = pr.grad(0);
  g["a"] = g["a"].to(st::f32);
  CHECK_THAT(message_of<st::DTypeError>([&] { opt.step(params, g); }), Contains("'a'"));
  unchanged();
  CHECK(opt.steps() == 0);
  nn::Params ints{{"i", st::zeros({2}, st::i64)}};
  CHECK_THROWS_AS(nn::SGD(0.1).step(ints, ints), st::DTypeError);
  // A parameter that changes shape between steps.
  opt.step(params, pr.grad(0));
  nn::Params grown = params;
  grown["b"] = st::zeros({6}, st::f64);
  nn::Params grown_g = pr.grad(0);
  grown_g["b"] = st::zeros({6}, st::f64);
  CHECK_THAT(message_of<st::ShapeError>([&] { opt.step(grown, grown_g); }), Contains("reset()"));
  opt.reset();
  CHECK_NOTHROW(opt.step(grown, grown_g));
  CHECK(opt.steps() == 1);

  // Hyperparameters.
  CHECK_THROWS_AS(nn::SGD(-1.0), st::ValueError);
  CHECK_THROWS_AS(nn::SGD(0.1, -0.5), st::ValueError);
  CHECK_THROWS_AS(nn::SGD(0.1, 0.0, 0.0, true), st::ValueError);
  CHECK_THROWS_AS(nn::Adam({.beta1 = 1.0}), st::ValueError);
  CHECK_THROWS_AS(nn::Adam({.eps = -1}), st::ValueError);
  CHECK_THROWS_AS(nn::AdamW(std::nan("")), st::ValueError);
  CHECK_THROWS_AS(opt.set_lr(-0.1), st::ValueError);
}

TEST_CASE("Adam trains an MLP on a regression problem", "[nn]") {
  const nn::MLP mlp({2, 16, 1}, nn::Activation::tanh, st::f64);
  nn::Params p = mlp.init(5);
  const st::Tensor x = tensor(random_values(64 * 2, 6, -1, 1), {64, 2});
  // Target: a smooth function of the inputs, computed in a loop.
  const Vec xv = x.to_vector<double>();
  Vec yv(64);
  for (std::size_t i = 0; i < 64; ++i) yv[i] = std::sin(2 * xv[2 * i]) * xv[2 * i + 1];
  const st::Tensor y = tensor(yv, {64, 1});
  auto loss = [&](const auto& q) { return nn::mse(mlp(q, x), y); };
  const double first = loss(p).item<double>();
  nn::Adam opt(0.02);
  for (int s = 0; s < 300; ++s) opt.step(p, st::grad(loss, p));
  const double last = loss(p).item<double>();
  INFO("loss " << first << " -> " << last);
  CHECK(last < first / 20);
}

TEST_CASE("a parameter added later starts its own step count (bias correction)", "[nn]") {
  const ParamsAndGrads pr(3);
  nn::Adam late({.lr = 0.01});
  nn::Adam fresh({.lr = 0.01});
  nn::Params first{{"a", pr.params().at("a")}};
  late.step(first, nn::Params{{"a", pr.grad(0).at("a")}});
  late.step(first, nn::Params{{"a", pr.grad(1).at("a")}});
  // "b" joins at the third step: its update must be Adam's first step.
  nn::Params both{{"a", first.at("a")}, {"b", pr.params().at("b")}};
  late.step(both, pr.grad(2));
  nn::Params only_b{{"b", pr.params().at("b")}};
  fresh.step(only_b, nn::Params{{"b", pr.grad(2).at("b")}});
  CHECK(both.at("b").to_vector<double>() == only_b.at("b").to_vector<double>());
  CHECK(late.steps() == 3);
}
