// SPDX-License-Identifier: MIT
#pragma once
/// Text for character-level language models (nanoGPT's shakespeare_char): a
/// tokenizer whose vocabulary is the distinct bytes of a text, the train/val
/// split, and random [B, T] batches drawn from a st::Key.
///
///   const std::string text = st::nn::read_text("data/tinyshakespeare.txt");
///   const st::nn::CharTokenizer tok(text);              // 65 symbols
///   const auto [train, val] = st::nn::split_train_val(tok.encode(text), 0.9);
///   auto [x, y] = st::nn::sample_batch(train, 12, 64, st::fold_in(key, step));
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/key.hpp"
#include "diff/tensor.hpp"

namespace strata::nn {

/// The whole content of a text file, read as the loaders read files (a regular file
/// only, never blocking on a FIFO or device). Throws ValueError "read_text: 'path': ...".
std::string read_text(const std::string& path);

/// A character (byte) tokenizer: token i is the i-th smallest distinct byte of the text it
/// was built from.
class CharTokenizer {
 public:
  /// The vocabulary of `text`; throws ValueError for an empty text.
  explicit CharTokenizer(std::string_view text);
  /// How many distinct bytes the vocabulary holds (65 for tinyshakespeare).
  int64_t vocab_size() const { return int64_t(symbols_.size()); }
  /// The vocabulary, in token order.
  const std::string& symbols() const { return symbols_; }
  /// The tokens of `text`, an i64 tensor [len] (on the default device); throws ValueError naming
  /// the first byte (and its position) that is not in the vocabulary.
  Tensor encode(std::string_view text) const;
  /// The text of a 1-D integer tensor of tokens; throws ValueError for a token outside
  /// [0, vocab_size()), ShapeError or DTypeError for another rank or dtype.
  std::string decode(const Tensor& tokens) const;

 private:
  std::string symbols_;
  int16_t id_[256];  ///< each byte's token, -1 when not in the vocabulary
};

/// The first floor(train_fraction * n) tokens of a 1-D tensor and the rest (nanoGPT's split);
/// throws ValueError unless 0 < train_fraction < 1 leaves both parts non-empty.
std::pair<Tensor, Tensor> split_train_val(const Tensor& tokens, double train_fraction = 0.9);

/// `batch` windows of a 1-D token tensor at start positions drawn uniformly from
/// [0, n - block) by `key`: x [batch, block] and y, x shifted by one token (the targets).
/// The same key gives the same batch. Throws ValueError unless batch >= 1, block >= 1 and
/// the tensor holds more than block tokens.
std::pair<Tensor, Tensor> sample_batch(const Tensor& tokens, int64_t batch, int64_t block, Key key);

}  // namespace strata::nn
