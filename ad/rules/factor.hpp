// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the triangular solve and of the Cholesky and LU factorisations
/// (raw/linalg.hpp), written at the matrix level as JAX's lax.linalg and PyTorch's
/// derivatives.yaml do: the jvp of a factorisation is a few triangular solves and products,
/// and its pullback is the jvp's transpose. Every rule is written in Diffable ops, the
/// triangular solve among them, so it is differentiable again.
///
/// The factorisations read one triangle of their input (cholesky and eigh the lower one).
/// Their rules are exact for that reading: the tangent they see is the lower triangle
/// mirrored, lower_mirror(t), and their cotangent comes back through its transpose. The
/// public functions (st::linalg) symmetrise their input first, as JAX does, so that the
/// gradient with respect to a symmetric matrix is symmetric.
#include <algorithm>
#include <array>
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"
#include "diff/linalg/checks.hpp"

namespace strata::rules {

/// x with its last two axes swapped.
template <Diffable T>
T mT(const T& x) {
  return transpose(x, -1, -2);
}
/// The diagonal part of x (zeros elsewhere), over the last two axes.
template <Diffable T>
T diagonal_part(const T& x) {
  return triu(tril(x));
}
/// The tangent of a matrix of which only the lower triangle is read: tril(x) + tril(x, -1)^T.
template <Diffable T>
T lower_mirror(const T& x) {
  return tril(x) + mT(tril(x, -1));
}
/// lower_mirror's transpose (adjoint): tril(s) + tril(s^T, -1).
template <Diffable T>
T lower_mirror_transpose(const T& s) {
  return tril(s) + tril(mT(s), -1);
}
/// Φ(x): the lower triangle of x with its diagonal halved (self-adjoint: a mask).
template <Diffable T>
T lower_half_diagonal(const T& x) {
  return tril(x, -1) + diagonal_part(x) * 0.5;
}

/// The triangle of x that a triangular solve with `o` reads (the diagonal excluded when unit).
template <Diffable T>
T solve_triangle(const T& x, strata::TriangularSolve o) {
  return o.lower ? tril(x, o.unit_diagonal ? -1 : 0) : triu(x, o.unit_diagonal ? 1 : 0);
}
/// o with its transpose flag flipped (the adjoint solve).
inline strata::TriangularSolve transposed(strata::TriangularSolve o) {
  o.transpose = !o.transpose;
  return o;
}

/// The primitive `triangular_solve(a, b, opts)`: x = op(a)^-1 b (left) or b op(a)^-1 (right).
/// Linear in b; in a, d x = -op(a)^-1 op(d a) x (left) or -x op(d a) op(a)^-1 (right).
struct TriangularSolve {
  strata::TriangularSolve opts;          ///< side, triangle, transpose, unit diagonal
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// "triangular_solve", for errors.
  std::string_view name() const { return "triangular_solve"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& b) const {
    return Prims<T>::triangular_solve(a, b, opts);
  }
  /// The jvp's term for operand `which`: a solve with the same triangle.
  template <Diffable T>
  T jvp(int which, const T& a, const T&, const T& x, const T& t) const {
    if (which == 1) return Prims<T>::triangular_solve(a, t, opts);
    T da = solve_triangle(t, opts);
    if (opts.transpose) da = mT(da);
    const T rhs = opts.left ? matmul(da, x) : matmul(x, da);
    return -Prims<T>::triangular_solve(a, rhs, opts);
  }
  /// The vjp for operand `which`: b's is the adjoint solve; a's the outer product of that with
  /// x, on a's triangle. Keeps a (and x for a's).
  template <Diffable T>
  Pullback<T> pullback(int which, const T& a, const T& b, const T& x) const {
    if (which == 1) {
      return {[a, o = opts, shape = b.shape()](const T& ct) {
                return sum_to(Prims<T>::triangular_solve(a, ct, transposed(o)), shape);
              },
              {detail::stored(a)}};
    }
    return {[a, x, o = opts](const T& ct) {
              const T cb = Prims<T>::triangular_solve(a, ct, transposed(o));
              T g = o.left ? -matmul(cb, mT(x)) : -matmul(mT(x), cb);
              if (o.transpose) g = mT(g);
              return sum_to(solve_triangle(g, o), a.shape());
            },
            {detail::stored(a), detail::stored(x)}};
  }
  /// The batching rule: both operands with the batch axis first and their per-example batch
  /// dims aligned (an unbatched operand broadcasts).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a, const Batched<T>& b) const {
    if (!a.batched() && !b.batched()) {
      return Batched<T>(Prims<T>::triangular_solve(a.value(), b.value(), opts));
    }
    const int64_t rank = std::max(a.ndim(), b.ndim());
    const int64_t n = batching::batch_of<T>({&a, &b});
    return batching::batched(Prims<T>::triangular_solve(batching::aligned(a, n, rank),
                                                        batching::aligned(b, n, rank), opts));
  }
};

/// L^-1 t L^-T for a lower triangular L.
template <Diffable T>
T sandwich_inverse(const T& l, const T& t) {
  const T x = Prims<T>::triangular_solve(l, t, {.lower = true, .left = true});
  return Prims<T>::triangular_solve(l, x, {.lower = true, .left = false, .transpose = true});
}

/// The primitive `cholesky(a)`: l lower with l l^T = a, reading a's lower triangle. Its jvp
/// is l Φ(l^-1 da l^-T) (da the lower triangle mirrored); its vjp the transpose.
struct Cholesky {
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// "cholesky", for errors.
  std::string_view name() const { return "cholesky"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a) const {
    return Prims<T>::cholesky(a);
  }
  /// The jvp: l Φ(l^-1 da l^-T).
  template <Diffable T>
  T jvp(int, const T&, const T& l, const T& t) const {
    return matmul(l, lower_half_diagonal(sandwich_inverse(l, lower_mirror(t))));
  }
  /// The vjp: l^-T Φ(l^T ct) l^-1, read back through the lower triangle. Keeps l.
  template <Diffable T>
  Pullback<T> pullback(int, const T&, const T& l) const {
    return {[l](const T& ct) {
              const T z = lower_half_diagonal(matmul(mT(l), ct));
              const T w = Prims<T>::triangular_solve(l, z, {.lower = true, .transpose = true});
              const T s = Prims<T>::triangular_solve(l, w, {.lower = true, .left = false});
              return lower_mirror_transpose(s);
            },
            {detail::stored(l)}};
  }
  /// The batching rule: the batch axis is one more batch dim of the factorisation.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a) const {
    return Batched<T>(Prims<T>::cholesky(a.value()), a.batched());
  }
};

/// The primitive `lu(a)` of a square a: {lu, pivots, permutation} with a[permutation] = L U
/// (L unit lower and U upper, packed in lu). Only lu carries a derivative (pivots and the
/// permutation are integers): its jvp is JAX's, L (tril(M, -1)) + triu(M) U with
/// M = L^-1 da[permutation] U^-1, and its vjp that map's transpose.
struct Lu {
  static constexpr std::size_t outputs = 3;  ///< lu, pivots, permutation
  static constexpr bool linear = false;      ///< its jvp is jvp() below

  /// "lu", for errors.
  std::string_view name() const { return "lu"; }
  /// The primitive on T.
  template <Diffable T>
  std::array<T, 3> operator()(const T& a) const {
    return Prims<T>::lu(a);
  }
  /// The jvp of the packed factors (the integer outputs' entries are never read).
  template <Diffable T>
  std::array<T, 3> jvp(int, const T&, const std::array<T, 3>& ys, const T& t) const {
    const T l = unit_lower(ys[0]), u = triu(ys[0]);
    const T la = Prims<T>::triangular_solve(l, detail::permute_rows(t, ys[2]),
                                            {.lower = true, .unit_diagonal = true});
    const T m = Prims<T>::triangular_solve(u, la, {.lower = false, .left = false});
    return {matmul(l, tril(m, -1)) + matmul(triu(m), u), ys[1], ys[2]};
  }
  /// The vjp of the packed factors: with G_L, G_U the cotangent's strict lower and upper
  /// parts, M̄ = tril(L^T G_L, -1) + triu(G_U U^T) and da = (L^-T M̄ U^-T) unpermuted.
  /// Keeps the factors and the permutation.
  template <Diffable T>
  Pullback<T> pullback(int, int, const T&, const std::array<T, 3>& ys) const {
    return {[lu = ys[0], perm = ys[2]](const T& ct) {
              const T l = unit_lower(lu), u = triu(lu);
              const T mbar = tril(matmul(mT(l), tril(ct, -1)), -1) + triu(matmul(triu(ct), mT(u)));
              const T w = Prims<T>::triangular_solve(
                  l, mbar, {.lower = true, .transpose = true, .unit_diagonal = true});
              const T x = Prims<T>::triangular_solve(
                  u, w, {.lower = false, .left = false, .transpose = true});
              return detail::unpermute_rows(x, perm);
            },
            {detail::stored(ys[0]), detail::stored(ys[2])}};
  }
  /// The batching rule: the batch axis is one more batch dim of the factorisation.
  template <Diffable T>
  std::array<Batched<T>, 3> batch(const Batched<T>& a) const {
    const std::array<T, 3> ys = Prims<T>::lu(a.value());
    return {Batched<T>(ys[0], a.batched()), Batched<T>(ys[1], a.batched()),
            Batched<T>(ys[2], a.batched())};
  }

 private:
  /// L of the packed factors: the strict lower triangle plus the identity.
  template <Diffable T>
  static T unit_lower(const T& lu) {
    const int64_t n = lu.shape()[lu.shape().ndim() - 1];
    return tril(lu, -1) + eye(n, lu.dtype(), lu.device());
  }
};

/// A factor operand's zero cotangent: lu_inverse and logabsdet read a's factors for their
/// value only, and all of their derivative flows through a.
template <Diffable T>
Pullback<T> no_cotangent(const T& operand) {
  return {[shape = operand.shape(), dtype = operand.dtype(), device = operand.device()](const T&) {
            return detail::filled<T>(0.0, shape, dtype, device);
          },
          {}};
}

/// The batching rule of lu_inverse and logabsdet (`rule`): one call of the primitive on T with
/// a and lu as [n, ..., rows, cols] and perm as [n, ..., rows], their per-example batch dims
/// lined up (the batch axis is one more batch dim of the factors).
template <Diffable T, class Rule>
Batched<T> batch_on_factors(const Rule& rule, const Batched<T>& a, const Batched<T>& lu,
                            const Batched<T>& perm) {
  if (!a.batched() && !lu.batched() && !perm.batched()) {
    return Batched<T>(rule(a.value(), lu.value(), perm.value()));
  }
  const int64_t rank = std::max({a.ndim(), lu.ndim(), perm.ndim() + 1});
  const int64_t n = batching::batch_of<T>({&a, &lu, &perm});
  return batching::batched(rule(batching::aligned(a, n, rank), batching::aligned(lu, n, rank),
                                batching::aligned(perm, n, rank - 1)));
}

/// The primitive `lu_inverse(a, lu, perm)`: a^-1 from a's own LU factors (lu and perm from
/// lu(a), passed without derivatives), as JAX's custom_linear_solve: the value comes from the
/// factors, the derivative through a alone, d(a^-1) = -a^-1 da a^-1, exact at every order
/// without differentiating the factorisation.
struct LuInverse {
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// "lu_inverse", for errors.
  std::string_view name() const { return "lu_inverse"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& lu, const T& perm) const {
    return Prims<T>::lu_inverse(a, lu, perm);
  }
  /// The jvp's term for a: -x t x (none for the factors).
  template <Diffable T>
  T jvp(int which, const T&, const T&, const T&, const T& x, const T& t) const {
    if (which != 0) return zeros_like(x);
    return -matmul(matmul(x, t), x);
  }
  /// The vjp for a: -x^T ct x^T. Keeps x.
  template <Diffable T>
  Pullback<T> pullback(int which, const T& a, const T& lu, const T& perm, const T& x) const {
    if (which != 0) return no_cotangent(which == 1 ? lu : perm);
    return {[x, shape = a.shape()](const T& ct) {
              const T xt = mT(x);
              return sum_to(-matmul(matmul(xt, ct), xt), shape);
            },
            {detail::stored(x)}};
  }
  /// The batching rule (batch_on_factors).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a, const Batched<T>& lu, const Batched<T>& perm) const {
    return batch_on_factors(*this, a, lu, perm);
  }
};

/// The primitive `logabsdet(a, lu, perm)`: log|det a| = sum(log|U_ii|) from a's own LU
/// factors (passed without derivatives, as for LuInverse). Its derivative through a is
/// a^-T: the jvp trace(a^-1 t) and the pullback ct a^-T, with a^-1 = lu_inverse(a, lu, perm)
/// made from the same factors (4/3 n^3 on top of the factorisation's 2/3 n^3) and
/// differentiable in turn.
struct Logabsdet {
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// "logabsdet", for errors.
  std::string_view name() const { return "logabsdet"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& lu, const T& perm) const {
    return Prims<T>::logabsdet(a, lu, perm);
  }
  /// The jvp's term for a: sum(a^-T * t) over each matrix (none for the factors).
  template <Diffable T>
  T jvp(int which, const T& a, const T& lu, const T& perm, const T& y, const T& t) const {
    if (which != 0) return zeros_like(y);
    return sum(mT(inverse(a, lu, perm)) * t, {-2, -1});
  }
  /// The vjp for a: ct a^-T, a^-1 made when the backward pass runs. Keeps a and its factors.
  template <Diffable T>
  Pullback<T> pullback(int which, const T& a, const T& lu, const T& perm, const T&) const {
    if (which != 0) return no_cotangent(which == 1 ? lu : perm);
    return {[a, lu, perm](const T& ct) {
              const T g = unsqueeze(unsqueeze(ct, -1), -1);
              return sum_to(g * mT(inverse(a, lu, perm)), a.shape());
            },
            {detail::stored(a), detail::stored(lu), detail::stored(perm)}};
  }
  /// The batching rule (batch_on_factors).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a, const Batched<T>& lu, const Batched<T>& perm) const {
    return batch_on_factors(*this, a, lu, perm);
  }

 private:
  /// a^-1 for the derivative: at a singular matrix it does not exist, and the error names
  /// the functions whose derivative the user asked for rather than lu_inverse.
  template <Diffable T>
  static T inverse(const T& a, const T& lu, const T& perm) {
    return detail::errors_named("the derivative of det, slogdet or logdet", "lu_inverse",
                                " (it needs a^-1, which a singular matrix does not have)",
                                [&] { return Prims<T>::lu_inverse(a, lu, perm); });
  }
};

}  // namespace strata::rules
