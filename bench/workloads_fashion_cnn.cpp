// SPDX-License-Identifier: MIT
// fashion_cnn_train_step: one training step (forward, backward, AdamW update) of
// examples/fashion_mnist_cnn.cpp's convnet at the example's size (examples/fashion_cnn_model.hpp:
// conv 1 -> 32 and 32 -> 64, 3 x 3 padding 1, each with relu and a 2 x 2 max-pool, a linear
// head 3136 -> 10; batch 64, f32) on Fashion-MNIST batches, against the same convnet written
// in PyTorch (bench/peers_torch.py, fashion_cnn_step).
//
// Both sides start from one file, written by the row's setup to
// STRATA_BENCH_DIR/fashion_cnn_train_step.safetensors: the initial parameters (the example's
// initialisation; torch.nn's names and layouts, f32) and kCnnBatches batches "batch_x"
// [kCnnBatches, 64, 1, 28, 28] (f32, normalised as the example does) and "batch_y" [kCnnBatches,
// 64] (i64): the first training images of Debian's dataset-fashion-mnist, in order. The metadata
// holds the learning rate and the weight decay. The timed body is one step on the next stored
// batch, cycling through them.
//
// The check (not timed), as char_gpt_train_step's: from the file, kCnnCheckSteps steps on
// batches 0..kCnnCheckSteps-1, then the loss on batch kCnnCheckSteps, by strata in its setup and by
// the PyTorch child, which writes it to STRATA_BENCH_DIR/fashion_cnn_train_step.pytorch.json.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "examples/fashion_cnn_model.hpp"

namespace bench {
namespace {

namespace nn = st::nn;

constexpr int64_t kCnnBatches = 16, kCnnCheckSteps = 10;
constexpr double kCnnTolerance = 1e-4;
constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

std::string cnn_init_path() { return work_dir() + "/fashion_cnn_train_step.safetensors"; }
std::string cnn_torch_result_path() { return work_dir() + "/fashion_cnn_train_step.pytorch.json"; }

// One of Debian's Fashion-MNIST files, with the fix in the error when it is missing.
st::Tensor load_fashion(const std::string& name) {
  const std::string path = std::string(kFashionDir) + "/" + name + ".gz";
  if (!std::filesystem::exists(path))
    throw st::ValueError("fashion_cnn_train_step: " + path +
                         " not found (apt-get install dataset-fashion-mnist, or make deps)");
  return st::load_idx(path);
}

// The initial parameters (the example's initialisation, seed 0) and kCnnBatches batches of the
// first training images, written to cnn_init_path().
void write_cnn_init_file(const fashion_cnn::Config& c) {
  const int64_t n = kCnnBatches * c.batch;
  const st::Tensor images = st::slice(load_fashion("train-images-idx3-ubyte"), 0, 0, n, 1);
  const st::Tensor labels = st::slice(load_fashion("train-labels-idx1-ubyte"), 0, 0, n, 1);
  std::map<std::string, st::Tensor> file = fashion_cnn::Model(c).init(/*seed=*/0);
  file["batch_x"] =
      st::reshape(fashion_cnn::normalize(images, c.dtype), {kCnnBatches, c.batch, 1, 28, 28});
  file["batch_y"] = st::reshape(labels.to(st::i64), {kCnnBatches, c.batch});
  std::filesystem::remove(cnn_torch_result_path());  // a stale result must not pass the check
  st::save_safetensors(cnn_init_path(), file,
                       {{"lr", exact(c.lr)},
                        {"weight_decay", exact(c.weight_decay)},
                        {"check_steps", std::to_string(kCnnCheckSteps)}});
}

// The file's parameters and batches, with the example's optimiser, as each run sees them.
struct CnnRun {
  nn::Params params;
  std::vector<st::Tensor> x, y;
  nn::AdamW opt;
  int64_t next = 0;
};

std::unique_ptr<CnnRun> load_cnn_run(const fashion_cnn::Config& c) {
  TrainingFile f = load_training_file(cnn_init_path());
  return std::make_unique<CnnRun>(
      CnnRun{std::move(f.params), std::move(f.x), std::move(f.y), fashion_cnn::optimizer(c)});
}

// strata's check loss, from the row's setup to its check.
double g_cnn_strata_loss = NAN;

Body cnn_strata_step() {
  const fashion_cnn::Config c = fashion_cnn::full_config();
  write_cnn_init_file(c);
  const fashion_cnn::Model model(c);
  {
    std::unique_ptr<CnnRun> r = load_cnn_run(c);
    for (std::size_t s = 0; s < std::size_t(kCnnCheckSteps); ++s)
      fashion_cnn::train_step(model, r->params, r->opt, c.lr, r->x[s], r->y[s]);
    const std::size_t held = std::size_t(kCnnCheckSteps);
    g_cnn_strata_loss = nn::cross_entropy(model(r->params, r->x[held]), r->y[held]).item<double>();
  }
  std::shared_ptr<CnnRun> r = load_cnn_run(c);
  return [model, r, lr = c.lr] {
    const std::size_t i = std::size_t(r->next);
    fashion_cnn::train_step(model, r->params, r->opt, lr, r->x[i], r->y[i]);
    r->next = (r->next + 1) % int64_t(r->x.size());
    g_sink = r->params.at("fc.weight").raw();
  };
}

const Register kFashionCnn(47, [](std::vector<Workload>& w) {
  Workload row{"fashion_cnn_train_step", cnn_strata_step};
  row.per_run = "step";
  row.check = [] {
    return compare_peer_loss(g_cnn_strata_loss, cnn_torch_result_path(), "loss_after_10",
                             kCnnTolerance);
  };
  w.push_back(row);
});

}  // namespace
}  // namespace bench
