// SPDX-License-Identifier: MIT
#pragma once
/// The linear algebra rows of the random programs (tests/support/program_ops.hpp):
/// the matrix they factor, their planners and their gaps.
///
/// A node's operand a [..., m, k] (any matrix a program holds) becomes the square
///
///   M(a) = a a^T + D + (a W - (a W)^T),   D = diag(1, 2, ..., m),  W [k, m] constant,
///
/// whose symmetric part a a^T + D has eigenvalues >= 1, so x^T M x >= |x|^2: M is
/// invertible with every singular value >= 1 and a positive determinant, for every a,
/// and the factorisations are smooth in a (cholesky of the symmetric part, solve,
/// slogdet). M is not symmetric, so a rule that confuses a matrix with its transpose
/// (solve's a^-T, slogdet's a^-T) is caught, and cholesky and eigh, which symmetrise
/// their input, must give the skew part no derivative. D spreads the eigenvalues apart
/// (a a^T alone has m - k equal zeros when k < m), where eigh's and svd's derivatives
/// are defined; the gaps below measure how far apart they are.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <strata.hpp>

#include "support/program_draw.hpp"

namespace strata::testing::program {

/// D = diag(1, ..., m), f64.
inline Tensor spread_diagonal(int64_t m) {
  std::vector<double> v(std::size_t(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i) v[std::size_t(i * m + i)] = double(i + 1);
  return from_vector(v, {m, m});
}

/// W [k, m], f64: fixed values of either sign (any W keeps M invertible).
inline Tensor skew_mixer(int64_t k, int64_t m) {
  std::vector<double> v(std::size_t(k * m));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * std::sin(double(i) + 1.0);
  return from_vector(v, {k, m});
}

/// M(a) of the header comment, at any level; a has rank >= 2.
template <class T>
T well_posed(const T& a) {
  const Shape& s = a.shape();
  const int64_t m = s[std::size_t(s.ndim() - 2)], k = s[std::size_t(s.ndim() - 1)];
  const T p = matmul(a, skew_mixer(k, m));
  return matmul(a, transpose(a, -1, -2)) + spread_diagonal(m) + (p - transpose(p, -1, -2));
}

/// QR made unique: q and r with r's diagonal made positive (their columns and rows times
/// its signs, constants). LAPACK's r has a diagonal of either sign, which flips where a
/// Householder step's leading element crosses 0; the product with the signs does not.
template <class T>
T qr_positive(const T& a) {
  const auto [q, r] = linalg::qr(a);
  const T s = sign(diagonal(r, 0, -2, -1));
  return q * unsqueeze(s, -2) + r * unsqueeze(s, -1);
}

// --- planners -------------------------------------------------------------------------------

/// An operand of rank 2 to 4 (its last two axes the matrix a of M(a)).
inline bool matrix_source(Draw& d, ProgNode& n) {
  const int64_t r = d.shape(n.a).ndim();
  return r >= 2 && r <= 4;
}

/// A matrix source and a right-hand side for solve(M(a), b): b [..., m, j] (batch dims that
/// broadcast with a's) or a vector of m, a itself half the time when it fits.
inline bool linear_system(Draw& d, ProgNode& n) {
  if (!matrix_source(d, n)) return false;
  const Shape& sa = d.shape(n.a);
  const int64_t m = sa[std::size_t(sa.ndim() - 2)];
  n.b = d.operand(n.a, true, [&](const Shape& s) {
    if (s.ndim() == 1) return s[0] == m;
    return s.ndim() >= 2 && s[std::size_t(s.ndim() - 2)] == m;
  });
  return true;
}

// --- gaps -----------------------------------------------------------------------------------

/// The smallest distance between neighbours of v's last axis (sorted), over the batch.
inline double neighbour_gap(const Tensor& v) {
  const std::vector<double> e = v.to_vector<double>();
  const int64_t m = v.shape()[std::size_t(v.ndim() - 1)];
  double g = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i + 1 < e.size(); ++i) {
    if (int64_t(i + 1) % m != 0) g = std::min(g, std::abs(e[i + 1] - e[i]));
  }
  return g;
}
/// eigvalsh is not differentiable where two eigenvalues of M(a)'s symmetric part meet.
inline double gap_eigenvalues(const ProgNode&, const Tensor& a, const Tensor&) {
  return neighbour_gap(linalg::eigvalsh(well_posed(a)));
}
/// svdvals is not differentiable where two singular values of M(a) meet (none is near 0).
inline double gap_singular_values(const ProgNode&, const Tensor& a, const Tensor&) {
  return neighbour_gap(linalg::svdvals(well_posed(a)));
}

}  // namespace strata::testing::program
