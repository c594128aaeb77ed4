// SPDX-License-Identifier: MIT
#include "nn/text.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "diff/index.hpp"
#include "nn/file_io.hpp"

namespace strata::nn {

using strata::detail::fail;

std::string read_text(const std::string& path) {
  return detail::guard_file_op("read_text", path, [&] {
    const detail::InputFile in(path, "read_text");
    std::string text(std::size_t(in.size()), '\0');
    if (!text.empty()) in.read_at(0, text.data(), text.size(), "the text");
    return text;
  });
}

CharTokenizer::CharTokenizer(std::string_view text) {
  if (text.empty()) fail<ValueError>("CharTokenizer", "an empty text has no vocabulary");
  bool seen[256] = {};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::fill(std::begin(id_), std::end(id_), int16_t(-1));
  for (int b = 0; b < 256; ++b) {
    if (!seen[b]) continue;
    id_[b] = int16_t(symbols_.size());
    symbols_.push_back(char(b));
  }
}

Tensor CharTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const int16_t id = id_[static_cast<unsigned char>(text[i])];
    if (id < 0) {
      fail<ValueError>("CharTokenizer::encode", "byte ", i, " (", detail::quote(text.substr(i, 1)),
                       ") is not in the vocabulary: build the tokenizer from a text that has it");
    }
    ids[i] = id;
  }
  return from_vector(ids, {int64_t(ids.size())});
}

std::string CharTokenizer::decode(const Tensor& tokens) const {
  if (tokens.ndim() != 1) {
    fail<ShapeError>("CharTokenizer::decode", "tokens of shape ", tokens.shape(),
                     ": expected a 1-D tensor");
  }
  if (tokens.dtype() != i64 && tokens.dtype() != i32) {
    fail<DTypeError>("CharTokenizer::decode", "tokens of dtype ", dtype_name(tokens.dtype()),
                     ": expected i64 or i32");
  }
  const std::vector<int64_t> ids = tokens.to_vector<int64_t>();
  std::string out(ids.size(), '\0');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size()) {
      fail<ValueError>("CharTokenizer::decode", "token ", i, " is ", ids[i],
                       ", outside the vocabulary [0, ", vocab_size(), ")");
    }
    out[i] = symbols_[std::size_t(ids[i])];
  }
  return out;
}

std::pair<Tensor, Tensor> split_train_val(const Tensor& tokens, double train_fraction) {
  if (tokens.ndim() != 1) {
    fail<ShapeError>("split_train_val", "tokens of shape ", tokens.shape(),
                     ": expected a 1-D tensor");
  }
  const int64_t n = tokens.shape()[0];
  const double at = std::floor(train_fraction * double(n));
  if (!(train_fraction > 0 && train_fraction < 1) || at < 1 || at > double(n - 1)) {
    fail<ValueError>("split_train_val", "train_fraction = ", train_fraction, " of ", n,
                     " tokens leaves a part empty: it must be in (0, 1), with both parts "
                     "non-empty");
  }
  const int64_t cut = int64_t(at);
  return {Tensor(tokens.ix(slice(0, cut))), Tensor(tokens.ix(slice(cut, n)))};
}

std::pair<Tensor, Tensor> sample_batch(const Tensor& tokens, int64_t batch, int64_t block,
                                       Key key) {
  if (tokens.ndim() != 1) {
    fail<ShapeError>("sample_batch", "tokens of shape ", tokens.shape(), ": expected a 1-D tensor");
  }
  const int64_t n = tokens.shape()[0];
  if (batch < 1 || block < 1 || n <= block) {
    fail<ValueError>("sample_batch", "batch = ", batch, ", block = ", block, " from ", n,
                     " tokens: batch and block must be >= 1, and the tokens more than block");
  }
  // Uniform starts in [0, n - block): floor(u * (n - block)) of u in [0, 1).
  const std::vector<double> u = rand({batch}, key.bits(), f64, Device::cpu()).to_vector<double>();
  std::vector<int64_t> positions(std::size_t(batch * (block + 1)));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = std::min(int64_t(u[std::size_t(b)] * double(n - block)), n - block - 1);
    for (int64_t t = 0; t <= block; ++t) positions[std::size_t(b * (block + 1) + t)] = start + t;
  }
  const Tensor idx = from_vector(positions, {batch, block + 1}).to(tokens.device());
  const Tensor windows = take(tokens, idx, 0);
  return {Tensor(windows.ix(all, slice(0, block))), Tensor(windows.ix(all, slice(1, block + 1)))};
}

}  // namespace strata::nn
