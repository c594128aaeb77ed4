// SPDX-License-Identifier: MIT
// makemore_train_step: one training step (forward, backward, AdamW update) of
// examples/makemore.cpp's model (examples/makemore_model.hpp) on a batch of
// 256 real (context, next letter) pairs from the word list, against the same
// model written in PyTorch (bench/peers_torch.py, makemore_step).
//
// Both sides start from one file. The row's setup writes
// STRATA_BENCH_DIR/makemore_train_step.safetensors (bench::work_dir(), beside
// strata_bench: build/bench/), holding the initial parameters ("embed.weight",
// "0.weight", "0.bias", "1.weight", "1.bias", f32) and kBatches batches drawn
// once with a fixed seed ("batch_x" [kBatches, 256, 3] and "batch_y"
// [kBatches, 256], i64); each side loads the parameters and batches from it.
// The timed body is one step on the next stored batch, cycling through them.
//
// The check (not timed): from the file's parameters, kCheckSteps steps on
// batches 0..kCheckSteps-1, then the loss on batch kCheckSteps. strata does
// it in its setup; the PyTorch child does it in its own and writes its loss
// to STRATA_BENCH_DIR/makemore_train_step.pytorch.json, read back after the
// timing. The row reports both losses, |difference| and "ok" when it is at
// most kTolerance, "MISMATCH" otherwise (never aborting the run), or why it
// could not compare (no PyTorch).
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "examples/makemore_model.hpp"

namespace bench {
namespace {

namespace nn = st::nn;

constexpr int64_t kMakemoreBatch = 256, kBatches = 128, kCheckSteps = 100;
constexpr double kTolerance = 1e-4;
constexpr const char* kWords = "/usr/share/dict/words";

std::string init_path() { return work_dir() + "/makemore_train_step.safetensors"; }
std::string torch_result_path() { return work_dir() + "/makemore_train_step.pytorch.json"; }

// The word list's examples in the example's order, kBatches shuffled batches
// of them (the example's BatchIterator, seed 3) and the initial parameters,
// written to init_path().
void write_init_file() {
  const std::optional<std::vector<std::string>> words = makemore::read_words(kWords);
  if (!words) throw std::runtime_error(std::string("cannot read ") + kWords + " (wamerican)");
  const makemore::Examples ex =
      makemore::examples(*words, nn::permutation(int64_t(words->size()), /*seed=*/5));
  nn::BatchIterator it(ex.x, ex.y, kMakemoreBatch, /*seed=*/3, /*shuffle=*/true,
                       /*drop_last=*/true);
  std::vector<st::Tensor> xs, ys;
  while (int64_t(xs.size()) < kBatches) {
    std::optional<nn::Batch> b = it.next();
    if (!b) continue;  // the end of an epoch: the next call starts another
    xs.push_back(b->x);
    ys.push_back(b->y);
  }
  std::map<std::string, st::Tensor> file = makemore::Model().init();
  file["batch_x"] = st::stack(xs, 0);
  file["batch_y"] = st::stack(ys, 0);
  std::filesystem::remove(torch_result_path());  // a stale result must not pass the check
  st::save_safetensors(init_path(), file,
                       {{"lr", exact(makemore::kLr)},
                        {"weight_decay", exact(makemore::kWeightDecay)},
                        {"check_steps", std::to_string(kCheckSteps)}});
}

// The file's parameters and batches, as each run of the row sees them.
struct Run {
  nn::Params params;
  std::vector<st::Tensor> x, y;
  nn::AdamW opt{makemore::kLr, makemore::kWeightDecay};
  int64_t next = 0;
};

std::unique_ptr<Run> load_run() {
  auto r = std::make_unique<Run>();
  TrainingFile f = load_training_file(init_path());
  r->params = std::move(f.params);
  r->x = std::move(f.x);
  r->y = std::move(f.y);
  return r;
}

// One training step on batch i: the example's step (value_and_grad, AdamW).
double step(const makemore::Model& model, Run& r, std::size_t i) {
  auto [loss, grads] = st::value_and_grad(
      [&](const auto& p) { return nn::cross_entropy(model(p, r.x[i]), r.y[i]); }, r.params);
  r.opt.step(r.params, grads);
  return loss.item<double>();
}

// strata's loss on batch kCheckSteps after kCheckSteps steps from the file.
double strata_check_loss(const makemore::Model& model) {
  std::unique_ptr<Run> r = load_run();
  for (int64_t s = 0; s < kCheckSteps; ++s) step(model, *r, std::size_t(s));
  const std::size_t held = std::size_t(kCheckSteps);
  return nn::cross_entropy(model(r->params, r->x[held]), r->y[held]).item<double>();
}

// strata's check loss, from the row's setup to its check.
double g_strata_loss = NAN;

Body makemore_strata_step() {
  write_init_file();
  const makemore::Model model;
  g_strata_loss = strata_check_loss(model);
  std::shared_ptr<Run> r = load_run();
  return [model, r] {
    step(model, *r, std::size_t(r->next));
    r->next = (r->next + 1) % int64_t(r->x.size());
    g_sink = r->params.at("0.weight").raw();
  };
}

Check check_losses() {
  return compare_peer_loss(g_strata_loss, torch_result_path(), "loss_after_100", kTolerance);
}

const Register kMakemore(45, [](std::vector<Workload>& w) {
  Workload row{"makemore_train_step", makemore_strata_step};
  row.per_run = "step";
  row.check = check_losses;
  w.push_back(row);
});

}  // namespace
}  // namespace bench
