// SPDX-License-Identifier: MIT
// A character-level language model in the style of Karpathy's "makemore"
// (Bengio et al. 2003): the previous 3 letters are embedded, concatenated and
// fed to an MLP that predicts the next letter. Trained on the English word
// list of Debian's wamerican package (/usr/share/dict/words, installed by
// `make`), it then invents new words.
//   makemore [--small] [--words FILE]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <strata.hpp>

#include "makemore_model.hpp"  // read_words, examples, Model: shared with bench/

namespace st = strata;
namespace nn = st::nn;
using makemore::kContext;

int main(int argc, char** argv) {
  bool small = false;
  std::string path = "/usr/share/dict/words";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) small = true;
    if (std::strcmp(argv[i], "--words") == 0 && i + 1 < argc) path = argv[++i];
  }
  const std::optional<std::vector<std::string>> words = makemore::read_words(path);
  if (!words) {
    std::cerr << "makemore: cannot read " << path
              << " (install Debian's wamerican, or --words FILE)\n";
    return 2;
  }
  std::vector<int64_t> order = nn::permutation(int64_t(words->size()), /*seed=*/5);
  if (small) order.resize(std::min<std::size_t>(order.size(), 2000));

  // (context, next letter) pairs of every word.
  const auto [X, Y] = makemore::examples(*words, order);
  const int64_t n = Y.shape()[0];
  std::cout << order.size() << " words from " << path << ", " << n << " training examples\n";

  const makemore::Model model;
  nn::Params params = model.init();
  auto loss_on = [&](const nn::Params& p, const st::Tensor& x, const st::Tensor& y) {
    return nn::cross_entropy(model(p, x), y).item<double>();
  };

  const int64_t steps = small ? 300 : 6000;
  nn::AdamW opt(makemore::kLr, makemore::kWeightDecay);
  nn::BatchIterator batches(X, Y, 128, /*seed=*/3, true, true);
  const double start = loss_on(params, X, Y);
  std::printf("loss before training %.4f (uniform guessing: ln 27 = %.4f)\n", start,
              std::log(27.0));
  for (int64_t step = 1; step <= steps; ++step) {
    std::optional<nn::Batch> b = batches.next();
    if (!b) b = batches.next();
    auto [loss, grads] = st::value_and_grad(
        [&](const auto& p) { return nn::cross_entropy(model(p, b->x), b->y); }, params);
    if (step == steps * 3 / 4) opt.set_lr(0.001);  // a simple learning-rate decay
    opt.step(params, grads);
    if (step % std::max<int64_t>(steps / 6, 1) == 0)
      std::printf("step %5lld  batch loss %.4f\n", (long long)step, loss.item<double>());
  }
  const double end = loss_on(params, X, Y);
  std::printf("loss after training %.4f\n\nsamples:\n", end);

  // Sample letter by letter from the model's softmax.
  std::mt19937_64 rng(2024);
  for (int s = 0; s < 12; ++s) {
    std::vector<int64_t> ctx(kContext, 0);
    std::string word;
    while (word.size() < 20) {
      const st::Tensor probs = st::softmax(model(params, st::from_vector(ctx, {1, kContext})), 1);
      const std::vector<double> p = probs.to_vector<double>();
      double u = double(rng() >> 11) * 0x1.0p-53, acc = 0;
      int64_t next = 26;
      for (int64_t c = 0; c < 27; ++c) {
        acc += p[std::size_t(c)];
        if (u < acc) {
          next = c;
          break;
        }
      }
      if (next == 0) break;
      word += char('a' + next - 1);
      ctx.erase(ctx.begin());
      ctx.push_back(next);
    }
    std::cout << "  " << word << "\n";
  }
  // The model must have learnt something: well below uniform guessing.
  const bool ok = end < start && end < (small ? 2.9 : 2.3);
  std::cout << (ok ? "trained" : "DID NOT LEARN") << "\n";
  return ok ? 0 : 1;
}
