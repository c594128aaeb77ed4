// SPDX-License-Identifier: MIT
#pragma once
/// Matrices: matmul with broadcast batch dims and 1-D operands, dot, the band
/// masks tril and triu, diagonal and diag_embed, and one_hot (a matrix of one-hot rows).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

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

/// The diagonal with offset `offset` of the matrices formed by axes axis1 and axis2 of x
/// (numpy.diagonal): those two axes are removed and the diagonal becomes the last axis, of
/// length min(rows, cols - offset) for offset >= 0 (min(rows + offset, cols) below), or 0.
/// A composite of views, a reshape and a strided slice, so it is differentiable. Throws
/// IndexError for an axis out of range or equal axes. Example: `st::diagonal(m)`; for a batch
/// of matrices `st::diagonal(a, 0, -2, -1)`.
template <Diffable T>
T diagonal(const T& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1) {
  const int64_t r = x.shape().ndim();
  const int64_t a1 = normalize_axis(axis1, x.shape(), "diagonal");
  const int64_t a2 = normalize_axis(axis2, x.shape(), "diagonal");
  if (a1 == a2) detail::fail<IndexError>("diagonal", "axis1 and axis2 are both axis ", a1);
  Shape dims;
  for (int64_t i = 0; i < r; ++i) {
    if (i != a1 && i != a2) dims.push_back(i);
  }
  dims.push_back(a1);
  dims.push_back(a2);
  T y = permute(x, dims);  // [..., rows, cols]
  const int64_t rows = y.shape()[r - 2], cols = y.shape()[r - 1];
  // Compared before negating: -offset overflows at INT64_MIN.
  const int64_t skip_rows = offset < 0 ? (offset <= -rows ? rows : -offset) : 0;
  const int64_t skip_cols = std::min(offset > 0 ? offset : 0, cols);
  const int64_t len = std::min(rows - skip_rows, cols - skip_cols);
  y = slice(slice(y, -2, skip_rows, skip_rows + len), -1, skip_cols, skip_cols + len);
  Shape flat(dims.begin(), dims.end() - 2);
  for (std::size_t i = 0; i + 2 < dims.size(); ++i) flat[i] = x.shape()[dims[i]];
  flat.push_back(len * len);
  return slice(reshape(y, flat), -1, 0, std::nullopt, len + 1);
}

/// Matrices [..., n + |offset|, n + |offset|] with v [..., n] on their diagonal `offset` and
/// zeros elsewhere (torch.diag_embed over the last two axes). No arithmetic: an infinite
/// entry of v stays where it is. Throws ShapeError for a 0-d v. Example: `st::diag_embed(s)`.
template <Diffable T>
T diag_embed(const T& v, int64_t offset = 0) {
  const Shape s = v.shape();
  if (s.ndim() == 0) detail::fail<ShapeError>("diag_embed", "needs rank >= 1, got a 0-d tensor");
  const int64_t n = s[s.ndim() - 1];
  Shape lead(s.begin(), s.end() - 1);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape out = lead;
    for (int64_t d : tail) out.push_back(d);
    return out;
  };
  // Row i of [n, n + 1] is v_i then n zeros: flattened, v_i lands at i (n + 1), the diagonal.
  Pads widen(std::size_t(s.ndim() + 1), {0, 0});
  widen.back() = {0, n};
  const T rows = reshape(pad(unsqueeze(v, -1), widen), with({n * (n + 1)}));
  const T d = reshape(slice(rows, -1, 0, n * n), with({n, n}));
  if (offset == 0) return d;
  const int64_t k = offset > 0 ? offset : -offset;
  Pads around(std::size_t(s.ndim() + 1), {0, 0});
  around[around.size() - 2] =
      offset > 0 ? std::pair<int64_t, int64_t>{0, k} : std::pair{k, int64_t{0}};
  around[around.size() - 1] =
      offset > 0 ? std::pair<int64_t, int64_t>{k, 0} : std::pair{int64_t{0}, k};
  return pad(d, around);
}

namespace detail {
/// A [rows, cols] bool mask: col - row <= k (tril) or >= k (triu).
Tensor band_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device);
/// Throws unless idx is an i32 or i64 tensor whose values all lie in [0, n) (IndexError
/// naming op and the first value outside); checked again on every call of a jit plan.
void check_positions(const Tensor& idx, int64_t n, std::string_view op);
}  // namespace detail

template <Diffable T>
T tril(const T& x, int64_t k) {
  const int64_t n = x.shape().ndim();
  if (n < 2) detail::fail<ShapeError>("tril", "needs rank >= 2, got shape ", x.shape());
  const Tensor m = detail::band_mask(x.shape()[n - 2], x.shape()[n - 1], k, true, x.device());
  return x.dtype() == DType::b8 ? where(m, x, false) : where(m, x, 0);
}
template <Diffable T>
T triu(const T& x, int64_t k) {
  const int64_t n = x.shape().ndim();
  if (n < 2) detail::fail<ShapeError>("triu", "needs rank >= 2, got shape ", x.shape());
  const Tensor m = detail::band_mask(x.shape()[n - 2], x.shape()[n - 1], k, false, x.device());
  return x.dtype() == DType::b8 ? where(m, x, false) : where(m, x, 0);
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
