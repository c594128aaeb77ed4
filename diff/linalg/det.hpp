// SPDX-License-Identifier: MIT
#pragma once
/// st::linalg's determinants (slogdet, det, logdet) and matrix norms, through the LU
/// factorisation and the SVD.
#include "diff/linalg/factor.hpp"

namespace strata::detail {

/// linalg::slogdet(a), its errors naming op (slogdet, det, logdet).
template <Diffable T>
std::pair<T, T> slogdet_as(std::string_view op, const T& a) {
  require_square(op, a);
  auto [f, pivots, perm] = lu_for(op, detach(a));
  const T d = diagonal(f, 0, -2, -1);
  const T logabsdet = Prims<T>::logabsdet(a, f, perm);
  // The sign: (-1)^(row swaps + negative pivots), 0 with a zero pivot; integers throughout.
  const int64_t n = a.shape()[a.shape().ndim() - 1];
  const T swaps = sum(pivots != arange(0, double(n), 1, i64, a.device()), {-1});
  const T flips = swaps + sum(d < 0, {-1});
  const auto [count, two] = operands(flips, int64_t{2}, op);
  const T odd = flips - Prims<T>::binary(BinaryOp::div, count, two) * int64_t{2};  // truncating
  const T sign = where(sum(d == 0, {-1}) > 0, 0, cast(1 - odd * 2, a.dtype()));
  return {sign, logabsdet};
}

}  // namespace strata::detail

namespace strata::linalg {

/// The sign and the natural log of the absolute value of the determinant of square matrices
/// [..., n, n] (numpy.linalg.slogdet): {sign [...], logabsdet [...]}, through the LU
/// factorisation: logabsdet = sum(log|U_ii|), its gradient a^-T made from the same factors
/// (the factorisation is never differentiated). A singular matrix gives sign 0 and logabsdet
/// -inf (no error, as NumPy); its gradient there is a LinAlgError, as is a NaN or an infinity
/// in a (NumPy would return NaN). The sign is a constant (no derivative). Example: `auto [sign,
/// logabsdet] = st::linalg::slogdet(a);`.
template <Diffable T>
std::pair<T, T> slogdet(const T& a) {
  return detail::slogdet_as("slogdet", a);
}

/// The determinant of square matrices [..., n, n] (numpy.linalg.det): sign * exp(logabsdet)
/// of slogdet; its gradient det(a) a^-T. At a singular matrix the value is 0 and a derivative
/// is a LinAlgError (a^-T does not exist there; the adjugate it stands for is not computed).
/// Example: `st::linalg::det(a)`.
template <Diffable T>
T det(const T& a) {
  auto [sign, logabsdet] = detail::slogdet_as("det", a);
  return sign * exp(logabsdet);
}

/// The natural log of the determinant (torch.logdet): logabsdet where the determinant is
/// positive, NaN where it is negative, -inf where it is 0. For symmetric positive-definite
/// matrices 2 sum(log(diag(cholesky(a)))) is the same, in half the work.
/// Example: `st::linalg::logdet(K)`.
template <Diffable T>
T logdet(const T& a) {
  auto [sign, logabsdet] = detail::slogdet_as("logdet", a);
  return where(sign < 0, std::numeric_limits<double>::quiet_NaN(), logabsdet);
}

/// Which matrix norm matrix_norm computes.
enum class MatrixNorm {
  frobenius,  ///< sqrt of the sum of squares ("fro")
  nuclear,    ///< the sum of the singular values ("nuc")
  spectral,   ///< the largest singular value (ord 2)
};

/// A norm of each matrix [..., m, n] over the last two axes (numpy.linalg.norm with ord "fro",
/// "nuc" or 2): [...]. The Frobenius norm is NaN-safe at 0 (its gradient there is 0); the
/// nuclear and spectral norms go through the SVD (LinAlgError for a NaN or an infinity; the
/// spectral norm of an empty matrix is a ShapeError, as in torch). Example:
/// `st::linalg::matrix_norm(a, st::linalg::MatrixNorm::nuclear)`.
template <Diffable T>
T matrix_norm(const T& a, MatrixNorm ord = MatrixNorm::frobenius) {
  detail::require_matrix("matrix_norm", a);
  switch (ord) {
    case MatrixNorm::frobenius:
      return norm(a, {-2, -1});
    case MatrixNorm::nuclear:
      return sum(std::get<1>(detail::svd_for("matrix_norm", a)), {-1});
    case MatrixNorm::spectral: {
      const Shape s = a.shape();
      if (s[s.ndim() - 1] == 0 || s[s.ndim() - 2] == 0) {
        detail::fail<ShapeError>("matrix_norm",
                                 "the spectral norm needs non-empty matrices, got "
                                 "shape ",
                                 s);
      }
      return max(std::get<1>(detail::svd_for("matrix_norm", a)), {-1});
    }
  }
  return norm(a, {-2, -1});  // unreachable: every norm has its case above
}

}  // namespace strata::linalg
