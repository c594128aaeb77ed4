// SPDX-License-Identifier: MIT
// examples/fashion_mnist_cnn's convnet, input normalisation and training step against the same
// convnet trained in PyTorch (tests/nn/data/cnn_parity.py): from the same parameters and pixel
// batches, 10 steps of AdamW must give the same loss at every step, to 1e-10 in float64 and
// 1e-4 in float32. A wrong padding, pooling window, flattening order (the head's input is
// channel-major, as torch's flatten), normalisation or weight-decay rule moves the losses by
// far more than that.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "examples/fashion_cnn_model.hpp"
#include "support/files.hpp"
#include "support/torch_cases.hpp"

namespace {

namespace st = strata;
namespace nn = st::nn;

const st::testing::TorchCase& cnn_parity_case() {
  static const std::vector<st::testing::TorchCase> cases = st::testing::read_torch_cases(
      (st::testing::tests_dir() / "nn/data/cnn_parity.txt").string(), "cnn");
  REQUIRE(cases.size() == 1);
  return cases[0];
}

// Trains fashion_cnn's model from the case's parameters in `dtype` and checks every step's
// loss, and the final loss, against PyTorch's run in that dtype.
void check_cnn_parity(st::DType dtype, const std::string& suffix, double tol) {
  const st::testing::TorchCase& c = cnn_parity_case();
  const fashion_cnn::Config config{.channels1 = c.integer("channels1"),
                                   .channels2 = c.integer("channels2"),
                                   .classes = c.integer("classes"),
                                   .batch = c.integer("batch"),
                                   .lr = c.num("lr"),
                                   .weight_decay = c.num("weight_decay"),
                                   .dtype = dtype};
  const fashion_cnn::Model model(config);
  std::set<std::string> names;
  for (const auto& [name, t] : model.init(0)) names.insert(name);
  nn::Params params;
  for (const std::string& name : names) {
    // A fresh copy: AdamW updates the parameters in place, and both runs read the case.
    const st::Tensor& t = c.at(name);
    params[name] = st::from_vector(t.to_vector<double>(), t.shape()).to(dtype);
  }
  // Every parameter PyTorch trained is one of the model's, by name.
  for (const auto& [name, t] : c.tensors) {
    const bool data = name == "pixels" || name == "labels" || name.rfind("losses_", 0) == 0;
    if (!data) CHECK(names.count(name) == 1);
  }

  // The pixels as load_idx gives them (i32), through the example's normalisation.
  const st::Tensor pixels = c.at("pixels").to(st::i32), labels = c.at("labels").to(st::i64);
  const int64_t steps = c.integer("steps");
  const std::vector<double> losses = c.at("losses_" + suffix).to_vector<double>();
  REQUIRE(int64_t(losses.size()) == steps + 1);
  nn::AdamW opt = fashion_cnn::optimizer(config);
  for (int64_t step = 0; step < steps; ++step) {
    const st::Tensor x = fashion_cnn::normalize(pixels.ix(step), dtype);
    const double loss = fashion_cnn::train_step(model, params, opt, config.lr, x, labels.ix(step));
    INFO("step " << step);
    CHECK(loss == Approx(losses[std::size_t(step)]).epsilon(tol).margin(tol));
  }
  const st::Tensor x = fashion_cnn::normalize(pixels.ix(steps), dtype);
  const double final_loss = nn::cross_entropy(model(params, x), labels.ix(steps)).item<double>();
  CHECK(final_loss == Approx(losses[std::size_t(steps)]).epsilon(tol).margin(tol));
}

}  // namespace

TEST_CASE("fashion_cnn trains as the same convnet in PyTorch float64", "[nn][cnn][torch]") {
  check_cnn_parity(st::f64, "f64", 1e-10);
}

TEST_CASE("fashion_cnn trains as the same convnet in PyTorch float32", "[nn][cnn][torch]") {
  check_cnn_parity(st::f32, "f32", 1e-4);
}
