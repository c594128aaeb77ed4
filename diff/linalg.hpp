// SPDX-License-Identifier: MIT
#pragma once
/// Matrices: matmul with broadcast batch dims and 1-D operands, dot, the band
/// masks tril and triu, and one_hot (a matrix of one-hot rows).
#include <cstdint>

#include "diff/comparison.hpp"
#include "diff/movement.hpp"

namespace strata {

/// Matrix product (numpy.matmul): [..., m, k] x [..., k, n] -> [..., m, n]. 1-D operands
/// become a row / column and lose that dim again; batch dims broadcast; dtypes promote.
/// Throws ShapeError for rank 0 or mismatched k. Example: `st::matmul(x, w)`.
template <class A, class B>
requires detail::Operands<A, B> &&
    (!Scalar<A>)&&(!Scalar<B>)common_level_t<A, B> matmul(const A& a, const B& b) {
  using R = common_level_t<A, B>;
  R x = lift<R>(a), y = lift<R>(b);
  if (x.shape().ndim() == 0 || y.shape().ndim() == 0) {
    detail::fail<ShapeError>("matmul", "operands need rank >= 1, got shapes ", x.shape(), " and ",
                             y.shape());
  }
  const DType t = promote_types(x.dtype(), y.dtype());
  x = detail::as_dtype(x, t);
  y = detail::as_dtype(y, t);
  const bool vec_a = x.shape().ndim() == 1, vec_b = y.shape().ndim() == 1;
  if (vec_a) x = unsqueeze(x, 0);
  if (vec_b) y = unsqueeze(y, 1);
  R out = Prims<R>::matmul(x, y);
  if (vec_b) out = squeeze(out, -1);
  if (vec_a) out = squeeze(out, vec_b ? -1 : -2);
  return out;
}
/// Inner product of two vectors (a 0-d tensor); matmul otherwise. Example: `st::dot(u, v)`.
template <class A, class B>
requires detail::Operands<A, B> &&
    (!Scalar<A>)&&(!Scalar<B>)common_level_t<A, B> dot(const A& a, const B& b) {
  return matmul(a, b);
}

// --- construction helpers -------------------------------------------------------------
/// Integer positions idx (any shape, i32 or i64) as one-hot rows of length n: shape
/// idx.shape() + [n], a plain constant. Throws IndexError for a position outside [0, n).
/// Example: `st::one_hot(labels, 10)`.
Tensor one_hot(const Tensor& idx, int64_t n, DType dtype = f32);
/// x with the elements above diagonal k set to zero, over the last two axes (numpy.tril;
/// k > 0 keeps diagonals above). Throws ShapeError for rank < 2. Example: `st::tril(m)`.
template <Diffable T>
T tril(const T& x, int64_t k = 0);
/// x with the elements below diagonal k set to zero, over the last two axes (numpy.triu).
/// Throws ShapeError for rank < 2. Example: `st::triu(m, 1)`.
template <Diffable T>
T triu(const T& x, int64_t k = 0);

namespace detail {
/// A [rows, cols] bool mask: col - row <= k (tril) or >= k (triu).
Tensor band_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device);
}  // namespace detail

template <Diffable T>
T tril(const T& x, int64_t k) {
  const int64_t n = x.shape().ndim();
  if (n < 2) detail::fail<ShapeError>("tril", "needs rank >= 2, got shape ", x.shape());
  const Tensor m = detail::band_mask(x.shape()[n - 2], x.shape()[n - 1], k, true, x.device());
  return where(m, x, 0);
}
template <Diffable T>
T triu(const T& x, int64_t k) {
  const int64_t n = x.shape().ndim();
  if (n < 2) detail::fail<ShapeError>("triu", "needs rank >= 2, got shape ", x.shape());
  const Tensor m = detail::band_mask(x.shape()[n - 2], x.shape()[n - 1], k, false, x.device());
  return where(m, x, 0);
}

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::matmul(const D& other) const {
  return strata::matmul(self(), other);
}
template <class D>
D Ops<D>::dot(const D& other) const {
  return strata::dot(self(), other);
}

}  // namespace strata
