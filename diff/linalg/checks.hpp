// SPDX-License-Identifier: MIT
#pragma once
/// The shared pieces of st::linalg: shape checks, the symmetrisation of symmetric-input
/// factorisations, the singularity check of the solves, and the row permutations of LU.
#include <string_view>
#include <utility>

#include "diff/activations.hpp"
#include "diff/matrix.hpp"
#include "diff/reductions.hpp"
#include "diff/statistics.hpp"

namespace strata::detail {

/// Throws ShapeError unless x has rank >= 2.
void require_matrix_shape(std::string_view op, const Shape& s);
/// Throws ShapeError unless x has rank >= 2 and square trailing dims.
void require_square_shape(std::string_view op, const Shape& s);
/// Throws LinAlgError when the plain values d [..., n] (the diagonal of U, or of a triangular
/// matrix) hold an exact zero, naming the batch element and the position.
void require_nonzero_diagonal(std::string_view op, const Tensor& d);
/// [rows * n] i64: for permutations p [..., n] (rows matrices), p with each matrix's row offset
/// added, as positions into the matrices' rows stacked ([rows * n, k]).
Tensor flat_row_positions(const Tensor& p, int64_t n);
/// Throws ShapeError unless b [..., r, k] fits a [..., n, n] on the given side (r == n when
/// left, k == n when right), naming both shapes.
void require_rhs_fits(std::string_view op, const Shape& a, const Shape& b, bool left);
/// Whether b is one vector per matrix of a (torch.linalg.solve's rule): b has rank 1, or b's
/// shape is a's without its last dim.
bool is_rhs_vector(const Shape& a, const Shape& b);
/// rcond, or max(m, n) times the epsilon of dtype when rcond < 0 (numpy.linalg.lstsq's default).
double default_rcond(const Shape& a, DType dtype, double rcond);
/// Throws DTypeError unless t is f32 or f64 (an integer matrix is not converted: say which
/// dtype to use).
void require_float_matrix(std::string_view op, DType t);

/// f(), with a LinAlgError raised by the primitive `inner` (its message "inner: what") named
/// op instead, as "op: what" and `found_by` (" (found by its LU factorisation)"): an error
/// names the function the user called, not the primitive it is made of.
template <class F>
auto errors_named(std::string_view op, std::string_view inner, std::string_view found_by, F&& f)
    -> decltype(f()) {
  try {
    return f();
  } catch (const LinAlgError& e) {
    std::string_view what = e.what();
    if (!what.starts_with(inner) || !what.substr(inner.size()).starts_with(": ")) throw;
    what.remove_prefix(inner.size() + 2);
    fail<LinAlgError>(op, what, found_by);
  }
}

/// Throws ShapeError unless a has rank >= 2, DTypeError unless it is f32 or f64.
template <Diffable T>
void require_matrix(std::string_view op, const T& a) {
  require_matrix_shape(op, a.shape());
  require_float_matrix(op, a.dtype());
}
/// Throws ShapeError unless a is a batch of square matrices, DTypeError unless f32 or f64.
template <Diffable T>
void require_square(std::string_view op, const T& a) {
  require_square_shape(op, a.shape());
  require_float_matrix(op, a.dtype());
}

/// a [..., n, n] and b [..., n, k] (or [..., k, n]) of one float dtype (promoted as for
/// arithmetic, as NumPy does: an f32 a with an f64 or integer b solves in f64; torch asks for
/// equal dtypes), with their batch dims broadcast to one shape.
template <Diffable T>
std::pair<T, T> linalg_operands(T a, T b, std::string_view op) {
  const DType t = promote_types(a.dtype(), b.dtype());
  require_float_matrix(op, t);
  a = as_dtype(std::move(a), t);
  b = as_dtype(std::move(b), t);
  const Shape sa = a.shape(), sb = b.shape();
  require_matrix_shape(op, sb);
  const Shape batch =
      broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2), op);
  auto to_batch = [&](T x, const Shape& s) {
    Shape full = batch;
    full.push_back(s[s.ndim() - 2]);
    full.push_back(s[s.ndim() - 1]);
    return broadcast_to(std::move(x), full);
  };
  return {to_batch(std::move(a), sa), to_batch(std::move(b), sb)};
}

/// (a + a^T) / 2 over the last two axes: what the symmetric factorisations read (JAX's
/// symmetrize_input), so that their gradients are symmetric.
template <Diffable T>
T symmetrized(const T& a) {
  return (a + transpose(a, -1, -2)) * 0.5;
}

/// The permutation matrices of perm [..., n] (an i64 constant of level T) as a float constant
/// [..., n, n] of dtype: p[i][j] = 1 where perm[i] == j.
template <Diffable T>
T permutation_matrices(const T& perm, DType dtype) {
  const int64_t n = perm.shape()[perm.shape().ndim() - 1];
  return cast(unsqueeze(perm, -1) == arange(0, double(n), 1, i64, perm.device()), dtype);
}

/// x [..., n, k] with its rows in the order perm [..., n] (one permutation per matrix, an i64
/// constant of x's level): row i of the result is row perm[i] of x. A gather where the
/// permutations have a plain value; under st::vmap, where they differ per example, a product
/// with the permutation matrices.
template <Diffable T>
T permute_rows(const T& x, const T& perm) {
  if (x.numel() == 0) return x;  // no rows, or rows of nothing: nothing moves
  const Shape s = x.shape();
  const int64_t n = s[s.ndim() - 2], k = s[s.ndim() - 1];
  if (mapped(perm)) return matmul(permutation_matrices(perm, x.dtype()), x);
  const Tensor rows = flat_row_positions(plain(perm), n);
  return reshape(Prims<T>::index_select(reshape(x, {-1, k}), 0, rows), s);
}
/// permute_rows' transpose: row perm[i] of the result is row i of x.
template <Diffable T>
T unpermute_rows(const T& x, const T& perm) {
  if (x.numel() == 0) return x;
  const Shape s = x.shape();
  const int64_t n = s[s.ndim() - 2], k = s[s.ndim() - 1];
  if (mapped(perm)) return matmul(transpose(permutation_matrices(perm, x.dtype()), -1, -2), x);
  const Tensor rows = flat_row_positions(plain(perm), n);
  const T flat = reshape(x, {-1, k});
  return reshape(Prims<T>::index_add(zeros_like(flat), 0, rows, flat), s);
}

}  // namespace strata::detail
