// SPDX-License-Identifier: MIT
#pragma once
/// The layers of a transformer in the functional style of nn/layers.hpp: LayerNorm, Dropout,
/// MultiHeadAttention (causal self-attention) and a pre-norm TransformerBlock, with nanoGPT's
/// parameter names ("ln_1.weight", "attn.c_attn.weight", "mlp.c_fc.weight", ...), so a GPT's
/// state dict maps one to one. Randomness is explicit: a layer with dropout takes a st::Key
/// when training and none in evaluation.
///
///   st::nn::TransformerBlock block(128, 4, /*dropout=*/0.1, st::f32, "h.0.");
///   st::nn::Params p = block.init(seed);
///   auto y = block(p, x, st::fold_in(key, step));   // x [B, T, 128]; no key: evaluation
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "diff/ops.hpp"
#include "nn/layers.hpp"
#include "nn/params.hpp"

namespace strata::nn {

// --- LayerNorm --------------------------------------------------------------
/// Layer normalisation over the last axis (torch.nn.LayerNorm(dim, bias=bias)): "weight"
/// (ones) and, unless bias is false, "bias" (zeros), both [dim]; x [..., dim] -> same shape
/// through st::layer_norm.
class LayerNorm {
 public:
  /// Normalises the last axis of width dim (> 0, ValueError otherwise); names prefix + "weight"
  /// and prefix + "bias". Without a bias (nanoGPT's bias=False) the map is layer_norm(x) * weight.
  LayerNorm(int64_t dim, double eps = 1e-5, DType dtype = f32, std::string prefix = "",
            bool bias = true);
  /// weight ones, bias zeros (PyTorch's initialisation).
  Params init(uint64_t seed = 0) const;
  /// layer_norm(x, {dim}, weight, bias, eps). Throws ValueError for a missing parameter,
  /// ShapeError for a wrong parameter or input shape.
  template <Diffable T, Diffable X>
  common_level_t<T, X> operator()(const ParamsOf<T>& p, const X& x) const {
    const T& w = parameter(p, weight_name_, "LayerNorm");  // weight first: its error first
    if (!bias_) {
      detail::check_param_shape(w.shape(), {dim_}, weight_name_, "LayerNorm");
      return layer_norm(x, {dim_}, eps_) * w;
    }
    const T& b = parameter(p, bias_name_, "LayerNorm");
    return layer_norm(x, {dim_}, w, b, eps_);
  }
  /// The normalised width.
  int64_t dim() const { return dim_; }
  /// Whether the layer adds a bias.
  bool has_bias() const { return bias_; }

 private:
  int64_t dim_;
  double eps_;
  DType dtype_;
  std::string weight_name_, bias_name_;
  bool bias_;
};

// --- Dropout ----------------------------------------------------------------
/// Inverted dropout with rate p (torch.nn.Dropout): with a key (training) st::dropout(x, p,
/// key), without one (evaluation) x itself. Holds no parameters.
class Dropout {
 public:
  /// p in [0, 1) (ValueError otherwise).
  explicit Dropout(double p);
  /// dropout(x, p, *key) when a key is given, else x.
  template <Diffable T>
  T operator()(const T& x, std::optional<Key> key) const {
    return key && p_ > 0 ? dropout(x, p_, *key) : x;
  }
  /// The drop probability.
  double p() const { return p_; }

 private:
  double p_;
};

// --- MultiHeadAttention -----------------------------------------------------
/// Multi-head self-attention as nanoGPT's CausalSelfAttention: "c_attn" (Linear dim -> 3 dim,
/// the queries, keys and values side by side) and "c_proj" (Linear dim -> dim). x [..., T, dim]
/// is split into `heads` heads of width dim / heads, each attends with
/// st::scaled_dot_product_attention (causal or not), and the heads are concatenated and
/// projected: same shape as x. With a dropout probability and a key (training), the attention
/// weights are dropped out before they weigh the values (nanoGPT's attn_dropout).
class MultiHeadAttention {
 public:
  /// dim divisible by heads > 0 (ValueError naming both otherwise); dropout in [0, 1).
  MultiHeadAttention(int64_t dim, int64_t heads, bool causal = true, bool bias = true,
                     DType dtype = f32, std::string prefix = "", double dropout = 0.0);
  /// c_attn and c_proj initialised as Linear::init, from streams 0 and 1 of seed.
  Params init(uint64_t seed) const;
  /// Self-attention of x [..., T, dim]; `key` (training) draws the dropout mask of the
  /// attention weights, dropout(attention_weights(q, k), p, *key). Throws like Linear for a
  /// wrong width or parameter.
  template <Diffable T, Diffable X>
  common_level_t<T, X> operator()(const ParamsOf<T>& p, const X& x,
                                  std::optional<Key> key = std::nullopt) const {
    using R = common_level_t<T, X>;
    const R qkv = qkv_(p, x);  // [..., T, 3 dim]
    const std::vector<R> parts = split(qkv, {dim_, dim_, dim_}, -1);
    const Shape s = x.shape();  // [..., T, dim]
    Shape heads = s;
    heads[heads.size() - 1] = heads_;
    heads.push_back(dim_ / heads_);  // [..., T, heads, head_dim]
    auto to_heads = [&](const R& t) { return transpose(reshape(t, heads), -3, -2); };
    const R q = to_heads(parts[0]), k = to_heads(parts[1]), v = to_heads(parts[2]);
    const R y = key && drop_.p() > 0 ? matmul(drop_(attention_weights(q, k, causal_), key), v)
                                     : scaled_dot_product_attention(q, k, v, causal_);
    return proj_(p, reshape(transpose(y, -3, -2), s));
  }
  /// The model width.
  int64_t dim() const { return dim_; }
  /// The number of heads.
  int64_t heads() const { return heads_; }

 private:
  int64_t dim_, heads_;
  bool causal_;
  Linear qkv_, proj_;
  Dropout drop_;
};

// --- TransformerBlock -------------------------------------------------------
/// A pre-norm transformer block as nanoGPT's Block (GPT-2):
///   x = x + dropout(attn(ln_1(x)));  x = x + dropout(mlp(ln_2(x)))
/// with mlp = c_proj(gelu(c_fc(x))), c_fc dim -> mlp_ratio dim (GELU's tanh approximation,
/// GPT-2's). Parameters: prefix + "ln_1.*", "attn.c_attn.*", "attn.c_proj.*", "ln_2.*",
/// "mlp.c_fc.*", "mlp.c_proj.*". When a key is given (training), dropout acts where nanoGPT's
/// does: on the attention weights and on the two residual branches. With bias false, no
/// LayerNorm or Linear of the block has a bias (nanoGPT's bias=False).
class TransformerBlock {
 public:
  /// dim divisible by heads; dropout in [0, 1) (ValueError otherwise).
  TransformerBlock(int64_t dim, int64_t heads, double dropout = 0.0, DType dtype = f32,
                   std::string prefix = "", int64_t mlp_ratio = 4, bool causal = true,
                   bool bias = true);
  /// Every sub-layer initialised from its own stream of seed (LayerNorm: ones and zeros).
  Params init(uint64_t seed) const;
  /// The block on x [..., T, dim]; `key` (training) draws the three dropout masks (the
  /// attention weights', then the two branches') from split(*key, 3). Same shape as x.
  template <Diffable T, Diffable X>
  common_level_t<T, X> operator()(const ParamsOf<T>& p, const X& x,
                                  std::optional<Key> key = std::nullopt) const {
    using R = common_level_t<T, X>;
    std::optional<Key> k0, k1, k2;
    if (key) {
      const std::vector<Key> k = split(*key, 3);
      std::tie(k0, k1, k2) = std::tuple{k[0], k[1], k[2]};
    }
    const R h = lift<R>(x) + drop_(attn_(p, ln1_(p, x), k0), k1);
    return h + drop_(fc2_(p, gelu(fc1_(p, ln2_(p, h)))), k2);
  }

 private:
  LayerNorm ln1_, ln2_;
  MultiHeadAttention attn_;
  Linear fc1_, fc2_;
  Dropout drop_;
};

}  // namespace strata::nn
