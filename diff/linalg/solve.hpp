// SPDX-License-Identifier: MIT
#pragma once
/// st::linalg's solvers: solve_triangular, solve, cho_solve, inv, lstsq and pinv, composites of
/// the triangular solve and the factorisations, so their derivatives reuse the factorisation
/// (the pivoting loop itself is never differentiated).
#include "diff/linalg/factor.hpp"

namespace strata::linalg {

/// Which triangle, side and transpose solve_triangular uses (scipy.linalg.solve_triangular's
/// lower / trans / unit_diagonal, and jax's left_side): `{.lower = false, .transpose = true}`.
using Triangular = strata::TriangularSolve;

/// x with op(a) x = b (left) or x op(a) = b (right), a [..., n, n] triangular (only the triangle
/// `opts` names is read), b [..., n, k] (left) or [..., k, n] (right); batch dims broadcast.
/// Throws LinAlgError when a's diagonal holds a zero (unless unit_diagonal) or a or b holds a
/// NaN or an infinity, ShapeError for shapes that do not fit. Example:
/// `st::linalg::solve_triangular(L, b, {.lower = true})`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> solve_triangular(const A& a, const B& b,
                                                                      Triangular opts = {}) {
  using R = common_level_t<A, B>;
  R x = lift<R>(a), y = lift<R>(b);
  detail::require_square("solve_triangular", x);
  detail::require_rhs_fits("solve_triangular", x.shape(), y.shape(), opts.left);
  auto [sa, sb] = detail::linalg_operands(std::move(x), std::move(y), "solve_triangular");
  return detail::triangular_solve_for("solve_triangular", sa, sb, opts);
}

/// x with a x = b for square a [..., n, n] and b [..., n, k], or b [..., n] (one vector per
/// matrix, as torch.linalg.solve reads it: b.ndim == 1 or b's shape is a's without the last
/// dim); batch dims broadcast (numpy.linalg.solve). Through the LU factorisation: its
/// derivative is more solves with the same factors. Throws LinAlgError naming the batch
/// element when a matrix is singular (a zero pivot) or a or b holds a NaN or an infinity (NumPy
/// would return NaN), ShapeError for shapes that do not fit.
/// Example: `st::Tensor step = st::linalg::solve(H, g);`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> solve(const A& a, const B& b) {
  using R = common_level_t<A, B>;
  R x = lift<R>(a), y = lift<R>(b);
  detail::require_square("solve", x);
  const bool vector = detail::is_rhs_vector(x.shape(), y.shape());
  if (vector) y = unsqueeze(y, -1);
  detail::require_rhs_fits("solve", x.shape(), y.shape(), true);
  std::tie(x, y) = detail::linalg_operands(x, y, "solve");
  auto [f, pivots, perm] = detail::lu_for("solve", x);
  if constexpr (detail::holds_values<R>) {
    detail::require_nonzero_diagonal("solve", detail::stored(diagonal(f, 0, -2, -1)));
  }
  const R z = detail::triangular_solve_for("solve", f, detail::permute_rows(y, perm),
                                           {.lower = true, .unit_diagonal = true});
  R out = detail::triangular_solve_for("solve", f, z, {.lower = false});
  return vector ? squeeze(out, -1) : out;
}

/// x with a x = b given a's lower Cholesky factor l (scipy.linalg.cho_solve): two triangular
/// solves. b [..., n, k] or a vector per matrix, as solve. Throws LinAlgError when l's diagonal
/// holds a zero or l or b a NaN or an infinity. Example: `st::linalg::cho_solve(L, y)`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> cho_solve(const A& l, const B& b) {
  using R = common_level_t<A, B>;
  R x = lift<R>(l), y = lift<R>(b);
  detail::require_square("cho_solve", x);
  const bool vector = detail::is_rhs_vector(x.shape(), y.shape());
  if (vector) y = unsqueeze(y, -1);
  detail::require_rhs_fits("cho_solve", x.shape(), y.shape(), true);
  std::tie(x, y) = detail::linalg_operands(x, y, "cho_solve");
  const R z = detail::triangular_solve_for("cho_solve", x, y, {.lower = true});
  R out = detail::triangular_solve_for("cho_solve", x, z, {.lower = true, .transpose = true});
  return vector ? squeeze(out, -1) : out;
}

/// The inverse of square matrices [..., n, n] (numpy.linalg.inv), from the LU factors as
/// LAPACK's getri (2 n^3 in all); its derivative -a^-1 da a^-1 reuses the inverse. Throws
/// LinAlgError for a singular matrix or one holding a NaN or an infinity. Prefer solve to
/// multiplying by inv. Example: `st::linalg::inv(a)`.
template <Diffable T>
T inv(const T& a) {
  detail::require_square("inv", a);
  auto [f, pivots, perm] = detail::lu_for("inv", detail::detach(a));
  if constexpr (detail::holds_values<T>) {
    detail::require_nonzero_diagonal("inv", detail::stored(diagonal(f, 0, -2, -1)));
  }
  return Prims<T>::lu_inverse(a, f, perm);
}

/// The Moore-Penrose pseudo-inverse of [..., m, n] (numpy.linalg.pinv) through the SVD:
/// v diag(1 / s) u^T over the singular values above rcond times the largest (the default
/// rcond: max(m, n) times the dtype's epsilon, as NumPy's lstsq); an empty matrix gives the
/// empty [..., n, m]. Throws LinAlgError for a NaN or an infinity. Example:
/// `st::linalg::pinv(a)`.
template <Diffable T>
T pinv(const T& a, double rcond = -1) {
  detail::require_matrix("pinv", a);
  const Shape sh = a.shape();
  if (sh[sh.ndim() - 1] == 0 || sh[sh.ndim() - 2] == 0) return transpose(a, -1, -2) * 0.0;
  const double cutoff = detail::default_rcond(sh, a.dtype(), rcond);
  return detail::errors_named("pinv", "svd", " (found by its SVD)",
                              [&] { return Prims<T>::pinv(a, cutoff); });
}

/// The least-squares solution x minimising |a x - b| for a [..., m, n] and b [..., m, k] or a
/// vector per matrix, of minimum norm where a is rank-deficient (numpy.linalg.lstsq's
/// solution, through the SVD with rcond as pinv). Example: `st::linalg::lstsq(X, y)`.
template <class A, class B>
requires detail::Operands<A, B> common_level_t<A, B> lstsq(const A& a, const B& b,
                                                           double rcond = -1) {
  using R = common_level_t<A, B>;
  R x = lift<R>(a), y = lift<R>(b);
  detail::require_matrix("lstsq", x);
  const bool vector = detail::is_rhs_vector(x.shape(), y.shape());
  if (vector) y = unsqueeze(y, -1);
  const Shape sa = x.shape(), sb = y.shape();
  if (sb.ndim() < 2 || sb[sb.ndim() - 2] != sa[sa.ndim() - 2]) {
    detail::fail<ShapeError>("lstsq", "a of shape ", sa, " needs b with ", sa[sa.ndim() - 2],
                             " rows, got shape ", sb);
  }
  (void)broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2), "lstsq");
  R out = matmul(detail::errors_named("lstsq", "pinv", "", [&] { return pinv(x, rcond); }), y);
  return vector ? squeeze(out, -1) : out;
}

}  // namespace strata::linalg
