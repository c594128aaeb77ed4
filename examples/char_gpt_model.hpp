// SPDX-License-Identifier: MIT
// The model of examples/char_gpt.cpp: a GPT in nanoGPT's shape (model.py), its training
// configurations and its training step, shared by the example, its PyTorch parity test
// (tests/nn/gpt_parity.test.cpp) and the char_gpt_train_step bench row.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <strata.hpp>

/// examples/char_gpt.cpp's character-level GPT.
namespace char_gpt {

namespace st = strata;
namespace nn = st::nn;

/// The size of a GPT and how it is trained: nanoGPT's train_shakespeare_char settings.
struct Config {
  int64_t vocab = 65;         ///< tokens (tinyshakespeare's characters)
  int64_t block = 64;         ///< context length
  int64_t layers = 4;         ///< transformer blocks
  int64_t heads = 4;          ///< attention heads per block
  int64_t width = 128;        ///< the embedding width
  double dropout = 0.0;       ///< on the embeddings and each block's residual branches
  bool bias = true;           ///< biases in the LayerNorms and Linears (GPT-2's; nanoGPT: false)
  int64_t batch = 12;         ///< sequences per step
  int64_t iters = 2000;       ///< optimiser steps
  double lr = 1e-3;           ///< the peak learning rate (cosine decay to lr / 10)
  int64_t warmup = 100;       ///< linear warm-up steps
  int64_t eval_every = 250;   ///< steps between loss estimates
  int64_t eval_iters = 20;    ///< batches per loss estimate
  st::DType dtype = st::f32;  ///< the parameters' dtype
};

/// nanoGPT's CPU configuration (its README: val loss 1.88 in about 3 minutes on a laptop).
inline Config cpu_config() { return {}; }

/// nanoGPT's GPU configuration of train_shakespeare_char.py (val loss 1.47 on an A100).
inline Config gpu_config() {
  return {.block = 256,
          .layers = 6,
          .heads = 6,
          .width = 384,
          .dropout = 0.2,
          .batch = 64,
          .iters = 5000,
          .eval_every = 250,
          .eval_iters = 200};
}

/// A model of 20,000 parameters trained for 40 steps: what the tests run (char_gpt --small).
inline Config tiny_config() {
  return {.block = 16,
          .layers = 1,
          .heads = 2,
          .width = 32,
          .batch = 4,
          .iters = 40,
          .warmup = 4,
          .eval_every = 20,
          .eval_iters = 4};
}

/// token and position embeddings ("transformer.wte", "transformer.wpe"), pre-norm blocks
/// ("transformer.h.<i>."), a final LayerNorm ("transformer.ln_f") and an output layer tied to
/// the token embedding (logits = x wte^T), as nanoGPT's GPT.
class Model {
 public:
  explicit Model(const Config& c)
      : c_(c),
        wte_(c.vocab, c.width, c.dtype, "transformer.wte."),
        wpe_(c.block, c.width, c.dtype, "transformer.wpe."),
        ln_f_(c.width, 1e-5, c.dtype, "transformer.ln_f.", c.bias) {
    for (int64_t i = 0; i < c.layers; ++i) {
      blocks_.emplace_back(c.width, c.heads, c.dropout, c.dtype,
                           "transformer.h." + std::to_string(i) + ".", /*mlp_ratio=*/4,
                           /*causal=*/true, c.bias);
    }
  }

  /// nanoGPT's initialisation: every weight matrix and embedding N(0, 0.02), the residual
  /// projections ("c_proj.weight") N(0, 0.02 / sqrt(2 layers)), biases (if any) 0, LayerNorms 1;
  /// each tensor from its own stream of seed.
  nn::Params init(uint64_t seed) const {
    nn::Params p = wte_.init(0);
    p.merge(wpe_.init(0));
    p.merge(ln_f_.init(0));
    for (const nn::TransformerBlock& b : blocks_) p.merge(b.init(0));
    uint64_t stream = 0;
    for (auto& [name, t] : p) {
      ++stream;
      const bool weight = name.ends_with(".weight") && t.ndim() == 2;
      if (!weight) continue;  // biases stay 0, LayerNorm weights 1
      const double sd =
          name.ends_with("c_proj.weight") ? 0.02 / std::sqrt(2.0 * double(c_.layers)) : 0.02;
      t = st::randn(t.shape(), nn::derive_seed(seed, stream), c_.dtype) * sd;
    }
    return p;
  }

  /// The logits [B, T, vocab] of tokens idx [B, T] (T <= block), at any AD level of the
  /// parameters; `key` (training) draws the dropout masks, none in evaluation.
  template <st::Diffable T>
  T operator()(const nn::ParamsOf<T>& p, const st::Tensor& idx, std::optional<st::Key> key) const {
    const int64_t t = idx.shape()[1];
    const st::Tensor pos = st::arange(0, double(t), 1, st::i64, idx.device());
    T x = wte_(p, idx) + wpe_(p, pos);
    std::vector<st::Key> keys;
    if (key) keys = st::split(*key, c_.layers + 1);
    if (key && c_.dropout > 0) x = st::dropout(x, c_.dropout, keys.back());
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      x = blocks_[i](p, x, key ? std::optional<st::Key>(keys[i]) : std::nullopt);
    }
    const T& wte = nn::parameter(p, "transformer.wte.weight", "char_gpt");
    return st::matmul(ln_f_(p, x), st::transpose(wte, 0, 1));
  }

  /// The configuration.
  const Config& config() const { return c_; }

 private:
  Config c_;
  nn::Embedding wte_, wpe_;
  nn::LayerNorm ln_f_;
  std::vector<nn::TransformerBlock> blocks_;
};

/// char_gpt's optimiser, nanoGPT's: AdamW with betas 0.9 and 0.99 and a decoupled weight decay
/// of 0.1 on the weight matrices and embeddings only (its two parameter groups).
inline nn::AdamW optimizer(const Config& c) {
  return nn::AdamW(
      nn::AdamOptions{.lr = c.lr, .beta2 = 0.99, .weight_decay = 0.1, .decay_min_ndim = 2});
}

/// char_gpt's learning rate by step, nanoGPT's get_lr: warm-up to c.lr, cosine decay to
/// c.lr / 10 at the last step.
inline nn::WarmupCosine schedule(const Config& c) {
  return {.max_lr = c.lr, .min_lr = c.lr / 10, .warmup = c.warmup, .decay = c.iters};
}

/// What one training step measured: the batch's loss before the update, and the gradients'
/// global norm before clipping.
struct StepResult {
  double loss;       ///< cross-entropy of the batch under the parameters before the step
  double grad_norm;  ///< as torch.nn.utils.clip_grad_norm_ returns it
};

/// One step of char_gpt's training on tokens x and next tokens y [B, T]: the loss and its
/// gradients, the gradients clipped to global norm 1, then opt's update at rate lr (in place).
/// `drop` draws the dropout masks (none without a key).
inline StepResult train_step(const Model& model, nn::Params& params, nn::AdamW& opt, double lr,
                             const st::Tensor& x, const st::Tensor& y,
                             std::optional<st::Key> drop = std::nullopt) {
  auto [loss, grads] = st::value_and_grad(
      [&](const auto& p) { return nn::cross_entropy(model(p, x, drop), y); }, params);
  const double norm = nn::clip_grad_norm(grads, 1.0);
  opt.set_lr(lr);
  opt.step(params, grads);
  return {loss.template item<double>(), norm};
}

}  // namespace char_gpt
