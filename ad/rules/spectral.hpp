// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the symmetric eigen-decomposition, the SVD and the QR factorisation
/// (raw/linalg.hpp), from JAX's eigh_jvp_rule, svd_jvp_rule and qr_jvp_rule; each pullback is
/// its jvp's transpose, one per output (a primitive with several outputs records one tape node
/// per output, so an unused output's pullback never runs).
///
/// Repeated eigenvalues (singular values): the eigenvectors are not differentiable there (any
/// rotation within the eigenspace is as good, and a perturbation picks one), so the chain rule
/// through them fails even for smooth functions of them (a matrix function v h(w) v^T, or the
/// second derivative of a function of the eigenvalues: it differentiates v diag(w̄) v^T). Where
/// a pair of exactly equal eigenvalues meets a nonzero component (of the tangent, or of the
/// cotangent) the rules give NaN, as JAX and PyTorch do; where the component is exactly zero,
/// 0 (the NaN-safe rule: nothing flows there). First derivatives of functions of the
/// eigenvalues alone never reach these terms, so they stay finite at repeated eigenvalues.
#include <algorithm>
#include <limits>
#include <string_view>
#include <utility>

#include "ad/rules/factor.hpp"

namespace strata::rules {

/// F ∘ x with F[i][j] = 1 / (d[j] - d[i]): the eigenvectors' derivative terms, for d [..., n]
/// (eigenvalues, or squared singular values) and x [..., n, n]. On the diagonal 0; off it, where
/// d[i] == d[j], NaN if x[i][j] is nonzero (no derivative: see the top of the file), else 0.
template <Diffable T>
T over_gaps(const T& d, const T& x) {
  const T gap = unsqueeze(d, -2) - unsqueeze(d, -1);  // gap[i][j] = d[j] - d[i]
  const T tie = gap == 0;
  const int64_t n = d.shape()[d.shape().ndim() - 1];
  const Tensor off_diagonal = eye(n, DType::f32, d.device()) == 0;
  const T undefined = logical_and(tie, logical_and(x != 0, off_diagonal));
  const T quotient = where(tie, 0, x / where(tie, 1, gap));
  return where(undefined, std::numeric_limits<double>::quiet_NaN(), quotient);
}
/// The diagonal of x [..., n, n] as [..., n].
template <Diffable T>
T diagonal_of(const T& x) {
  return diagonal(x, 0, -2, -1);
}

/// The primitive `eigh(a)`: {w ascending, v} with a v = v diag(w), reading a's lower triangle.
/// With da the lower triangle mirrored and X = v^T da v: dw = diag(X), dv = v (F ∘ X).
struct Eigh {
  static constexpr std::size_t outputs = 2;  ///< eigenvalues, eigenvectors
  static constexpr bool linear = false;      ///< its jvp is jvp() below

  /// "eigh", for errors.
  std::string_view name() const { return "eigh"; }
  /// The primitive on T.
  template <Diffable T>
  std::array<T, 2> operator()(const T& a) const {
    return Prims<T>::eigh(a);
  }
  /// The jvp of both outputs.
  template <Diffable T>
  std::array<T, 2> jvp(int, const T&, const std::array<T, 2>& ys, const T& t) const {
    const T& v = ys[1];
    const T x = matmul(matmul(mT(v), lower_mirror(t)), v);
    return {diagonal_of(x), matmul(v, over_gaps(ys[0], x))};
  }
  /// The vjp of output `output`: v diag(w̄) v^T for the eigenvalues, v (F ∘ v^T v̄) v^T for the
  /// eigenvectors, each read back through the lower triangle. Keeps w and v.
  template <Diffable T>
  Pullback<T> pullback(int, int output, const T&, const std::array<T, 2>& ys) const {
    if (output == 0) {
      return {[v = ys[1]](const T& ct) {
                return lower_mirror_transpose(matmul(v * unsqueeze(ct, -2), mT(v)));
              },
              {detail::stored(ys[1])}};
    }
    return {[w = ys[0], v = ys[1]](const T& ct) {
              const T inner = over_gaps(w, matmul(mT(v), ct));
              return lower_mirror_transpose(matmul(matmul(v, inner), mT(v)));
            },
            {detail::stored(ys[0]), detail::stored(ys[1])}};
  }
  /// The batching rule: the batch axis is one more batch dim of the decomposition.
  template <Diffable T>
  std::array<Batched<T>, 2> batch(const Batched<T>& a) const {
    const std::array<T, 2> ys = Prims<T>::eigh(a.value());
    return {Batched<T>(ys[0], a.batched()), Batched<T>(ys[1], a.batched())};
  }
};

/// 1 / s where s != 0, else 0 (the pseudo-inverse of the singular values).
template <Diffable T>
T safe_reciprocal(const T& s) {
  const T zero = s == 0;
  return where(zero, 0, 1.0 / where(zero, 1, s));
}

/// The primitive `svd(a)`: {u, s descending, vh} with a = u diag(s) vh, thin (k = min(m, n)).
/// JAX's svd_jvp_rule: with dS = u^T da v and F the inverse gaps of s^2,
///   ds = diag(dS),  du = u (F ∘ (dS S + S dS^T)) [+ (I - u u^T) da v S^-1 when m > n],
///   dv = v (F ∘ (S dS + dS^T S)) [+ (I - v v^T) da^T u S^-1 when n > m],
/// and each output's pullback is that map's transpose.
struct Svd {
  static constexpr std::size_t outputs = 3;  ///< u, s, vh
  static constexpr bool linear = false;      ///< its jvp is jvp() below

  /// "svd", for errors.
  std::string_view name() const { return "svd"; }
  /// The primitive on T.
  template <Diffable T>
  std::array<T, 3> operator()(const T& a) const {
    return Prims<T>::svd(a);
  }
  /// The jvp of the three outputs.
  template <Diffable T>
  std::array<T, 3> jvp(int, const T& a, const std::array<T, 3>& ys, const T& t) const {
    const T &u = ys[0], &s = ys[1], v = mT(ys[2]);
    const T s2 = s * s;
    const T ds = matmul(matmul(mT(u), t), v);
    const T row = unsqueeze(s, -2), col = unsqueeze(s, -1);  // s as [1, k] and [k, 1]
    const T ds_s = ds * row, s_ds = col * ds;                // dS S and S dS
    T du = matmul(u, over_gaps(s2, ds_s + mT(ds_s)));
    T dv = matmul(v, over_gaps(s2, s_ds + mT(s_ds)));
    const Shape sh = a.shape();
    const int64_t m = sh[sh.ndim() - 2], n = sh[sh.ndim() - 1];
    const T s_inv = unsqueeze(safe_reciprocal(s), -2);
    if (m > n) {
      const T dav = matmul(t, v);
      du = du + (dav - matmul(u, matmul(mT(u), dav))) * s_inv;
    }
    if (n > m) {
      const T dau = matmul(mT(t), u);
      dv = dv + (dau - matmul(v, matmul(mT(v), dau))) * s_inv;
    }
    return {du, diagonal_of(ds), mT(dv)};
  }
  /// The vjp of output `output` (u, s or vh). Keeps u, s and vh.
  template <Diffable T>
  Pullback<T> pullback(int, int output, const T& a, const std::array<T, 3>& ys) const {
    const Shape sh = a.shape();
    const int64_t m = sh[sh.ndim() - 2], n = sh[sh.ndim() - 1];
    std::vector<Tensor> saved{detail::stored(ys[0]), detail::stored(ys[1]), detail::stored(ys[2])};
    return {[output, m, n, u = ys[0], s = ys[1], vh = ys[2]](const T& ct) {
              const T v = mT(vh), row = unsqueeze(s, -2), col = unsqueeze(s, -1);
              if (output == 1) return matmul(u * unsqueeze(ct, -2), vh);  // u diag(s̄) v^T
              const T s2 = s * s;
              const T s_inv = unsqueeze(safe_reciprocal(s), -2);
              if (output == 0) {  // dS̄ = (K + K^T) S with K = F ∘ u^T ū
                const T k = over_gaps(s2, matmul(mT(u), ct));
                T g = matmul(matmul(u, (k + mT(k)) * row), vh);
                if (m > n) g = g + matmul((ct - matmul(u, matmul(mT(u), ct))) * s_inv, vh);
                return g;
              }
              const T vbar = mT(ct);  // dS̄ = S (K + K^T) with K = F ∘ v^T v̄
              const T k = over_gaps(s2, matmul(vh, vbar));
              T g = matmul(matmul(u, col * (k + mT(k))), vh);
              if (n > m) g = g + matmul(u * s_inv, mT(vbar - matmul(v, matmul(vh, vbar))));
              return g;
            },
            std::move(saved)};
  }
  /// The batching rule: the batch axis is one more batch dim of the decomposition.
  template <Diffable T>
  std::array<Batched<T>, 3> batch(const Batched<T>& a) const {
    const std::array<T, 3> ys = Prims<T>::svd(a.value());
    return {Batched<T>(ys[0], a.batched()), Batched<T>(ys[1], a.batched()),
            Batched<T>(ys[2], a.batched())};
  }
};

/// The primitive `pinv(a, cutoff)`: p = a^+ over the singular values above cutoff times the
/// largest (its value through the SVD). Its derivative is Golub and Pereyra's (1973), valid
/// where the rank does not change, in p and a alone:
///   dp = -p da p + p p^T da^T (I - a p) + (I - p a) da^T p^T p,
/// so it never meets the SVD's eigenvector terms, whose 1 / (s_i^2 - s_j^2) cancels only on
/// paper: through them the gradient at a matrix with repeated singular values (the identity,
/// an orthogonal matrix) would be NaN. As JAX's pinv (a custom_jvp) and PyTorch's. Where a has
/// full row rank a p = I, and where it has full column rank p a = I: the second or the third
/// term is then 0, and is dropped rather than computed from I - a p, whose rounding error
/// (eps |a| |p|) the derivatives of higher order multiply by |a| again (a square matrix with
/// entries of 1e4 had its two Hessian-vector products, forward over reverse and reverse over
/// forward, differ by 2.6e-10 relative; with entries of 1e6, by 7.6e-6).
struct Pinv {
  double cutoff;                         ///< relative to the largest singular value
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// "pinv", for errors.
  std::string_view name() const { return "pinv"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a) const {
    return Prims<T>::pinv(a, cutoff);
  }
  /// The jvp above.
  template <Diffable T>
  T jvp(int, const T& a, const T& p, const T& t) const {
    const T tt = mT(t);
    const T left = matmul(matmul(p, mT(p)), tt);   // p p^T da^T
    const T right = matmul(tt, matmul(mT(p), p));  // da^T p^T p
    const auto [row, column] = full_rank(a, p);
    return -matmul(matmul(p, t), p) + unless(row, left - matmul(matmul(left, a), p)) +
           unless(column, right - matmul(p, matmul(a, right)));
  }
  /// The vjp, the jvp's transpose: -p^T g p^T + (I - a p) g^T p p^T + p^T p g^T (I - p a).
  /// Keeps a and p.
  template <Diffable T>
  Pullback<T> pullback(int, const T& a, const T& p) const {
    return {[a, p](const T& ct) {
              const T pt = mT(p), gt = mT(ct);
              const T left = matmul(gt, matmul(p, pt));   // g^T p p^T
              const T right = matmul(matmul(pt, p), gt);  // p^T p g^T
              const auto [row, column] = full_rank(a, p);
              return -matmul(matmul(pt, ct), pt) + unless(row, left - matmul(a, matmul(p, left))) +
                     unless(column, right - matmul(matmul(right, p), a));
            },
            {detail::stored(a), detail::stored(p)}};
  }
  /// The batching rule: the batch axis is one more batch dim of the decomposition.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a) const {
    return Batched<T>(Prims<T>::pinv(a.value(), cutoff), a.batched());
  }

 private:
  /// Per matrix [..., 1, 1], as constants: whether a has full row rank (a p = I) and full
  /// column rank (p a = I). The rank is trace(a p) (a p projects onto a's range), within
  /// rounding of an integer.
  template <Diffable T>
  static std::pair<T, T> full_rank(const T& a, const T& p) {
    const Shape s = a.shape();
    const int64_t m = s[s.ndim() - 2], n = s[s.ndim() - 1];
    const T rank = sum(diagonal(detail::detach(matmul(a, p)), 0, -2, -1), {-1}, true);
    const T full = unsqueeze(abs(rank - double(std::min(m, n))) < 0.5, -1);
    const T no = full != full;  // false, of full's shape and level
    return {m <= n ? full : no, n <= m ? full : no};
  }
  /// x, or 0 where `zero` holds (a constant: no derivative flows through the choice).
  template <Diffable T>
  static T unless(const T& zero, const T& x) {
    return where(zero, 0, x);
  }
};

/// The primitive `qr(a)`: {q, r} reduced, a = q r. JAX's qr_jvp_rule for m >= n: with
/// C = da r^-1, B = q^T C and Ω = tril(B, -1) - tril(B, -1)^T,
///   dq = q (Ω - B) + C,   dr = (B - Ω) r.
/// For m < n, a = [x | y] with x square: x = q r_x is that rule, and r_y = q^T y.
struct Qr {
  static constexpr std::size_t outputs = 2;  ///< q, r
  static constexpr bool linear = false;      ///< its jvp is jvp() below

  /// "qr", for errors.
  std::string_view name() const { return "qr"; }
  /// The primitive on T.
  template <Diffable T>
  std::array<T, 2> operator()(const T& a) const {
    return Prims<T>::qr(a);
  }
  /// The jvp of both outputs.
  template <Diffable T>
  std::array<T, 2> jvp(int, const T& a, const std::array<T, 2>& ys, const T& t) const {
    const T &q = ys[0], &r = ys[1];
    const Shape sh = a.shape();
    const int64_t m = sh[sh.ndim() - 2], n = sh[sh.ndim() - 1];
    if (m >= n) return square_or_tall_jvp(q, r, t);
    const T rx = slice(r, -1, 0, m), ry = slice(r, -1, m, n);
    const auto [dq, drx] = square_or_tall_jvp(q, rx, slice(t, -1, 0, m));
    const T dry = matmul(mT(dq), matmul(q, ry)) + matmul(mT(q), slice(t, -1, m, n));
    return {dq, concat({drx, dry}, -1)};
  }
  /// The vjp of output `output`: with M = q^T q̄ - r̄ r^T,
  /// da = (q̄ + q (tril(M - M^T, -1) - M)) r^-T (for m < n, on the square block, plus y's
  /// share through r_y = q^T y). Keeps q and r.
  template <Diffable T>
  Pullback<T> pullback(int, int output, const T& a, const std::array<T, 2>& ys) const {
    const Shape sh = a.shape();
    const int64_t m = sh[sh.ndim() - 2], n = sh[sh.ndim() - 1];
    return {[output, m, n, q = ys[0], r = ys[1]](const T& ct) {
              const T zq = zeros_like(q);
              if (m >= n) {
                return output == 0 ? square_or_tall_vjp(q, r, ct, zeros_like(r))
                                   : square_or_tall_vjp(q, r, zq, ct);
              }
              // r_y = q^T y: y's cotangent is q r̄_y, and q's gains y r̄_y^T.
              const T rx = slice(r, -1, 0, m), ry = slice(r, -1, m, n);
              const T y = matmul(q, ry);
              const T qbar = output == 0 ? ct : matmul(y, mT(slice(ct, -1, m, n)));
              const T rxbar = output == 0 ? zeros_like(rx) : slice(ct, -1, 0, m);
              const T dx = square_or_tall_vjp(q, rx, qbar, rxbar);
              const T dy = output == 0 ? zeros_like(y) : matmul(q, slice(ct, -1, m, n));
              return concat({dx, dy}, -1);
            },
            {detail::stored(ys[0]), detail::stored(ys[1])}};
  }
  /// The batching rule: the batch axis is one more batch dim of the factorisation.
  template <Diffable T>
  std::array<Batched<T>, 2> batch(const Batched<T>& a) const {
    const std::array<T, 2> ys = Prims<T>::qr(a.value());
    return {Batched<T>(ys[0], a.batched()), Batched<T>(ys[1], a.batched())};
  }

 private:
  template <Diffable T>
  static std::array<T, 2> square_or_tall_jvp(const T& q, const T& r, const T& t) {
    const T c = Prims<T>::triangular_solve(r, t, {.lower = false, .left = false});
    const T b = matmul(mT(q), c), low = tril(b, -1);
    const T omega = low - mT(low);
    return {matmul(q, omega - b) + c, matmul(b - omega, r)};
  }
  template <Diffable T>
  static T square_or_tall_vjp(const T& q, const T& r, const T& qbar, const T& rbar) {
    const T mm = matmul(mT(q), qbar) - matmul(rbar, mT(r));
    const T cbar = qbar + matmul(q, tril(mm - mT(mm), -1) - mm);
    return Prims<T>::triangular_solve(r, cbar, {.lower = false, .left = false, .transpose = true});
  }
};

}  // namespace strata::rules
