// SPDX-License-Identifier: MIT
// A character-level GPT on tinyshakespeare, as nanoGPT's train_shakespeare_char: token and
// position embeddings, pre-norm transformer blocks with causal self-attention, a tied output
// layer; AdamW with warm-up and cosine decay, gradients clipped to norm 1. Prints the train
// and val loss every few hundred steps, then samples 500 characters.
//   char_gpt [--small] [--device cuda] [--iters N] [--eval-iters N] [--data FILE] [--seed S]
//            [--no-bias]
// --small trains a tiny model for a few steps (the test); --device cuda trains nanoGPT's GPU
// configuration on cuda:0; --seed draws other initial weights, batches and samples (1337);
// --no-bias leaves the LayerNorms and Linears without biases (nanoGPT's bias=False);
// --eval-iters sets the batches each loss estimate averages (nanoGPT's CPU run: 20, whose
// estimate has a standard error of about 0.012; 500 gives about 0.002).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <strata.hpp>

#include "char_gpt_model.hpp"  // Config, Model

namespace st = strata;
namespace nn = st::nn;

namespace {

/// The mean loss over `iters` batches of `tokens` drawn from key (no dropout).
double estimate_loss(const char_gpt::Model& model, const nn::Params& p, const st::Tensor& tokens,
                     int64_t iters, st::Key key) {
  const char_gpt::Config& c = model.config();
  double sum = 0;
  for (int64_t i = 0; i < iters; ++i) {
    const auto [x, y] = nn::sample_batch(tokens, c.batch, c.block, st::fold_in(key, uint64_t(i)));
    sum += nn::cross_entropy(model(p, x, std::nullopt), y).item<double>();
  }
  return sum / double(iters);
}

/// n characters sampled from the model after a newline, from its softmax at temperature 1.
std::string sample(const char_gpt::Model& model, const nn::Params& p, const nn::CharTokenizer& tok,
                   int64_t n, st::Key key) {
  const int64_t block = model.config().block;
  std::vector<int64_t> ids = {tok.encode("\n").to_vector<int64_t>()[0]};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = std::max<int64_t>(0, int64_t(ids.size()) - block);
    const std::vector<int64_t> ctx(ids.begin() + start, ids.end());
    const st::Tensor logits =
        model(p, st::from_vector(ctx, {1, int64_t(ctx.size())}), std::nullopt);
    const st::Tensor last = logits.ix(0, -1);
    const std::vector<double> probs = st::softmax(last.to(st::f64), 0).to_vector<double>();
    const double u = st::rand({}, st::fold_in(key, uint64_t(i)).bits(), st::f64).item<double>();
    double acc = 0;
    int64_t next = int64_t(probs.size()) - 1;
    for (std::size_t c = 0; c < probs.size(); ++c) {
      acc += probs[c];
      if (u < acc) {
        next = int64_t(c);
        break;
      }
    }
    ids.push_back(next);
  }
  return tok.decode(
      st::from_vector(std::vector<int64_t>(ids.begin() + 1, ids.end()), {int64_t(ids.size()) - 1}));
}

/// The example: read, train, sample (see the top of the file); 0 when the model learnt.
int run(int argc, char** argv) {
  bool small = false, cuda = false, bias = true;
  std::string path = "data/tinyshakespeare.txt";
  std::optional<int64_t> iters, eval_iters;
  uint64_t seed = 1337;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) small = true;
    if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) path = argv[++i];
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) iters = std::stoll(argv[++i]);
    if (std::strcmp(argv[i], "--eval-iters") == 0 && i + 1 < argc)
      eval_iters = std::stoll(argv[++i]);
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = std::stoull(argv[++i]);
    if (std::strcmp(argv[i], "--no-bias") == 0) bias = false;
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      cuda = std::string(argv[++i]) == "cuda";
  }
  char_gpt::Config c = small  ? char_gpt::tiny_config()
                       : cuda ? char_gpt::gpu_config()
                              : char_gpt::cpu_config();
  if (iters) c.iters = *iters;
  if (eval_iters) c.eval_iters = std::max<int64_t>(1, *eval_iters);
  c.bias = bias;
  c.warmup = std::min(c.warmup, c.iters);
  const st::Device device = cuda ? st::Device::cuda(0) : st::Device::cpu();
  const st::DefaultDevice on(device);

  std::string text = nn::read_text(path);
  if (small) text.resize(std::min<std::size_t>(text.size(), 20000));
  const nn::CharTokenizer tok(text);
  c.vocab = tok.vocab_size();
  const auto [train, val] = nn::split_train_val(tok.encode(text), 0.9);
  std::printf("%zu characters, %lld symbols; train %lld, val %lld tokens\n", text.size(),
              (long long)c.vocab, (long long)train.shape()[0], (long long)val.shape()[0]);

  const char_gpt::Model model(c);
  nn::Params params = model.init(seed);
  std::printf("%lld layers, %lld heads, width %lld, block %lld: %.2fM parameters on %s\n",
              (long long)c.layers, (long long)c.heads, (long long)c.width, (long long)c.block,
              double(nn::num_parameters(params)) / 1e6, cuda ? "cuda:0" : "the CPU");
  nn::AdamW opt = char_gpt::optimizer(c);
  const nn::WarmupCosine schedule = char_gpt::schedule(c);
  const st::Key key(seed);
  const auto [k_batch, k_drop, k_eval, k_sample] = [&] {
    const std::vector<st::Key> k = st::split(key, 4);
    return std::tuple{k[0], k[1], k[2], k[3]};
  }();

  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double first_val = 0, last_val = 0;
  for (int64_t step = 0; step <= c.iters; ++step) {
    if (step % c.eval_every == 0 || step == c.iters) {
      const double tr = estimate_loss(model, params, train, c.eval_iters, k_eval);
      last_val = estimate_loss(model, params, val, c.eval_iters, st::fold_in(k_eval, 1));
      if (step == 0) first_val = last_val;
      std::printf("step %5lld  train loss %.4f  val loss %.4f  (%.1f s)\n", (long long)step, tr,
                  last_val, seconds());
      std::fflush(stdout);
    }
    if (step == c.iters) break;
    const auto [x, y] = nn::sample_batch(train, c.batch, c.block, st::fold_in(k_batch, step));
    const std::optional<st::Key> drop =
        c.dropout > 0 ? std::optional<st::Key>(st::fold_in(k_drop, step)) : std::nullopt;
    char_gpt::train_step(model, params, opt, schedule(step), x, y, drop);
  }
  std::printf("trained %lld steps in %.1f s\n\n", (long long)c.iters, seconds());
  std::cout << sample(model, params, tok, small ? 80 : 500, k_sample) << "\n";
  // The model must have learnt something: its val loss well below its start.
  const bool ok = last_val < first_val - (small ? 0.1 : 1.0);
  std::cout << (ok ? "trained" : "DID NOT LEARN") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const st::Error& e) {
    std::cerr << "char_gpt: " << e.what()
              << " (the data is read from data/ under the repository root: run from there, "
                 "or give --data FILE)\n";
    return 2;
  } catch (const std::logic_error& e) {  // std::stoll of a malformed number
    std::cerr << "char_gpt: a number option could not be read (" << e.what() << ")\n";
    return 2;
  }
}
