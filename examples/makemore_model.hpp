// SPDX-License-Identifier: MIT
// The data and the model of examples/makemore.cpp, in a header so that the
// benchmark row makemore_train_step (bench/workloads_makemore.cpp) times a
// training step of exactly this model on exactly this data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <strata.hpp>

/// examples/makemore.cpp's character-level language model and its data.
namespace makemore {

namespace st = strata;
namespace nn = st::nn;

/// Letters of context; '.' (0) marks the start and end of a word.
constexpr int64_t kContext = 3;
/// The alphabet: '.' and a..z.
constexpr int64_t kLetters = 27;
/// The width of a letter's embedding.
constexpr int64_t kEmbed = 10;
/// The width of the MLP's hidden layer.
constexpr int64_t kHidden = 128;
/// The optimiser's learning rate (AdamW) before the example's decay.
constexpr double kLr = 0.01;
/// AdamW's decoupled weight decay.
constexpr double kWeightDecay = 1e-4;

/// The lower-case words of 3-10 letters, a..z only (no names, no
/// possessives), of a word list with one word a line; nullopt when the file
/// cannot be read.
inline std::optional<std::vector<std::string>> read_words(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<std::string> words;
  for (std::string w; std::getline(in, w);) {
    bool plain = w.size() >= 3 && w.size() <= 10;
    for (char c : w) plain = plain && c >= 'a' && c <= 'z';
    if (plain) words.push_back(w);
  }
  return words;
}

/// Training pairs: x [n, kContext] (the previous letters) and y [n] (the next), both i64.
struct Examples {
  st::Tensor x;  ///< contexts, [n, kContext]
  st::Tensor y;  ///< next letters, [n]
};

/// The (context, next letter) pairs of every letter and end of the words
/// words[order[0]], words[order[1]], ..., in that order.
inline Examples examples(const std::vector<std::string>& words, const std::vector<int64_t>& order) {
  std::vector<int64_t> xs, ys;
  for (int64_t w : order) {
    int64_t ctx[kContext] = {0, 0, 0};
    const std::string& word = words[std::size_t(w)];
    for (std::size_t i = 0; i <= word.size(); ++i) {
      const int64_t next = i < word.size() ? word[i] - 'a' + 1 : 0;
      xs.insert(xs.end(), ctx, ctx + kContext);
      ys.push_back(next);
      std::copy(ctx + 1, ctx + kContext, ctx);
      ctx[kContext - 1] = next;
    }
  }
  const int64_t n = int64_t(ys.size());
  return {st::from_vector(xs, {n, kContext}), st::from_vector(ys)};
}

/// Bengio et al. (2003): each context letter is embedded (27 x 10 table,
/// "embed.weight"), the embeddings are concatenated and fed to a tanh MLP
/// 30 -> 128 -> 27 ("0.weight", "0.bias", "1.weight", "1.bias") whose
/// outputs are the next letter's logits.
class Model {
 public:
  /// The parameters: the MLP from seed 1, the embedding from seed 2.
  nn::Params init() const {
    nn::Params params = mlp_.init(/*seed=*/1);
    params.merge(embed_.init(/*seed=*/2));
    return params;
  }

  /// The logits [n, kLetters] of contexts ctx [n, kContext], at any AD level of the parameters.
  template <st::Diffable T>
  T operator()(const nn::ParamsOf<T>& p, const st::Tensor& ctx) const {
    return mlp_(p, st::reshape(embed_(p, ctx), {ctx.shape()[0], kContext * kEmbed}));
  }

 private:
  nn::Embedding embed_{kLetters, kEmbed, st::f32, "embed."};
  nn::MLP mlp_{{kContext * kEmbed, kHidden, kLetters}, nn::Activation::tanh};
};

}  // namespace makemore
