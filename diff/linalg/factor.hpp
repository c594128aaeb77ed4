// SPDX-License-Identifier: MIT
#pragma once
/// st::linalg's factorisations: cholesky, lu, eigh (and eigvalsh), svd (and svdvals), qr.
/// Each is a primitive of every level (raw/linalg.hpp kernels, ad/rules/factor.hpp and
/// ad/rules/spectral.hpp rules), differentiable to any order, batched over leading dims.
#include <tuple>

#include "diff/linalg/checks.hpp"

namespace strata::linalg {

/// The lower Cholesky factor L of symmetric positive-definite matrices a [..., n, n], f32 or
/// f64: a = L L^T (numpy.linalg.cholesky). The input is symmetrised first, (a + a^T) / 2, as
/// JAX does, so the gradient with respect to a symmetric matrix is symmetric. Throws
/// LinAlgError naming the batch element and the failing minor when a matrix is not
/// positive-definite, or holds a NaN or an infinity; ShapeError for a non-square input.
/// Example: `st::Tensor L = st::linalg::cholesky(K);`.
template <Diffable T>
T cholesky(const T& a) {
  detail::require_square("cholesky", a);
  return Prims<T>::cholesky(detail::symmetrized(a));
}

/// The LU factorisation with partial pivoting of square matrices [..., n, n], as
/// jax.lax.linalg.lu: {lu, pivots, permutation}, lu packing L (unit diagonal, below) and U (on
/// and above), pivots [..., n] i64 the 0-based row swaps of LAPACK's getrf, permutation [..., n]
/// i64 with a[permutation] = L U. A singular matrix is no error here (U has a zero on its
/// diagonal). Only lu carries a derivative. Example: `auto [lu, piv, perm] = st::linalg::lu(a);`.
template <Diffable T>
std::tuple<T, T, T> lu(const T& a) {
  detail::require_square("lu", a);
  auto [f, pivots, perm] = Prims<T>::lu(a);
  return {std::move(f), std::move(pivots), std::move(perm)};
}

}  // namespace strata::linalg

namespace strata::detail {
/// linalg::lu(a) inside `op` (det, solve, inv, ...): a LinAlgError of the factorisation (a
/// NaN or an infinity in a) names op rather than lu.
template <Diffable T>
std::tuple<T, T, T> lu_for(std::string_view op, const T& a) {
  return errors_named(op, "lu", " (found by its LU factorisation)", [&] { return linalg::lu(a); });
}
/// The triangular solve of op (solve, cho_solve, solve_triangular): its LinAlgError (a zero on
/// the diagonal, a NaN or an infinity in a or b) names op.
template <Diffable T>
T triangular_solve_for(std::string_view op, const T& a, const T& b, TriangularSolve opts) {
  return errors_named(op, "triangular_solve", "",
                      [&] { return Prims<T>::triangular_solve(a, b, opts); });
}
}  // namespace strata::detail

namespace strata::linalg {

/// The eigenvalues, ascending, and orthonormal eigenvectors (as columns) of symmetric matrices
/// [..., n, n]: {w [..., n], v [..., n, n]} with a v = v diag(w) (numpy.linalg.eigh). The input
/// is symmetrised first, as JAX does. Derivatives: the eigenvalues' are defined everywhere
/// (the gradient of a function of the eigenvalues alone is finite at repeated eigenvalues);
/// the eigenvectors' are undefined where eigenvalues repeat (any rotation within the
/// eigenspace is as good): NaN where a derivative needs them (the Hessian of a function of
/// the eigenvalues there too, as in JAX and PyTorch), 0 where its component between the
/// tied eigenvectors is exactly 0.
/// Throws LinAlgError for NaN or inf input or a failed convergence.
/// Example: `auto [w, v] = st::linalg::eigh(a);`.
template <Diffable T>
std::pair<T, T> eigh(const T& a) {
  detail::require_square("eigh", a);
  auto [w, v] = Prims<T>::eigh(detail::symmetrized(a));
  return {std::move(w), std::move(v)};
}
/// The eigenvalues of symmetric matrices, ascending (numpy.linalg.eigvalsh): eigh's first.
/// Example: `st::linalg::eigvalsh(a)`.
template <Diffable T>
T eigvalsh(const T& a) {
  return eigh(a).first;
}

/// The thin singular value decomposition of [..., m, n]: {u [..., m, k], s [..., k] descending,
/// vh [..., k, n]} with a = u diag(s) vh, k = min(m, n) (numpy.linalg.svd with
/// full_matrices=False). Derivatives: the singular values' are defined where they are
/// distinct from 0; u's and vh's are undefined where singular values repeat: NaN where a
/// derivative needs them, as for eigh's eigenvectors. Example:
/// `auto [u, s, vh] = st::linalg::svd(a);`.
template <Diffable T>
std::tuple<T, T, T> svd(const T& a) {
  detail::require_matrix("svd", a);
  auto [u, s, vh] = Prims<T>::svd(a);
  return {std::move(u), std::move(s), std::move(vh)};
}
/// The singular values, descending (torch.linalg.svdvals): svd's second.
template <Diffable T>
T svdvals(const T& a) {
  return std::get<1>(svd(a));
}

/// The reduced QR factorisation of [..., m, n]: {q [..., m, k], r [..., k, n]}, a = q r, q with
/// orthonormal columns, r upper triangular, k = min(m, n) (numpy.linalg.qr, mode "reduced").
/// Differentiable for every m and n where r's leading k x k block is invertible.
/// Example: `auto [q, r] = st::linalg::qr(a);`.
template <Diffable T>
std::pair<T, T> qr(const T& a) {
  detail::require_matrix("qr", a);
  auto [q, r] = Prims<T>::qr(a);
  return {std::move(q), std::move(r)};
}

}  // namespace strata::linalg

namespace strata::detail {
/// linalg::svd(a) inside `op` (pinv, lstsq, matrix_norm): its LinAlgError names op.
template <Diffable T>
std::tuple<T, T, T> svd_for(std::string_view op, const T& a) {
  return errors_named(op, "svd", " (found by its SVD)", [&] { return linalg::svd(a); });
}
}  // namespace strata::detail
