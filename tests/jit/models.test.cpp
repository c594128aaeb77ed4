// SPDX-License-Identifier: MIT
// st::jit on the nn layer's models: a whole training step of the Fashion-MNIST convnet
// (convolutions, max-pooling, cross-entropy, AdamW) replayed with eager's bits, the learning
// rate set between calls seen by the replayed optimiser step.
#include <catch2/catch.hpp>
#include <strata.hpp>

#include "examples/fashion_cnn_model.hpp"
#include "jit/jit.hpp"
#include "support/naive.hpp"

namespace st = strata;
using st::testing::bits;

TEST_CASE("jit: a convnet's training step under a schedule matches eager bit for bit",
          "[jit][nn]") {
  const fashion_cnn::Config c = fashion_cnn::tiny_config();
  const fashion_cnn::Model model(c);
  st::nn::Params eager_params = model.init(1), jit_params = model.init(1);
  st::nn::AdamW eager_opt = fashion_cnn::optimizer(c), jit_opt = fashion_cnn::optimizer(c);
  const st::nn::WarmupCosine lr = fashion_cnn::schedule(c, 4);
  auto step = [&](st::nn::Params& params, st::nn::AdamW& opt, const st::Tensor& x,
                  const st::Tensor& y) {
    auto [value, grads] = st::value_and_grad(
        [&](const auto& p) { return st::nn::cross_entropy(model(p, x), y); }, params);
    opt.step(params, grads);
    return value;
  };
  // The learning rate is host state: set outside the jitted step, the replayed optimiser step
  // reads the current one (set inside, it would be fixed at tracing).
  auto jitted = st::jit(
      [&](const st::Tensor& x, const st::Tensor& y) { return step(jit_params, jit_opt, x, y); });
  for (int64_t i = 0; i < 4; ++i) {
    const st::Tensor x = st::randn({c.batch, 1, 28, 28}, 50 + uint64_t(i), c.dtype);
    const st::Tensor y = (st::rand({c.batch}, 60 + uint64_t(i), st::f64) * 10.0).to(st::i64);
    eager_opt.set_lr(lr(i));
    jit_opt.set_lr(lr(i));
    const st::Tensor le = step(eager_params, eager_opt, x, y);
    const st::Tensor lj = jitted(x, y);
    REQUIRE(bits(le.raw()) == bits(lj.raw()));
    for (const auto& [name, p] : eager_params) {
      INFO(name << " after step " << i);
      REQUIRE(bits(p.raw()) == bits(jit_params.at(name).raw()));
    }
  }
  CHECK(jitted.cached() == 1);
}
