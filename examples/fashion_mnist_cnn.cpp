// SPDX-License-Identifier: MIT
// A convnet on Fashion-MNIST (Zalando's 70,000 28 x 28 grey images of clothing, ten classes):
// two convolution + max-pool blocks and a linear head (examples/fashion_cnn_model.hpp), trained
// with AdamW and a progress bar; prints the test accuracy, saves a safetensors checkpoint
// (reloaded and checked) and draws the loss curve as an SVG. With --per-example-norms it also
// prints the gradient norm of every example of one batch, from st::vmap(st::grad(loss)) (the
// building block of DP-SGD), checked against a loop of single-example gradients.
//   fashion_mnist_cnn [--small] [--epochs N] [--batch N] [--lr X] [--out DIR] [--data DIR]
//                     [--per-example-norms]
// The data are Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist, the default
// DIR); the checkpoint and the curve go to --out DIR (default .) as fashion_cnn.safetensors and
// fashion_cnn_loss.svg (not train_mlp's names: the tests run both in one folder at once).
// --small trains a narrow model for a few steps on a few hundred images (the test) and checks
// the per-example gradients; the exit status says whether the loss fell (--small) or the test
// accuracy reached 0.90 (otherwise).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <strata.hpp>

#include "loss_curve.hpp"  // write_loss_svg

#include "fashion_cnn_model.hpp"  // Config, Model, normalize, optimizer, schedule, train_step

namespace st = strata;
namespace nn = st::nn;
namespace fs = std::filesystem;

namespace {

/// One of the four IDX files under dir, with a clear error when the package is missing.
st::Tensor load(const fs::path& dir, const std::string& name) {
  const fs::path path = dir / (name + ".gz");
  if (!fs::exists(path))
    throw st::ValueError(path.string() +
                         " not found: install Debian's Fashion-MNIST (apt-get install "
                         "dataset-fashion-mnist, or make deps), or give --data DIR");
  return st::load_idx(path.string());
}

/// The first n of a tensor's rows (all of them when it has fewer).
st::Tensor head(const st::Tensor& t, int64_t n) {
  return st::slice(t, 0, 0, std::min(n, t.shape()[0]), 1);
}

/// The model's accuracy on images x [N, 1, 28, 28] (labels y), 1000 images at a time.
double accuracy(const fashion_cnn::Model& model, const nn::Params& p, const st::Tensor& x,
                const st::Tensor& y) {
  const int64_t n = x.shape()[0], chunk = 1000;
  double right = 0;
  for (int64_t i = 0; i < n; i += chunk) {
    const int64_t stop = std::min(n, i + chunk);
    const st::Tensor logits = model(p, st::slice(x, 0, i, stop, 1));
    right += nn::accuracy(logits, st::slice(y, 0, i, stop, 1)) * double(stop - i);
  }
  return right / double(n);
}

/// The gradient norm of each example's loss in images x [n, 1, 28, 28] (labels y [n]), from
/// one vmap(grad) call, whose gradients are checked entry by entry against a loop of n
/// single-example grads: prints the norms and the largest difference, and returns whether
/// they agree (to 1e-4, relative to 1 + the largest entry, in f32).
bool per_example_norms(const fashion_cnn::Model& model, const nn::Params& p, const st::Tensor& x,
                       const st::Tensor& y) {
  const int64_t n = x.shape()[0];
  const st::Tensor onehot = st::one_hot(y, model.config().classes, model.config().dtype);
  // The loss of ONE example: an image [1, 28, 28] and its one-hot label [classes].
  auto example_loss = [&model](const auto& q, const auto& image, const auto& label) {
    return -st::sum(label * st::log_softmax(model(q, image), -1));
  };
  const auto t0 = std::chrono::steady_clock::now();
  auto [grads, gx, gy] = st::vmap(st::grad(example_loss), {st::none, 0, 0})(p, x, onehot);
  st::Tensor sq = st::zeros({n}, st::f64);
  for (const auto& [name, g] : grads)  // g [n, *shape of the parameter]
    sq = sq + st::sum(st::reshape(g * g, {n, -1}), {1}).to(st::f64);
  const std::vector<double> norms = st::sqrt(sq).to_vector<double>();
  const double vmap_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto [gi, unused_x, unused_y] = st::grad(example_loss, p, x.ix(i), onehot.ix(i));
    for (const auto& [name, g] : gi) {  // every entry, not only the norm
      const double scale = 1 + st::max(st::abs(g)).item<double>();
      worst = std::max(worst, st::max(st::abs(grads.at(name).ix(i) - g)).item<double>() / scale);
    }
  }
  std::printf("per-example gradient norms of %lld images (vmap(grad), %.3f s):\n", (long long)n,
              vmap_s);
  for (int64_t i = 0; i < n; ++i)
    std::printf("%8.4f%s", norms[std::size_t(i)], (i + 1) % 8 == 0 || i + 1 == n ? "\n" : "");
  const bool ok = worst < 1e-4;
  std::printf("largest difference to a loop of single-example grads: %.2e (%s)\n", worst,
              ok ? "agree" : "MISMATCH");
  return ok;
}

/// The example (see the top of the file); its exit status.
int run(int argc, char** argv) {
  bool small = false, norms = false;
  fs::path out = ".", data = "/usr/share/datasets/fashion-mnist";
  std::optional<int64_t> epochs, batch;
  std::optional<double> lr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) small = true;
    if (std::strcmp(argv[i], "--per-example-norms") == 0) norms = true;
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
    if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) epochs = std::stoll(argv[++i]);
    if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) batch = std::stoll(argv[++i]);
    if (std::strcmp(argv[i], "--lr") == 0 && i + 1 < argc) lr = std::stod(argv[++i]);
  }
  fashion_cnn::Config c = small ? fashion_cnn::tiny_config() : fashion_cnn::full_config();
  if (epochs) c.epochs = *epochs;
  if (batch) c.batch = *batch;
  if (lr) c.lr = *lr;
  if (c.epochs < 1 || c.batch < 1 || !(c.lr > 0))
    throw st::ValueError("--epochs and --batch must be at least 1 and --lr positive, got " +
                         std::to_string(c.epochs) + ", " + std::to_string(c.batch) + " and " +
                         std::to_string(c.lr));
  fs::create_directories(out);
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  const int64_t n_train = small ? 512 : 60000, n_test = small ? 256 : 10000;
  const st::Tensor x_train =
      fashion_cnn::normalize(head(load(data, "train-images-idx3-ubyte"), n_train), c.dtype);
  const st::Tensor y_train = head(load(data, "train-labels-idx1-ubyte"), n_train);
  const st::Tensor x_test =
      fashion_cnn::normalize(head(load(data, "t10k-images-idx3-ubyte"), n_test), c.dtype);
  const st::Tensor y_test = head(load(data, "t10k-labels-idx1-ubyte"), n_test);

  const fashion_cnn::Model model(c);
  nn::Params params = model.init(/*seed=*/0);
  nn::AdamW opt = fashion_cnn::optimizer(c);
  nn::BatchIterator batches(x_train, y_train, c.batch, /*seed=*/1);
  const int64_t steps = c.epochs * batches.num_batches();
  const nn::WarmupCosine schedule = fashion_cnn::schedule(c, steps);
  std::printf(
      "Fashion-MNIST: %lld training, %lld test images (read in %.1f s); convnet 1-%lld-%lld"
      "-%lld, %lld parameters; AdamW lr %g (cosine decay), batch %lld, %lld epochs = %lld steps\n",
      (long long)x_train.shape()[0], (long long)x_test.shape()[0], seconds(),
      (long long)c.channels1, (long long)c.channels2, (long long)c.classes,
      (long long)nn::num_parameters(params), c.lr, (long long)c.batch, (long long)c.epochs,
      (long long)steps);

  bool norms_ok = true;
  if (norms || small) {
    const int64_t n = small ? 8 : c.batch;  // one batch (a few images in the test)
    norms_ok = per_example_norms(model, params, head(x_train, n), head(y_train, n));
  }

  const bool tty = isatty(fileno(stdout));
  const auto t_train = std::chrono::steady_clock::now();
  std::vector<double> losses;
  double recent = 0;  // the mean loss of the last 50 steps, for the progress bar
  for (int64_t step = 1; step <= steps; ++step) {
    std::optional<nn::Batch> b = batches.next();
    if (!b) b = batches.next();  // the epoch ended: the next one starts
    losses.push_back(fashion_cnn::train_step(model, params, opt, schedule(step - 1), b->x, b->y));
    const std::size_t k = std::min<std::size_t>(losses.size(), 50);
    recent = 0;
    for (std::size_t i = losses.size() - k; i < losses.size(); ++i) recent += losses[i] / double(k);
    const int filled = int(30 * step / steps);
    if (tty || step % std::max<int64_t>(steps / 10, 1) == 0 || step == steps) {
      std::printf("%s[%s%s] step %4lld/%lld  epoch %lld  loss %.4f  (%.1f s)%s", tty ? "\r" : "",
                  std::string(std::size_t(filled), '#').c_str(),
                  std::string(std::size_t(30 - filled), '.').c_str(), (long long)step,
                  (long long)steps, (long long)((step - 1) / batches.num_batches() + 1), recent,
                  seconds(), tty ? "" : "\n");
      std::fflush(stdout);
    }
  }
  if (tty) std::printf("\n");
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_train).count();
  const double acc = accuracy(model, params, x_test, y_test);

  // Checkpoint, reload, and compare predictions on the first test images.
  const std::string ckpt = (out / "fashion_cnn.safetensors").string();
  st::save_safetensors(ckpt, params,
                       {{"model", "conv 1-" + std::to_string(c.channels1) + "-" +
                                      std::to_string(c.channels2) + " + linear"},
                        {"dataset", "Fashion-MNIST"}});
  const nn::Params reloaded = st::load_safetensors(ckpt);
  const st::Tensor probe = head(x_test, 100);
  const bool same =
      st::max(st::abs(model(params, probe) - model(reloaded, probe))).item<double>() == 0.0;
  const std::string svg = (out / "fashion_cnn_loss.svg").string();
  write_loss_svg(svg, losses, "Fashion-MNIST convnet: training loss (cross-entropy) per step");

  // The loss fell: the mean of the last quarter of the steps below the first steps'.
  const std::size_t q = std::max<std::size_t>(losses.size() / 4, 1);
  double first = 0, last = 0;
  for (std::size_t i = 0; i < q; ++i) {
    first += losses[i] / double(q);
    last += losses[losses.size() - 1 - i] / double(q);
  }
  const double target = 0.90;
  std::printf(
      "trained %lld steps in %.1f s; mean loss %.4f over the first %zu steps, %.4f over "
      "the last %zu\n",
      (long long)steps, train_s, first, q, last, q);
  std::printf("test accuracy %.4f on %lld images%s\n", acc, (long long)x_test.shape()[0],
              small ? "" : (acc >= target ? " (target 0.90 reached)" : " (target 0.90 MISSED)"));
  std::cout << "reloaded checkpoint predicts " << (same ? "the same" : "DIFFERENTLY") << "\n"
            << "checkpoint: " << fs::absolute(ckpt).lexically_normal().string() << "\n"
            << "loss curve: " << fs::absolute(svg).lexically_normal().string() << "\n";
  std::printf("whole run %.1f s\n", seconds());
  const bool learnt = small ? last < first - 0.1 : acc >= target;
  return learnt && same && norms_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const st::Error& e) {
    std::cerr << "fashion_mnist_cnn: " << e.what() << "\n";
    return 2;
  }
}
