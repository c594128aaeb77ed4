// SPDX-License-Identifier: MIT
// The model of examples/fashion_mnist_cnn.cpp: a small convnet for 28 x 28 grey images (two
// convolution + max-pool blocks and a linear head), its training configurations, its input
// normalisation and its training step, shared by the example, its PyTorch parity test
// (tests/nn/cnn_parity.test.cpp) and the fashion_cnn_train_step bench row.
#pragma once

#include <cstdint>
#include <string>

#include <strata.hpp>

/// examples/fashion_mnist_cnn.cpp's convnet.
namespace fashion_cnn {

namespace st = strata;
namespace nn = st::nn;

/// The size of the convnet and how it is trained.
struct Config {
  int64_t channels1 = 32;      ///< the first convolution's output channels
  int64_t channels2 = 64;      ///< the second convolution's output channels
  int64_t classes = 10;        ///< Fashion-MNIST's ten kinds of clothing
  int64_t batch = 64;          ///< images per step
  int64_t epochs = 2;          ///< passes over the training images
  double lr = 2e-3;            ///< AdamW's peak learning rate (cosine decay to lr / 10)
  double weight_decay = 1e-2;  ///< AdamW's decoupled decay, on every parameter (PyTorch's default)
  st::DType dtype = st::f32;   ///< the parameters' dtype
};

/// What the example trains by default: 2 epochs of batch 64, lr 2e-3 decaying to 2e-4.
inline Config full_config() { return {}; }

/// A narrower convnet for a few steps on a few hundred images: what the tests run
/// (fashion_mnist_cnn --small).
inline Config tiny_config() { return {.channels1 = 8, .channels2 = 16, .batch = 32, .epochs = 2}; }

/// The image side the model takes (28, as MNIST's); the head's input is channels2 * 7 * 7.
inline constexpr int64_t kSide = 28;

/// conv1 (1 -> channels1, 3 x 3, padding 1), relu, 2 x 2 max-pool; conv2 (channels1 ->
/// channels2, 3 x 3, padding 1), relu, 2 x 2 max-pool; flatten; fc (channels2 * 7 * 7 ->
/// classes). Parameter names as torch.nn modules named conv1, conv2 and fc would have them
/// ("conv1.weight" [channels1, 1, 3, 3], ..., "fc.weight" [classes, channels2 * 49], "fc.bias").
class Model {
 public:
  /// The layers of configuration c.
  explicit Model(const Config& c)
      : c_(c),
        conv1_(1, c.channels1, {3, 3}, {.padding = {1, 1}}, true, c.dtype, "conv1."),
        conv2_(c.channels1, c.channels2, {3, 3}, {.padding = {1, 1}}, true, c.dtype, "conv2."),
        fc_(c.channels2 * (kSide / 4) * (kSide / 4), c.classes, true, c.dtype, "fc."),
        pool_({2, 2}) {}

  /// PyTorch's default initialisation of each layer (U(-1/sqrt(fan_in), 1/sqrt(fan_in))),
  /// layer i from its own stream of seed.
  nn::Params init(uint64_t seed) const {
    nn::Params p = conv1_.init(nn::derive_seed(seed, 0));
    p.merge(conv2_.init(nn::derive_seed(seed, 1)));
    p.merge(fc_.init(nn::derive_seed(seed, 2)));
    return p;
  }

  /// The logits [N, classes] of images x [N, 1, 28, 28], or [classes] of one image [1, 28, 28]
  /// (what vmap maps a per-example loss over), at any AD level of the parameters and the images.
  template <st::Diffable T, st::Diffable X>
  st::common_level_t<T, X> operator()(const nn::ParamsOf<T>& p, const X& x) const {
    const auto h1 = pool_(st::relu(conv1_(p, x)));
    const auto h2 = pool_(st::relu(conv2_(p, h1)));
    const st::Shape s = h2.shape();
    st::Shape flat(s.begin(), s.end() - 3);  // the batch axis, if any
    flat.push_back(-1);
    return fc_(p, st::reshape(h2, flat));
  }

  /// The configuration.
  const Config& config() const { return c_; }

 private:
  Config c_;
  nn::Conv conv1_, conv2_;
  nn::Linear fc_;
  nn::MaxPool pool_;
};

/// Fashion-MNIST's pixel mean and standard deviation over the training images (in [0, 1]).
inline constexpr double kMean = 0.2860, kStd = 0.3530;

/// Images as load_idx returns them (i32 [N, 28, 28], values 0..255) as the model's input:
/// [N, 1, 28, 28] in dtype, scaled to [0, 1], then standardised with kMean and kStd.
inline st::Tensor normalize(const st::Tensor& images, st::DType dtype) {
  const st::Shape& s = images.shape();
  if (s.size() != 3 || s[1] != kSide || s[2] != kSide)
    throw st::ShapeError("fashion_cnn::normalize: images must be [N, 28, 28], got " +
                         st::to_string(s));
  const st::Tensor x = (images.to(dtype) * (1.0 / 255.0) - kMean) * (1.0 / kStd);
  return st::reshape(x, {s[0], 1, kSide, kSide});
}

/// The convnet's optimiser: AdamW at c.lr with decoupled decay c.weight_decay on every
/// parameter (torch.optim.AdamW's defaults otherwise: betas 0.9 and 0.999, eps 1e-8).
inline nn::AdamW optimizer(const Config& c) {
  return nn::AdamW(nn::AdamOptions{.lr = c.lr, .weight_decay = c.weight_decay});
}

/// The learning rate by step over a run of `steps` steps: cosine decay from c.lr to c.lr / 10,
/// no warm-up.
inline nn::WarmupCosine schedule(const Config& c, int64_t steps) {
  return {.max_lr = c.lr, .min_lr = c.lr / 10, .warmup = 0, .decay = steps};
}

/// One step of training on images x [N, 1, 28, 28] and labels y [N]: the loss and its
/// gradients, then opt's update at rate lr (in place). Returns the batch's loss before the
/// update.
inline double train_step(const Model& model, nn::Params& params, nn::AdamW& opt, double lr,
                         const st::Tensor& x, const st::Tensor& y) {
  auto [value, grads] =
      st::value_and_grad([&](const auto& p) { return nn::cross_entropy(model(p, x), y); }, params);
  opt.set_lr(lr);
  opt.step(params, grads);
  return value.template item<double>();
}

}  // namespace fashion_cnn
