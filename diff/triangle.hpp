// SPDX-License-Identifier: MIT
#pragma once
/// Triangles of matrices as packed vectors: the positions of a triangle
/// (numpy.tril_indices, numpy.triu_indices), a triangle read into a vector
/// (tril_pack, triu_pack) and a vector unpacked into a triangle of a matrix of
/// zeros (tril_unpack, triu_unpack). Packed order is row-major, as NumPy's.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "diff/index.hpp"
#include "diff/movement.hpp"

namespace strata {

namespace detail {

/// Row-major positions (i, j) of an [n, m] matrix with j - i <= k (lower) or >= k (upper).
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> triangle(int64_t n, int64_t k,
                                                                      std::optional<int64_t> m,
                                                                      bool lower,
                                                                      std::string_view name) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) {
    fail<ValueError>(name, "needs non-negative sizes, got n = ", n, ", m = ", cols);
  }
  std::pair<std::vector<int64_t>, std::vector<int64_t>> rc;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (lower ? j - i <= k : j - i >= k) {
        rc.first.push_back(i);
        rc.second.push_back(j);
      }
    }
  }
  return rc;
}

inline std::pair<Tensor, Tensor> triangle_indices(int64_t n, int64_t k, std::optional<int64_t> m,
                                                  bool lower, std::string_view name) {
  auto [r, c] = triangle(n, k, m, lower, name);
  const int64_t count = int64_t(r.size());
  return {from_vector(r, {count}), from_vector(c, {count})};
}

/// The triangle of the last two axes of x ([..., n, m]) as its last axis, row-major.
template <Diffable T>
T pack(const T& x, int64_t k, bool lower, std::string_view name) {
  const Shape s = x.shape();
  if (s.ndim() < 2) fail<ShapeError>(name, "needs rank >= 2, got shape ", s);
  const int64_t n = s[s.ndim() - 2], m = s[s.ndim() - 1];
  auto [r, c] = triangle(n, k, m, lower, name);
  std::vector<int64_t> flat(r.size());
  for (std::size_t p = 0; p < r.size(); ++p) flat[p] = r[p] * m + c[p];
  Shape merged(s.begin(), s.end() - 2);
  merged.push_back(n * m);
  const Tensor idx = from_vector(flat, {int64_t(flat.size())}).to(x.device());
  return take(reshape(x, merged), idx, -1);
}

/// [..., n, m] matrices of zeros with v's last axis (row-major) in their triangle.
template <Diffable T>
T unpack(const T& v, int64_t n, int64_t k, std::optional<int64_t> m, bool lower,
         std::string_view name) {
  const Shape s = v.shape();
  if (s.ndim() < 1) fail<ShapeError>(name, "needs rank >= 1, got a 0-d tensor");
  const int64_t cols = m.value_or(n);
  auto [r, c] = triangle(n, k, m, lower, name);
  const int64_t count = int64_t(r.size());
  if (s[s.ndim() - 1] != count) {
    fail<ShapeError>(name, "the triangle of a [", n, ", ", cols, "] matrix with k = ", k, " has ",
                     count, " elements, but the last axis of ", s, " has ", s[s.ndim() - 1]);
  }
  // Each matrix element reads position 1 + p of v padded with one zero in front (its packed
  // position p), or position 0 (the zero) outside the triangle: one gather, whose transpose
  // is a scatter-add back into v.
  std::vector<int64_t> src(std::size_t(n * cols), 0);
  for (int64_t p = 0; p < count; ++p) src[std::size_t(r[p] * cols + c[p])] = p + 1;
  const Tensor idx = from_vector(src, {n, cols}).to(v.device());
  Pads front(std::size_t(s.ndim()), {0, 0});
  front.back() = {1, 0};
  return take(pad(v, front), idx, -1);
}

}  // namespace detail

/// The row and column positions (i64 vectors, row-major) of the elements of an [n, m] matrix
/// (m defaults to n) on or below diagonal k (numpy.tril_indices: k = -1 excludes the diagonal,
/// k = 1 adds the one above). `x.vix(rows, cols)` reads them. Throws ValueError for a negative
/// size. Example: `auto [rows, cols] = st::tril_indices(4, -1);`
inline std::pair<Tensor, Tensor> tril_indices(int64_t n, int64_t k = 0,
                                              std::optional<int64_t> m = std::nullopt) {
  return detail::triangle_indices(n, k, m, true, "tril_indices");
}

/// The row and column positions (i64, row-major) of the elements of an [n, m] matrix on or above
/// diagonal k (numpy.triu_indices). Throws ValueError for a negative size. Example:
/// `auto [rows, cols] = st::triu_indices(4, 1);` for the strict upper triangle.
inline std::pair<Tensor, Tensor> triu_indices(int64_t n, int64_t k = 0,
                                              std::optional<int64_t> m = std::nullopt) {
  return detail::triangle_indices(n, k, m, false, "triu_indices");
}

/// The elements on or below diagonal k of the matrices of x ([..., n, m]) as a packed vector
/// [..., count], row-major (numpy's x[..., *np.tril_indices(n, k, m)]). Differentiable. Throws
/// ShapeError for rank < 2. Example: `st::tril_pack(L)`; the inverse is st::tril_unpack.
template <Diffable T>
T tril_pack(const T& x, int64_t k = 0) {
  return detail::pack(x, k, true, "tril_pack");
}

/// The elements on or above diagonal k of the matrices of x ([..., n, m]) as a packed vector
/// [..., count], row-major. Differentiable. Throws ShapeError for rank < 2. Example:
/// `st::triu_pack(a, 1)`; the inverse is st::triu_unpack.
template <Diffable T>
T triu_pack(const T& v, int64_t k = 0) {
  return detail::pack(v, k, false, "triu_pack");
}

/// [..., n, m] matrices (m defaults to n) of zeros whose elements on or below diagonal k are the
/// packed vectors v [..., count], row-major: NumPy's `M = zeros((n, m)); M[tril_indices(n, k, m)]
/// = v`, TFP's fill_triangular in row-major order. Differentiable. Throws ShapeError when v's last
/// axis is not the triangle's element count. Example: a Cholesky factor from its n (n + 1) / 2
/// parameters, `st::tril_unpack(theta, n)`.
template <Diffable T>
T tril_unpack(const T& v, int64_t n, int64_t k = 0, std::optional<int64_t> m = std::nullopt) {
  return detail::unpack(v, n, k, m, true, "tril_unpack");
}

/// [..., n, m] matrices of zeros whose elements on or above diagonal k are the packed vectors v
/// [..., count], row-major (NumPy's `M[triu_indices(n, k, m)] = v`). Differentiable. Throws
/// ShapeError when v's last axis is not the triangle's element count. Example: a strictly lower
/// triangle packed column by column is `st::transpose(st::triu_unpack(l, n, 1), -2, -1)`.
template <Diffable T>
T triu_unpack(const T& v, int64_t n, int64_t k = 0, std::optional<int64_t> m = std::nullopt) {
  return detail::unpack(v, n, k, m, false, "triu_unpack");
}

}  // namespace strata
