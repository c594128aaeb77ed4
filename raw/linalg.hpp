// SPDX-License-Identifier: MIT
#pragma once
/// The factorisations of dense linear algebra on RawTensor: the primitives the
/// differentiable st::linalg functions are built on (raw/primitives.hpp lists
/// them with the rest). Each takes f32 or f64 matrices [..., m, n] with any
/// number of leading batch dims (a batch of none gives empty results) and any
/// strides, on the CPU (OpenBLAS's LAPACK) or a CUDA device (cuSOLVER).
///
/// Errors, like the rest of raw/: DTypeError for another dtype, ShapeError for
/// a rank below 2, a non-square matrix where a square one is needed, or a
/// right-hand side that does not fit; DeviceError for operands on two devices.
/// LinAlgError (core/error.hpp) when a matrix the op reads holds a NaN or an
/// infinity, or the factorisation fails: it names the op, the batch element
/// ("input[1, 0]", or "input" unbatched) and what failed, e.g.
///   cholesky: input[3] is not positive-definite: the leading minor of order 2 is not positive
#include <array>

#include "raw/primitives.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::raw {

/// Options of triangular_solve (scipy.linalg.solve_triangular's lower / trans /
/// unit_diagonal, plus the side).
using TriangularSolve = strata::TriangularSolve;

/// The lower Cholesky factor L, A = L L^T, of symmetric positive-definite matrices [..., n, n],
/// reading only the lower triangle; L's upper triangle is zero (numpy.linalg.cholesky). f32, f64.
/// LinAlgError when a leading minor is not positive ("the leading minor of order k").
RawTensor cholesky(const RawTensor& a);

/// X with op(A) X = B (left) or X op(A) = B (right), A [..., n, n] triangular, B [..., n, k]
/// (left) or [..., k, n] (right); batch dims of A and B broadcast
/// (scipy.linalg.solve_triangular). f32, f64, one dtype for both. Only A's triangle (and its
/// diagonal unless unit_diagonal) is read; an exact zero on that diagonal is a LinAlgError
/// ("its diagonal element i is zero", i 0-based).
RawTensor triangular_solve(const RawTensor& a, const RawTensor& b, TriangularSolve opts);

/// LU factorisation with partial pivoting of square matrices [..., n, n] (scipy.linalg.lu_factor,
/// jax.lax.linalg.lu): {lu, pivots, permutation}: lu packs L (unit diagonal, below) and U (on and
/// above); pivots [..., n] i64 are LAPACK getrf's row swaps, 0-based (row i was swapped with
/// pivots[i], for i = 0, 1, ... in turn); permutation [..., n] i64 is the resulting row order,
/// A[permutation] = L U. A singular matrix is not an error here (U has a zero on its diagonal).
/// f32, f64.
std::array<RawTensor, 3> lu(const RawTensor& a);

/// A^-1 for square matrices A [..., n, n] given their LU factorisation: lu and perm as raw::lu
/// returns them (A[perm] = L U), batch dims broadcasting; A itself is not read. Costs the
/// 4/3 n^3 of LAPACK's getri, against 2 n^3 for solving A X = I with the factors. f32, f64.
/// LinAlgError when U's diagonal holds a zero (A is singular), lu a NaN or an infinity, or perm
/// is not a permutation of 0..n-1.
RawTensor lu_inverse(const RawTensor& lu, const RawTensor& perm);

/// Eigenvalues in ascending order [..., n] and orthonormal eigenvectors as columns [..., n, n]
/// of symmetric matrices [..., n, n], reading only the lower triangle (numpy.linalg.eigh).
/// f32, f64. LinAlgError when the algorithm does not converge.
std::array<RawTensor, 2> eigh(const RawTensor& a);

/// The thin SVD of [..., m, n]: {U [..., m, k], S [..., k] descending, Vh [..., k, n]},
/// k = min(m, n), A = U diag(S) Vh (numpy.linalg.svd(full_matrices=False)). f32, f64.
/// LinAlgError when the algorithm does not converge.
std::array<RawTensor, 3> svd(const RawTensor& a);

/// The reduced QR of [..., m, n]: {Q [..., m, k], R [..., k, n]}, k = min(m, n), Q with
/// orthonormal columns and R upper triangular (numpy.linalg.qr(mode="reduced")); R's diagonal
/// may be negative, as LAPACK's geqrf leaves it. f32, f64.
std::array<RawTensor, 2> qr(const RawTensor& a);

}  // namespace strata::raw
