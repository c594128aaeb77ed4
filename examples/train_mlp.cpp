// SPDX-License-Identifier: MIT
// Train a small classifier on "two moons" (a seeded 2-D dataset) with the nn
// layer: an MLP, softmax cross-entropy, Adam, shuffled mini-batches and a
// progress bar. Then save a safetensors checkpoint, reload it and check the
// reloaded model predicts the same, and draw the loss curve as an SVG.
//   train_mlp [--small] [--out DIR]      (files go to DIR, default ".")
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numbers>
#include <string>
#include <vector>

#include <strata.hpp>

#include "loss_curve.hpp"  // write_loss_svg

namespace st = strata;
namespace nn = st::nn;

// n points, half on each of two interleaved half circles, with Gaussian noise.
static std::pair<st::Tensor, st::Tensor> two_moons(int64_t n, double noise, uint64_t seed) {
  const std::vector<double> u = st::rand({n}, seed, st::f64).to_vector<double>();
  const std::vector<double> e = st::randn({n, 2}, seed + 1, st::f64).to_vector<double>();
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    const double t = std::numbers::pi * u[std::size_t(i)];
    const bool lower = i % 2 == 1;
    const double px = lower ? 1 - std::cos(t) : std::cos(t),
                 py = lower ? 0.5 - std::sin(t) : std::sin(t);
    x.push_back(float(px + noise * e[std::size_t(2 * i)]));
    x.push_back(float(py + noise * e[std::size_t(2 * i + 1)]));
    y.push_back(lower);
  }
  return {st::from_vector(x, {n, 2}), st::from_vector(y)};
}

int main(int argc, char** argv) {
  bool small = false;
  std::filesystem::path out = ".";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) small = true;
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
  }
  std::filesystem::create_directories(out);
  const int64_t n = small ? 400 : 1000;
  const int epochs = small ? 25 : 50;
  const double target = 0.97;

  auto [x, y] = two_moons(n, 0.1, /*seed=*/42);
  const nn::MLP model({2, 32, 32, 2}, nn::Activation::relu);
  nn::Params params = model.init(/*seed=*/0);
  nn::Adam opt(0.01);
  nn::BatchIterator batches(x, y, /*batch_size=*/50, /*seed=*/1);
  const int64_t steps = epochs * batches.num_batches();
  std::cout << "two moons: " << n << " points; MLP 2-32-32-2 (relu), " << nn::num_parameters(params)
            << " parameters; Adam, " << steps << " steps\n";

  const bool tty = isatty(fileno(stdout));
  std::vector<double> losses;
  double acc = 0;
  for (int64_t step = 1; step <= steps; ++step) {
    std::optional<nn::Batch> b = batches.next();
    if (!b) b = batches.next();  // the epoch ended: the next one starts
    auto loss = [&](const auto& p) { return nn::cross_entropy(model(p, b->x), b->y); };
    auto [value, grads] = st::value_and_grad(loss, params);
    opt.step(params, grads);
    losses.push_back(value.item<double>());
    if (step % 10 == 0 || step == steps) acc = nn::accuracy(model(params, x), y);
    const int filled = int(30 * step / steps);
    if (tty || step % std::max<int64_t>(steps / 10, 1) == 0 || step == steps) {
      std::printf("%s[%s%s] step %4lld/%lld  loss %.4f  train acc %5.1f%%%s", tty ? "\r" : "",
                  std::string(std::size_t(filled), '#').c_str(),
                  std::string(std::size_t(30 - filled), '.').c_str(), (long long)step,
                  (long long)steps, losses.back(), 100 * acc, tty ? "" : "\n");
      std::fflush(stdout);
    }
  }
  if (tty) std::printf("\n");

  // Checkpoint, reload, and compare predictions.
  const std::string ckpt = (out / "mlp_moons.safetensors").string();
  st::save_safetensors(ckpt, params, {{"model", "MLP 2-32-32-2 relu"}, {"dataset", "two moons"}});
  const nn::Params reloaded = st::load_safetensors(ckpt);
  const st::Tensor before = model(params, x), after = model(reloaded, x);
  const bool same =
      st::argmax(before, 1).to_vector<int64_t>() == st::argmax(after, 1).to_vector<int64_t>() &&
      st::max(st::abs(before - after)).item<double>() == 0.0;
  const std::string svg = (out / "loss_curve.svg").string();
  write_loss_svg(svg, losses, "training loss (cross-entropy) per step");

  std::cout << "final training accuracy " << 100 * acc << "% (target " << 100 * target << "%)\n"
            << "reloaded checkpoint predicts " << (same ? "the same" : "DIFFERENTLY") << "\n"
            << "checkpoint: " << std::filesystem::absolute(ckpt).lexically_normal().string() << "\n"
            << "loss curve: " << std::filesystem::absolute(svg).lexically_normal().string() << "\n";
  return same && acc >= target ? 0 : 1;
}
