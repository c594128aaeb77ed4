// SPDX-License-Identifier: MIT
// char_gpt_train_step: one training step (forward, backward, gradient clipping, AdamW update)
// of examples/char_gpt.cpp's GPT in nanoGPT's CPU configuration (examples/char_gpt_model.hpp:
// 4 layers, 4 heads, width 128, block 64, batch 12) on tinyshakespeare batches, against the
// same GPT written in PyTorch (bench/peers_torch.py, char_gpt_step).
//
// Both sides start from one file, written by the row's setup to
// STRATA_BENCH_DIR/char_gpt_train_step.safetensors: the initial parameters (nanoGPT's names
// and layouts, f32) and kBatches batches "batch_x", "batch_y" [kBatches, 12, 64] (i64) drawn
// with the example's sampler from data/tinyshakespeare.txt; the metadata holds the learning
// rate and the number of heads. The timed body is one step on the next stored batch, cycling
// through them, at the peak learning rate (the schedule is a scalar per step; both sides leave it
// out).
//
// The check (not timed), as makemore_train_step's: from the file, kCheckSteps steps on
// batches 0..kCheckSteps-1, then the loss on batch kCheckSteps, by strata in its setup and by
// the PyTorch child, which writes it to STRATA_BENCH_DIR/char_gpt_train_step.pytorch.json.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "examples/char_gpt_model.hpp"

namespace bench {
namespace {

namespace nn = st::nn;

constexpr int64_t kBatches = 16, kCheckSteps = 10;
constexpr double kTolerance = 1e-4;

std::string gpt_init_path() { return work_dir() + "/char_gpt_train_step.safetensors"; }
std::string gpt_torch_result_path() { return work_dir() + "/char_gpt_train_step.pytorch.json"; }

// The initial parameters (the example's initialisation, seed 1337) and kBatches batches of
// tinyshakespeare's training split, written to gpt_init_path().
void write_gpt_init_file(const char_gpt::Config& c) {
  const std::string text = nn::read_text(STRATA_BENCH_DATA "/tinyshakespeare.txt");
  const nn::CharTokenizer tok(text);
  const st::Tensor train = nn::split_train_val(tok.encode(text), 0.9).first;
  std::vector<st::Tensor> xs, ys;
  for (int64_t i = 0; i < kBatches; ++i) {
    auto [x, y] = nn::sample_batch(train, c.batch, c.block, st::fold_in(st::Key(7), i));
    xs.push_back(x);
    ys.push_back(y);
  }
  std::map<std::string, st::Tensor> file = char_gpt::Model(c).init(/*seed=*/1337);
  file["batch_x"] = st::stack(xs, 0);
  file["batch_y"] = st::stack(ys, 0);
  std::filesystem::remove(gpt_torch_result_path());  // a stale result must not pass the check
  st::save_safetensors(gpt_init_path(), file,
                       {{"lr", exact(c.lr)},
                        {"heads", std::to_string(c.heads)},
                        {"check_steps", std::to_string(kCheckSteps)}});
}

// The file's parameters and batches, with the example's optimiser, as each run sees them.
struct GptRun {
  nn::Params params;
  std::vector<st::Tensor> x, y;
  nn::AdamW opt;
  int64_t next = 0;
};

std::unique_ptr<GptRun> load_gpt_run(const char_gpt::Config& c) {
  TrainingFile f = load_training_file(gpt_init_path());
  return std::make_unique<GptRun>(
      GptRun{std::move(f.params), std::move(f.x), std::move(f.y), char_gpt::optimizer(c)});
}

// strata's check loss, from the row's setup to its check.
double g_gpt_strata_loss = NAN;

Body gpt_strata_step() {
  const char_gpt::Config c = char_gpt::cpu_config();
  write_gpt_init_file(c);
  const char_gpt::Model model(c);
  {
    std::unique_ptr<GptRun> r = load_gpt_run(c);
    for (std::size_t s = 0; s < std::size_t(kCheckSteps); ++s)
      char_gpt::train_step(model, r->params, r->opt, c.lr, r->x[s], r->y[s]);
    const std::size_t held = std::size_t(kCheckSteps);
    g_gpt_strata_loss =
        nn::cross_entropy(model(r->params, r->x[held], std::nullopt), r->y[held]).item<double>();
  }
  std::shared_ptr<GptRun> r = load_gpt_run(c);
  return [model, r, lr = c.lr] {
    const std::size_t i = std::size_t(r->next);
    char_gpt::train_step(model, r->params, r->opt, lr, r->x[i], r->y[i]);
    r->next = (r->next + 1) % int64_t(r->x.size());
    g_sink = r->params.at("transformer.wte.weight").raw();
  };
}

const Register kCharGpt(46, [](std::vector<Workload>& w) {
  Workload row{"char_gpt_train_step", gpt_strata_step};
  row.per_run = "step";
  row.check = [] {
    return compare_peer_loss(g_gpt_strata_loss, gpt_torch_result_path(), "loss_after_10",
                             kTolerance);
  };
  w.push_back(row);
});

}  // namespace
}  // namespace bench
