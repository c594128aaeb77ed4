// SPDX-License-Identifier: MIT
#include "nn/data.hpp"

#include <exception>
#include <numeric>

#include "core/error.hpp"
#include "core/random.hpp"
#include "nn/params.hpp"
#include "raw/ops.hpp"

namespace strata::nn {

using strata::detail::fail;

std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  if (n < 0) fail<ValueError>("permutation", "negative length ", n);
  std::vector<int64_t> p;
  try {
    p.resize(static_cast<std::size_t>(n));
  } catch (const std::exception&) {  // std::length_error or std::bad_alloc, nothing else
    fail<ValueError>("permutation", "out of memory: cannot hold ", n, " positions");
  }
  std::iota(p.begin(), p.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) {
    // j uniform in [0, i]: 53 random bits scaled (bias below 2^-53 * n, negligible).
    const auto w = strata::detail::philox_words(seed, uint64_t(i));
    const int64_t j = int64_t(strata::detail::unit_double(w[0], w[1]) * double(i + 1));
    std::swap(p[std::size_t(i)], p[std::size_t(j)]);
  }
  return p;
}

BatchIterator::BatchIterator(Tensor inputs, Tensor targets, int64_t batch_size, uint64_t seed,
                             bool shuffle, bool drop_last)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      n_(0),
      batch_size_(batch_size),
      seed_(seed),
      shuffle_(shuffle),
      drop_last_(drop_last) {
  const char* op = "BatchIterator";
  if (!inputs_.defined() || !targets_.defined()) fail<ValueError>(op, "undefined tensor");
  if (inputs_.ndim() == 0 || targets_.ndim() == 0) {
    fail<ShapeError>(op, "inputs ", inputs_.shape(), " and targets ", targets_.shape(),
                     " need a sample axis (rank >= 1)");
  }
  if (inputs_.shape()[0] != targets_.shape()[0]) {
    fail<ShapeError>(op, "inputs ", inputs_.shape(), " and targets ", targets_.shape(),
                     " have different numbers of samples");
  }
  n_ = inputs_.shape()[0];
  if (n_ == 0) fail<ValueError>(op, "no samples");
  if (batch_size <= 0) fail<ValueError>(op, "batch_size must be positive, got ", batch_size);
  if (drop_last && batch_size > n_) {
    fail<ValueError>(op, "batch_size ", batch_size, " exceeds the ", n_,
                     " samples, and drop_last would leave no batch");
  }
  start_epoch();
}

int64_t BatchIterator::num_batches() const {
  return drop_last_ ? n_ / batch_size_ : (n_ + batch_size_ - 1) / batch_size_;
}

void BatchIterator::start_epoch() {
  pos_ = 0;
  if (shuffle_) {
    order_ = permutation(n_, derive_seed(seed_, uint64_t(epoch_)));
  } else {
    order_.resize(std::size_t(n_));
    std::iota(order_.begin(), order_.end(), int64_t{0});
  }
}

std::optional<Batch> BatchIterator::next() {
  const int64_t left = n_ - pos_;
  if (left == 0 || (drop_last_ && left < batch_size_)) {
    ++epoch_;
    start_epoch();
    return std::nullopt;
  }
  const int64_t b = std::min(batch_size_, left);
  const std::vector<int64_t> idx(order_.begin() + pos_, order_.begin() + pos_ + b);
  pos_ += b;
  const RawTensor i = raw::from_host(idx.data(), {b}, DType::i64, inputs_.device());
  return Batch{Tensor(raw::index_select(inputs_.raw(), 0, i)),
               Tensor(raw::index_select(targets_.raw(), 0, i))};
}

}  // namespace strata::nn
