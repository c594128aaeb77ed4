// SPDX-License-Identifier: MIT
#pragma once
/// The rule of matmul, bilinear in its operands.
#include <algorithm>
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"

namespace strata::rules {

/// True for a 2-D value stored column-major (a transposed view of a
/// row-major matrix, like the W^T of x @ W^T).
inline bool column_major_2d(const Tensor& t) {
  const Strides& s = t.raw().strides();
  return t.ndim() == 2 && t.shape()[0] > 1 && t.shape()[1] > 1 && s[0] == 1 && s[1] >= t.shape()[0];
}

/// matmul's vjp for operand a ([..., m, k]) or b ([..., k, n]). For a 2-D
/// column-major operand the same product is computed transposed, so the
/// gradient comes out in the operand's own layout: the gradient of W in
/// x @ W^T is then a contiguous [out, in] matrix that optimisers update with
/// unit-stride loops. (A batched operand of st::vmap has no single layout: it takes the
/// general path.)
template <Diffable T>
T matmul_vjp(int which, const T& a, const T& b, const T& ct) {
  const bool flat = a.shape().ndim() == 2 && b.shape().ndim() == 2;
  if (which == 0) {
    if (flat && !detail::mapped(a) && column_major_2d(strata::plain(a))) {
      return transpose(Prims<T>::matmul(b, transpose(ct, 0, 1)), 0, 1);
    }
    return sum_to(Prims<T>::matmul(ct, transpose(b, -1, -2)), a.shape());
  }
  if (flat && !detail::mapped(b) && column_major_2d(strata::plain(b))) {
    return transpose(Prims<T>::matmul(transpose(ct, 0, 1), a), 0, 1);
  }
  return sum_to(Prims<T>::matmul(transpose(a, -1, -2), ct), b.shape());
}

/// The primitive `matmul(a, b)` (batched over leading axes, which broadcast).
struct Matmul {
  static constexpr bool linear = false;  ///< bilinear: its jvp is jvp() below

  /// "matmul", for errors.
  std::string_view name() const { return "matmul"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& b) const {
    return Prims<T>::matmul(a, b);
  }
  /// The jvp's term for operand `which`: the product with its tangent in its place.
  template <Diffable T>
  T jvp(int which, const T& a, const T& b, const T&, const T& t) const {
    return which == 0 ? Prims<T>::matmul(t, b) : Prims<T>::matmul(a, t);
  }
  /// The vjp for operand `which`; keeps both operands.
  template <Diffable T>
  Pullback<T> pullback(int which, const T& a, const T& b, const T&) const {
    return {[which, a, b](const T& ct) { return matmul_vjp(which, a, b, ct); },
            {detail::stored(a), detail::stored(b)}};
  }
  /// The batching rule: one product over the whole batch (a shared matrix folds the batch
  /// into the other operand's rows or columns).
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a, const Batched<T>& b) const {
    using P = Prims<T>;
    if (!a.batched() && !b.batched()) return Batched<T>(P::matmul(a.value(), b.value()));
    const Shape sa = a.shape(), sb = b.shape();
    if (sa.ndim() < 2 || sb.ndim() < 2) {
      detail::fail<ShapeError>("matmul", "operands need rank >= 2, got shapes ", sa, " and ", sb,
                               " (use the composite st::matmul for vectors)");
    }
    if (sa[sa.ndim() - 1] != sb[sb.ndim() - 2]) {
      detail::fail<ShapeError>("matmul", "shapes ", sa, " and ", sb, " do not fit (inner dims ",
                               sa[sa.ndim() - 1], " vs ", sb[sb.ndim() - 2], ")");
    }
    // A product with the identity basis (jacfwd's tangents of a vector x in W @ x) is the
    // other operand rearranged: a @ e_j is column j of a, e_j^T @ b row j of b. No
    // arithmetic, and exact: through a GEMM an infinite entry of W would turn the rest of
    // its row of the Jacobian into NaNs (inf * 0). The columns are copied contiguous
    // (flattening the transposed view copies it) for the elementwise ops that follow.
    if (b.is_identity() && !a.batched() && sa.ndim() == 2 && sb.ndim() == 2 && sb[1] == 1) {
      const T columns = P::reshape(P::permute(a.value(), {1, 0}), {-1});
      return batching::batched(P::reshape(columns, {sa[1], sa[0], 1}));
    }
    if (a.is_identity() && !b.batched() && sb.ndim() == 2 && sa.ndim() == 2 && sa[0] == 1) {
      return batching::batched(P::reshape(b.value(), {sb[0], 1, sb[1]}));
    }
    // A batch of products with one shared matrix is one product: the batch
    // axis folds into the rows of a (a batched, b an unbatched matrix) or
    // the columns of b (a an unbatched matrix, b batched). Empty operands
    // take the general path (a -1 in the folding reshape needs elements).
    const bool fold = a.value().numel() > 0 && b.value().numel() > 0;
    if (fold && !b.batched() && sb.ndim() == 2) {
      Shape out = a.value().shape();
      out[out.ndim() - 1] = sb[1];
      return batching::batched(
          P::reshape(P::matmul(P::reshape(a.value(), {-1, sa[sa.ndim() - 1]}), b.value()), out));
    }
    if (fold && !a.batched() && sa.ndim() == 2 && sb[sb.ndim() - 1] == 1) {
      // Matrix-vector products (b: [B, L..., k, 1], jacfwd's tangents and jacrev's
      // cotangents of a vector): one product [B * L, k] @ a^T whose rows come out in the
      // batch's order, so the result is contiguous rather than a transposed view.
      Shape out = b.value().shape();
      out[out.ndim() - 2] = sa[0];
      const T rows = P::reshape(b.value(), {-1, sa[1]});
      return batching::batched(P::reshape(P::matmul(rows, P::permute(a.value(), {1, 0})), out));
    }
    if (fold && !a.batched() && sa.ndim() == 2) {
      // b: [B, L..., k, n] -> [k, B, L..., n] -> [k, B * L * n];
      // the product: [m, B * L * n] -> [m, B, L..., n] -> [B, L..., m, n].
      const Shape pb = b.value().shape();
      const int64_t r = pb.ndim();
      Shape to_front{r - 2};
      for (int64_t i = 0; i < r; ++i) {
        if (i != r - 2) to_front.push_back(i);
      }
      const T cols = P::reshape(P::permute(b.value(), to_front), {sb[sb.ndim() - 2], -1});
      Shape prod_shape{sa[0]};
      for (int64_t i = 0; i < r; ++i) {
        if (i != r - 2) prod_shape.push_back(pb[i]);
      }
      Shape back;  // [m, B, L..., n] -> [B, L..., m, n]
      for (int64_t i = 1; i < r - 1; ++i) back.push_back(i);
      back.push_back(0);
      back.push_back(r - 1);
      return batching::batched(
          P::permute(P::reshape(P::matmul(a.value(), cols), prod_shape), back));
    }
    // General: every batched operand as [B, 1..., ...shape] of one rank, so
    // the batch axis lines up; an unbatched operand broadcasts from the right.
    const int64_t rank = std::max(sa.ndim(), sb.ndim());
    auto aligned = [rank](const Batched<T>& x) {
      if (!x.batched()) return x.value();
      Shape s;
      for (int64_t i = x.ndim(); i < rank; ++i) s.push_back(1);
      for (int64_t d : x.shape()) s.push_back(d);
      return P::reshape(x.value(), detail::with_batch(x.batch_size(), s));
    };
    batching::batch_of<T>({&a, &b});
    return batching::batched(P::matmul(aligned(a), aligned(b)));
  }
};

}  // namespace strata::rules
