// SPDX-License-Identifier: MIT
#include "nn/transformer.hpp"

#include <utility>

#include "core/error.hpp"
#include "nn/init.hpp"

namespace strata::nn {

using strata::detail::fail;

LayerNorm::LayerNorm(int64_t dim, double eps, DType dtype, std::string prefix, bool bias)
    : dim_(dim),
      eps_(eps),
      dtype_(dtype),
      weight_name_(prefix + "weight"),
      bias_name_(std::move(prefix) + "bias"),
      bias_(bias) {
  if (dim <= 0) fail<ValueError>("LayerNorm", "dim = ", dim, " must be positive");
}

Params LayerNorm::init(uint64_t) const {
  Params p{{weight_name_, full({dim_}, 1.0, dtype_)}};
  if (bias_) p.emplace(bias_name_, zeros({dim_}, dtype_));
  return p;
}

Dropout::Dropout(double p) : p_(p) {
  if (!(p >= 0 && p < 1)) {
    fail<ValueError>("Dropout", "p = ", p, " must be in [0, 1) (the probability of zeroing)");
  }
}

namespace {
int64_t checked_heads(int64_t dim, int64_t heads) {
  if (heads <= 0 || dim <= 0 || dim % heads != 0) {
    fail<ValueError>("MultiHeadAttention", "dim = ", dim,
                     " must be a positive multiple of heads = ", heads,
                     " (each head has width dim / heads)");
  }
  return heads;
}
}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t dim, int64_t heads, bool causal, bool bias,
                                       DType dtype, std::string prefix, double dropout)
    : dim_(dim),
      heads_(checked_heads(dim, heads)),
      causal_(causal),
      qkv_(dim, 3 * dim, bias, dtype, prefix + "c_attn."),
      proj_(dim, dim, bias, dtype, prefix + "c_proj."),
      drop_(dropout) {}

Params MultiHeadAttention::init(uint64_t seed) const {
  Params p = qkv_.init(derive_seed(seed, 0));
  p.merge(proj_.init(derive_seed(seed, 1)));
  return p;
}

TransformerBlock::TransformerBlock(int64_t dim, int64_t heads, double dropout, DType dtype,
                                   std::string prefix, int64_t mlp_ratio, bool causal, bool bias)
    : ln1_(dim, 1e-5, dtype, prefix + "ln_1.", bias),
      ln2_(dim, 1e-5, dtype, prefix + "ln_2.", bias),
      attn_(dim, heads, causal, bias, dtype, prefix + "attn.", dropout),
      fc1_(dim, mlp_ratio * dim, bias, dtype, prefix + "mlp.c_fc."),
      fc2_(mlp_ratio * dim, dim, bias, dtype, prefix + "mlp.c_proj."),
      drop_(dropout) {
  if (mlp_ratio <= 0)
    fail<ValueError>("TransformerBlock", "mlp_ratio = ", mlp_ratio, " must be positive");
}

Params TransformerBlock::init(uint64_t seed) const {
  Params p = ln1_.init();
  p.merge(ln2_.init());
  p.merge(attn_.init(derive_seed(seed, 0)));
  p.merge(fc1_.init(derive_seed(seed, 1)));
  p.merge(fc2_.init(derive_seed(seed, 2)));
  return p;
}

}  // namespace strata::nn
