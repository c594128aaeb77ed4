// SPDX-License-Identifier: MIT
// examples/char_gpt's model and training step against the same GPT trained in PyTorch
// (tests/nn/data/gpt_parity.py): from the same parameters and batches, 10 steps of AdamW with
// clipping and nanoGPT's schedule must give the same loss at every step and the same gradient
// norms, to 1e-8 in float64 and 1e-4 in float32. This is the check that catches a wrong
// attention mask, a wrong normalisation axis, a wrong weight-decay group or a wrong schedule:
// each moves the losses by far more than that.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "examples/char_gpt_model.hpp"
#include "support/files.hpp"
#include "support/torch_cases.hpp"

namespace {

namespace st = strata;
namespace nn = st::nn;

const st::testing::TorchCase& gpt_parity_case() {
  static const std::vector<st::testing::TorchCase> cases = st::testing::read_torch_cases(
      (st::testing::tests_dir() / "nn/data/gpt_parity.txt").string(), "gpt");
  REQUIRE(cases.size() == 1);
  return cases[0];
}

// Trains char_gpt's model from the case's parameters in `dtype` and checks every step's loss
// and gradient norm, and the final loss, against PyTorch's run in that dtype.
void check_gpt_parity(st::DType dtype, const std::string& suffix, double tol) {
  const st::testing::TorchCase& c = gpt_parity_case();
  const char_gpt::Config config{.vocab = c.integer("vocab"),
                                .block = c.integer("block"),
                                .layers = c.integer("layers"),
                                .heads = c.integer("heads"),
                                .width = c.integer("width"),
                                .batch = c.integer("batch"),
                                .iters = c.integer("steps"),
                                .lr = c.num("lr"),
                                .warmup = c.integer("warmup"),
                                .dtype = dtype};
  const char_gpt::Model model(config);
  nn::Params params;
  std::set<std::string> names;
  for (const auto& [name, t] : model.init(0)) names.insert(name);
  for (const auto& [name, t] : c.tensors) {
    // A fresh copy: AdamW updates the parameters in place, and both runs read the case.
    if (name.rfind("transformer.", 0) == 0)
      params[name] = st::from_vector(t.to_vector<double>(), t.shape()).to(dtype);
  }
  std::set<std::string> loaded;
  for (const auto& [name, t] : params) loaded.insert(name);
  REQUIRE(loaded == names);  // the model's parameters are exactly PyTorch's, by name

  const st::Tensor x = c.at("x").to(st::i64), y = c.at("y").to(st::i64);
  const std::vector<double> losses = c.at("losses_" + suffix).to_vector<double>();
  const std::vector<double> norms = c.at("grad_norms_" + suffix).to_vector<double>();
  REQUIRE(int64_t(norms.size()) == config.iters);
  nn::AdamW opt = char_gpt::optimizer(config);
  const nn::WarmupCosine schedule = char_gpt::schedule(config);
  for (int64_t step = 0; step < config.iters; ++step) {
    const char_gpt::StepResult r =
        char_gpt::train_step(model, params, opt, schedule(step), x.ix(step), y.ix(step));
    INFO("step " << step);
    CHECK(r.loss == Approx(losses[std::size_t(step)]).epsilon(tol).margin(tol));
    CHECK(r.grad_norm == Approx(norms[std::size_t(step)]).epsilon(tol).margin(tol));
  }
  const int64_t last = config.iters;
  const double final_loss =
      nn::cross_entropy(model(params, x.ix(last), std::nullopt), y.ix(last)).item<double>();
  CHECK(final_loss == Approx(losses[std::size_t(last)]).epsilon(tol).margin(tol));
}

}  // namespace

TEST_CASE("char_gpt trains as the same GPT in PyTorch float64", "[nn][gpt][torch]") {
  check_gpt_parity(st::f64, "f64", 1e-8);
}

TEST_CASE("char_gpt trains as the same GPT in PyTorch float32", "[nn][gpt][torch]") {
  check_gpt_parity(st::f32, "f32", 1e-4);
}
