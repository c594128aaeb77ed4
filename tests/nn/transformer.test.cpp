// SPDX-License-Identifier: MIT
// The transformer layers (nn/transformer.hpp) and the training-loop helpers (nn/schedule.hpp):
// TransformerBlock against a nanoGPT-style PyTorch float64 block (output and the gradients of
// every parameter and the input, tests/ad/data/transformer_torch.py), finite differences,
// vmap and per-example gradients, dropout keys, LayerNorm and Dropout on their own,
// clip_grad_norm and WarmupCosine against their formulas, and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/check_grads.hpp"
#include "support/message_of.hpp"
#include "support/torch_cases.hpp"

namespace st = strata;
namespace nn = st::nn;
using Catch::Matchers::Contains;
using st::testing::message_of;
using st::testing::require_torch_close;
using st::testing::TorchCase;
using st::testing::transformer_torch_file;

TEST_CASE("TransformerBlock matches a nanoGPT block in PyTorch float64",
          "[nn][transformer][torch]") {
  int count = 0;
  for (const TorchCase& c : st::testing::read_torch_cases(transformer_torch_file(), "block")) {
    INFO("block case at line " << c.line << " of transformer_torch.txt");
    const nn::TransformerBlock block(c.integer("dim"), c.integer("heads"), 0.0, st::f64, "", 4,
                                     c.flag("causal"));
    nn::Params params;
    for (const auto& [name, t] : c.tensors) {
      if (name.find('.') != std::string::npos && name.rfind("g_", 0) != 0) params[name] = t;
    }
    REQUIRE(params.size() == 12);
    CHECK(block.init(0).size() == 12);  // the same names
    for (const auto& [name, t] : block.init(0)) CHECK(params.count(name) == 1);
    auto f = [&](const auto& p, const auto& x) { return block(p, x); };
    auto [y, pullback] = st::vjp(f, params, c.at("x"));
    require_torch_close(y, c.at("out"), "out");
    const auto [gp, gx] = pullback(c.at("cot"));
    require_torch_close(gx, c.at("g_x"), "gradient of x");
    for (const auto& [name, g] : gp)
      require_torch_close(g, c.at("g_" + name), "gradient of " + name);
    ++count;
  }
  CHECK(count == 3);
}

TEST_CASE("TransformerBlock: derivatives, vmap, dropout keys", "[nn][transformer]") {
  const nn::TransformerBlock block(4, 2, 0.25, st::f64, "h.0.");
  const nn::Params p = block.init(3);
  const st::Tensor x = st::randn({3, 4}, 901, st::f64);
  st::testing::check_grads<2>([&](const auto& x) { return block(p, x); }, {x});
  // Per-example outputs and parameter gradients under vmap equal a loop.
  const st::Tensor xs = st::randn({3, 3, 4}, 902, st::f64);
  auto loss = [&](const auto& q, const auto& x) { return st::sum(st::tanh(block(q, x))); };
  const auto mapped = st::vmap(st::grad(loss, st::argnums<0>), {st::none, 0})(p, xs);
  const st::Tensor ys = st::vmap([&](const auto& x) { return block(p, x); })(xs);
  for (int64_t i = 0; i < 3; ++i) {
    const st::Tensor xi = xs.ix(i);
    require_torch_close(st::Tensor(ys.ix(i)), block(p, xi), "vmap output", 1e-12);
    const nn::Params gi = st::grad(loss, st::argnums<0>, p, xi);
    for (const auto& [name, g] : gi) {
      require_torch_close(st::Tensor(mapped.at(name).ix(i)), g, "per-example gradient of " + name,
                          1e-12);
    }
  }
  // With a key the residual branches are dropped out: reproducible per key, off without one.
  const st::Key key(5);
  const st::Tensor a = block(p, x, key), b = block(p, x, key);
  CHECK(a.to_vector<double>() == b.to_vector<double>());
  CHECK(block(p, x, st::fold_in(key, 1)).to_vector<double>() != a.to_vector<double>());
  CHECK(block(p, x).to_vector<double>() != a.to_vector<double>());
  const nn::TransformerBlock no_dropout(4, 2, 0.0, st::f64, "h.0.");
  CHECK(no_dropout(p, x, key).to_vector<double>() == no_dropout(p, x).to_vector<double>());
}

TEST_CASE("MultiHeadAttention drops out the attention weights with a key", "[nn][transformer]") {
  // Two causal heads over x [T = 5, 4]: with a key, y = c_proj(heads(dropout(w, p, key) v))
  // where w are the attention weights; without one, or with p = 0, plain attention.
  const nn::MultiHeadAttention mha(4, 2, true, true, st::f64, "", 0.4);
  const nn::Params w = mha.init(11);
  const st::Tensor x = st::randn({5, 4}, 921, st::f64);
  const st::Key key(9);
  const st::Tensor qkv = st::matmul(x, w.at("c_attn.weight").transpose(0, 1)) + w.at("c_attn.bias");
  const auto parts = st::split(qkv, {4, 4, 4}, -1);
  auto heads = [](const st::Tensor& t) { return t.reshape({5, 2, 2}).transpose(0, 1); };
  const st::Tensor q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);  // [2, 5, 2]
  auto project = [&](const st::Tensor& y) {  // [2, 5, 2] -> [5, 4] -> c_proj
    return st::matmul(y.transpose(0, 1).reshape({5, 4}), w.at("c_proj.weight").transpose(0, 1)) +
           w.at("c_proj.bias");
  };
  const st::Tensor weights = st::attention_weights(q, k, true);
  const st::Tensor dropped = st::dropout(weights, 0.4, key);
  require_torch_close(mha(w, x, key), project(st::matmul(dropped, v)), "attention dropout", 1e-13);
  require_torch_close(mha(w, x), project(st::matmul(weights, v)), "no key: no dropout", 1e-13);
  // Some weights were dropped, so the two differ; the same key gives the same output.
  CHECK(mha(w, x, key).to_vector<double>() != mha(w, x).to_vector<double>());
  CHECK(mha(w, x, key).to_vector<double>() == mha(w, x, key).to_vector<double>());
  const nn::MultiHeadAttention no_dropout(4, 2, true, true, st::f64);
  CHECK(no_dropout(w, x, key).to_vector<double>() == no_dropout(w, x).to_vector<double>());
  // The mask is a constant: derivatives through it are exact, to second order.
  st::testing::check_grads<2>([&](const auto& x) { return mha(w, x, key); }, {x});
  CHECK_THAT(message_of<st::ValueError>(
                 [] { nn::MultiHeadAttention(4, 2, true, true, st::f64, "", 1.5); }),
             Contains("p = 1.5"));
}

TEST_CASE("LayerNorm, Dropout, MultiHeadAttention on their own", "[nn][transformer]") {
  const nn::LayerNorm ln(5, 1e-5, st::f64, "ln.");
  nn::Params p = ln.init();
  CHECK(p.at("ln.weight").to_vector<double>() == std::vector<double>(5, 1.0));
  CHECK(p.at("ln.bias").to_vector<double>() == std::vector<double>(5, 0.0));
  p["ln.weight"] = st::randn({5}, 903, st::f64);
  const st::Tensor x = st::randn({2, 5}, 904, st::f64);
  require_torch_close(ln(p, x), st::layer_norm(x, {5}, p.at("ln.weight"), p.at("ln.bias")),
                      "LayerNorm");
  const nn::Dropout drop(0.5);
  CHECK(drop(x, std::nullopt).to_vector<double>() == x.to_vector<double>());
  CHECK(drop(x, st::Key(1)).to_vector<double>() ==
        st::dropout(x, 0.5, st::Key(1)).to_vector<double>());
  // One head without causality: c_proj(attention(q, k, v)) of the c_attn projections.
  const nn::MultiHeadAttention mha(4, 1, false, true, st::f64);
  const nn::Params w = mha.init(7);
  const st::Tensor h = st::randn({3, 4}, 905, st::f64);
  const st::Tensor qkv = st::matmul(h, w.at("c_attn.weight").transpose(0, 1)) + w.at("c_attn.bias");
  const auto parts = st::split(qkv, {4, 4, 4}, -1);
  const st::Tensor att = st::scaled_dot_product_attention(parts[0], parts[1], parts[2]);
  require_torch_close(mha(w, h),
                      st::matmul(att, w.at("c_proj.weight").transpose(0, 1)) + w.at("c_proj.bias"),
                      "one-head attention");
  CHECK_THAT(message_of<st::ValueError>([] { nn::MultiHeadAttention(6, 4); }),
             Contains("MultiHeadAttention: dim = 6 must be a positive multiple of heads = 4"));
  CHECK_THAT(message_of<st::ValueError>([] { nn::Dropout(1.0); }), Contains("Dropout: p = 1"));
  CHECK_THAT(message_of<st::ValueError>([] { nn::TransformerBlock(4, 2, -0.5); }),
             Contains("p = -0.5"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               mha(w, st::ones({3, 5}, st::f64));
             }),
             Contains("Linear"));
  CHECK_THAT(message_of<st::ValueError>([&] { ln(nn::Params{}, x); }), Contains("ln.weight"));
}

TEST_CASE("TransformerBlock and LayerNorm without biases (nanoGPT's bias=False)",
          "[nn][transformer]") {
  const nn::TransformerBlock plain(4, 2, 0.0, st::f64, "h.", 4, true, /*bias=*/false);
  const nn::TransformerBlock biased(4, 2, 0.0, st::f64, "h.", 4, true, /*bias=*/true);
  const nn::Params p = plain.init(3);
  CHECK(p.size() == 6);  // the two LayerNorm scales and the four weight matrices
  for (const auto& [name, t] : p) CHECK(!name.ends_with("bias"));
  // The block with biases, every bias 0: the same map, and the same weight gradients.
  nn::Params q = biased.init(3);
  REQUIRE(q.size() == 12);
  for (auto& [name, t] : q) t = p.count(name) ? p.at(name) : st::zeros_like(t);
  const st::Tensor x = st::randn({3, 4}, 906, st::f64);
  require_torch_close(plain(p, x), biased(q, x), "block without biases");
  auto loss = [](const auto& block) {
    return [&block](const auto& w, const auto& x) { return st::sum(st::tanh(block(w, x))); };
  };
  const nn::Params gp = st::grad(loss(plain), st::argnums<0>)(p, x),
                   gq = st::grad(loss(biased), st::argnums<0>)(q, x);
  for (const auto& [name, g] : gp) require_torch_close(g, gq.at(name), "gradient of " + name);
  st::testing::check_grads<2>([&](const auto& x) { return plain(p, x); }, {x});

  const nn::LayerNorm ln(5, 1e-5, st::f64, "ln.", /*bias=*/false);
  CHECK(!ln.has_bias());
  nn::Params w = ln.init();
  REQUIRE(w.size() == 1);
  w["ln.weight"] = st::randn({5}, 907, st::f64);
  const st::Tensor h = st::randn({2, 5}, 908, st::f64);
  require_torch_close(ln(w, h), st::layer_norm(h, {5}) * w.at("ln.weight"), "LayerNorm");
  w["ln.weight"] = st::ones({4}, st::f64);
  CHECK_THAT(message_of<st::ShapeError>([&] { ln(w, h); }), Contains("ln.weight"));
}

TEST_CASE("clip_grad_norm and WarmupCosine follow their formulas", "[nn][schedule]") {
  nn::Params g{{"a", st::from_vector(std::vector<double>{3, 4}, {2})},
               {"b", st::from_vector(std::vector<float>{12}, {1})}};
  const st::Tensor a0 = g.at("a");
  nn::Params big = g;
  CHECK(nn::clip_grad_norm(big, 100.0) == Approx(13.0).epsilon(1e-15));  // sqrt(9 + 16 + 144)
  CHECK(big.at("a").to_vector<double>() == std::vector<double>{3, 4});
  CHECK(nn::clip_grad_norm(g, 1.3) == Approx(13.0).epsilon(1e-15));
  const double coef = 1.3 / (13.0 + 1e-6);
  CHECK(g.at("a").to_vector<double>()[1] == Approx(4 * coef).epsilon(1e-15));
  CHECK(g.at("b").dtype() == st::f32);
  CHECK(g.at("b").to_vector<float>()[0] == Approx(12 * coef).epsilon(1e-6));
  CHECK(a0.to_vector<double>() == std::vector<double>{3, 4});  // the caller's tensor unchanged
  CHECK_THAT(message_of<st::ValueError>([&] { nn::clip_grad_norm(g, -1.0); }),
             Contains("max_norm = -1"));

  const nn::WarmupCosine s{.max_lr = 1.0, .min_lr = 0.1, .warmup = 9, .decay = 109};
  CHECK(s(0) == Approx(0.1));  // 1 * 1 / 10
  CHECK(s(8) == Approx(0.9));
  CHECK(s(9) == Approx(1.0));
  CHECK(s(59) == Approx(0.55));                               // half way: the mean of max and min
  CHECK(s(34) == Approx(0.1 + 0.45 * (1 + std::sqrt(0.5))));  // a quarter: cos(pi / 4)
  CHECK(s(109) == Approx(0.1));
  CHECK(s(500) == Approx(0.1));
  CHECK_THAT(message_of<st::ValueError>([&] { s(-1); }), Contains("WarmupCosine"));
  CHECK_THROWS_AS((nn::WarmupCosine{.warmup = 10, .decay = 5})(0), st::ValueError);
}
