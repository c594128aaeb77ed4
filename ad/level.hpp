// SPDX-License-Identifier: MIT
#pragma once
/// The one list that maps every Diffable primitive to its rule object (ad/rules.hpp), shared
/// by every level that interprets rules: Forward<T>, Reverse<T> and Batched<T>.
///
/// A level never enumerates primitives (JAX's traces each have one process_primitive). It
/// supplies how to apply a rule, as three static functions of its Prims:
///
///   apply(rule, xs...)        the primitive of `rule` on operands xs of the level
///   apply_list(rule, xs)      the same for a rule whose operands come as one list (concat)
///   apply_multi(rule, xs...)  the same for a rule with several outputs (lu, eigh, svd, qr)
///
/// and the hooks of diff/diffable.hpp's LevelHooks concept; RulePrims gives it every primitive.
/// A new primitive is one line here (its rule built from its parameters), and every level,
/// present or future, gets it; a new level is those three functions and its hooks.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ad/rules.hpp"

namespace strata::detail {

/// The Diffable primitives of the level L, each handed to Self::apply (Self is Prims<L>,
/// which derives from this: CRTP) as its rule object built from the primitive's parameters.
template <class Self, class L>
struct RulePrims {
  /// @{
  /// The Diffable primitive of the same name (diff/diffable.hpp) on L: Self::apply of its
  /// rule (ad/rules/*.hpp). Throws what the rule and the level below throw.
  static L unary(UnaryOp op, const L& x);
  static L binary(BinaryOp op, const L& a, const L& b);
  static L where(const Tensor& cond, const L& a, const L& b);
  static L sum(const L& x, const Shape& axes, bool keepdims);
  static L max(const L& x, const Shape& axes, bool keepdims);
  static L permute(const L& x, const Shape& dims);
  static L expand(const L& x, const Shape& shape);
  static L reshape(const L& x, const Shape& shape);
  static L slice(const L& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step);
  static L pad(const L& x, const Pads& pads);
  static L windows(const L& x, const Window& w);
  static L fold(const L& y, const Window& w, const Shape& spatial);
  static L cast(const L& x, DType dtype);
  static L concat(const std::vector<L>& xs, int64_t axis);
  static L matmul(const L& a, const L& b);
  static L conv(const L& x, const L& w, const ConvGeometry& g);
  static L conv_input_grad(const L& gy, const L& w, const Shape& x_shape, const ConvGeometry& g);
  static L conv_weight_grad(const L& x, const L& gy, const Shape& w_shape, const ConvGeometry& g);
  static L index_select(const L& x, int64_t axis, const Tensor& idx);
  static L index_add(const L& x, int64_t axis, const Tensor& idx, const L& src);
  static L cholesky(const L& a);
  static L triangular_solve(const L& a, const L& b, TriangularSolve opts);
  static std::array<L, 3> lu(const L& a);
  static L lu_inverse(const L& a, const L& lu, const L& perm);
  static L logabsdet(const L& a, const L& lu, const L& perm);
  static L pinv(const L& a, double cutoff);
  static std::array<L, 2> eigh(const L& a);
  static std::array<L, 3> svd(const L& a);
  static std::array<L, 2> qr(const L& a);
  /// @}
};

/// The LevelHooks (diff/diffable.hpp) of a dual level L (Forward<T>, Reverse<T>) whose
/// value wraps a primal of the level below: constants and masks are computed on the primals,
/// level by level, as constants of L. Self is Prims<L> (for select's rule).
template <class Self, class L>
struct DualHooks {
  using T = typename inner_level<L>::type;  ///< the level below

  /// @{
  /// The hook of the same name (diff/diffable.hpp's LevelHooks concept) on L: lift_inner(x) is x
  /// as a constant, constant(t) a plain tensor as a constant, plain(x) the plain value
  /// underneath; mapped, stored, detach, constant_binary and constant_unary act on the primal
  /// and give constants; select is where with a condition of level L, through its rule.
  static L lift_inner(const T& x);
  static L constant(const Tensor& t);
  static const Tensor& plain(const L& x);
  static bool mapped(const L& x);
  static const Tensor& stored(const L& x);
  static L detach(const L& x);
  static L constant_binary(BinaryOp op, const L& a, const L& b);
  static L constant_unary(UnaryOp op, const L& x);
  static L select(const L& cond, const L& a, const L& b);
  /// @}
};

// Defined out of the class so that they are not inline: for the stacks instantiated once
// (ad/stacks.hpp), a file that uses them calls the library's copy instead of compiling
// each rule's apply again (in-class definitions are inline, which an extern template
// does not stop the compiler from instantiating).

template <class Self, class L>
L RulePrims<Self, L>::unary(UnaryOp op, const L& x) {
  return Self::apply(rules::Unary{op}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::binary(BinaryOp op, const L& a, const L& b) {
  return Self::apply(rules::Binary{op}, a, b);
}

template <class Self, class L>
L RulePrims<Self, L>::where(const Tensor& cond, const L& a, const L& b) {
  return Self::apply(rules::Where{cond}, a, b);
}

template <class Self, class L>
L RulePrims<Self, L>::sum(const L& x, const Shape& axes, bool keepdims) {
  return Self::apply(rules::Sum{axes, keepdims}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::max(const L& x, const Shape& axes, bool keepdims) {
  return Self::apply(rules::Max{axes, keepdims}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::permute(const L& x, const Shape& dims) {
  return Self::apply(rules::Permute{dims}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::expand(const L& x, const Shape& shape) {
  return Self::apply(rules::Expand{shape}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::reshape(const L& x, const Shape& shape) {
  return Self::apply(rules::Reshape{shape}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::slice(const L& x, int64_t axis, std::optional<int64_t> start,
                            std::optional<int64_t> stop, int64_t step) {
  return Self::apply(rules::Slice{axis, start, stop, step}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::pad(const L& x, const Pads& pads) {
  return Self::apply(rules::Pad{pads}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::windows(const L& x, const Window& w) {
  return Self::apply(rules::Windows{w}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::fold(const L& y, const Window& w, const Shape& spatial) {
  return Self::apply(rules::Fold{w, spatial}, y);
}

template <class Self, class L>
L RulePrims<Self, L>::cast(const L& x, DType dtype) {
  return Self::apply(rules::Cast{dtype}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::concat(const std::vector<L>& xs, int64_t axis) {
  return Self::apply_list(rules::Concat{axis}, xs);
}

template <class Self, class L>
L RulePrims<Self, L>::matmul(const L& a, const L& b) {
  return Self::apply(rules::Matmul{}, a, b);
}

template <class Self, class L>
L RulePrims<Self, L>::conv(const L& x, const L& w, const ConvGeometry& g) {
  return Self::apply(rules::Conv{g}, x, w);
}

template <class Self, class L>
L RulePrims<Self, L>::conv_input_grad(const L& gy, const L& w, const Shape& x_shape,
                                      const ConvGeometry& g) {
  return Self::apply(rules::ConvInputGrad{g, x_shape}, gy, w);
}

template <class Self, class L>
L RulePrims<Self, L>::conv_weight_grad(const L& x, const L& gy, const Shape& w_shape,
                                       const ConvGeometry& g) {
  return Self::apply(rules::ConvWeightGrad{g, w_shape}, x, gy);
}

template <class Self, class L>
L RulePrims<Self, L>::index_select(const L& x, int64_t axis, const Tensor& idx) {
  return Self::apply(rules::IndexSelect{axis, idx}, x);
}

template <class Self, class L>
L RulePrims<Self, L>::index_add(const L& x, int64_t axis, const Tensor& idx, const L& src) {
  return Self::apply(rules::IndexAdd{axis, idx}, x, src);
}

template <class Self, class L>
L RulePrims<Self, L>::cholesky(const L& a) {
  return Self::apply(rules::Cholesky{}, a);
}

template <class Self, class L>
L RulePrims<Self, L>::triangular_solve(const L& a, const L& b, TriangularSolve opts) {
  return Self::apply(rules::TriangularSolve{opts}, a, b);
}

template <class Self, class L>
std::array<L, 3> RulePrims<Self, L>::lu(const L& a) {
  return Self::apply_multi(rules::Lu{}, a);
}

template <class Self, class L>
L RulePrims<Self, L>::lu_inverse(const L& a, const L& lu, const L& perm) {
  return Self::apply(rules::LuInverse{}, a, lu, perm);
}

template <class Self, class L>
L RulePrims<Self, L>::logabsdet(const L& a, const L& lu, const L& perm) {
  return Self::apply(rules::Logabsdet{}, a, lu, perm);
}

template <class Self, class L>
L RulePrims<Self, L>::pinv(const L& a, double cutoff) {
  return Self::apply(rules::Pinv{cutoff}, a);
}

template <class Self, class L>
std::array<L, 2> RulePrims<Self, L>::eigh(const L& a) {
  return Self::apply_multi(rules::Eigh{}, a);
}

template <class Self, class L>
std::array<L, 3> RulePrims<Self, L>::svd(const L& a) {
  return Self::apply_multi(rules::Svd{}, a);
}

template <class Self, class L>
std::array<L, 2> RulePrims<Self, L>::qr(const L& a) {
  return Self::apply_multi(rules::Qr{}, a);
}

template <class Self, class L>
L DualHooks<Self, L>::lift_inner(const T& x) {
  return L(x);
}

template <class Self, class L>
L DualHooks<Self, L>::constant(const Tensor& t) {
  return L(Prims<T>::constant(t));
}

template <class Self, class L>
const Tensor& DualHooks<Self, L>::plain(const L& x) {
  return Prims<T>::plain(x.primal());
}

template <class Self, class L>
bool DualHooks<Self, L>::mapped(const L& x) {
  return Prims<T>::mapped(x.primal());
}

template <class Self, class L>
const Tensor& DualHooks<Self, L>::stored(const L& x) {
  return Prims<T>::stored(x.primal());
}

template <class Self, class L>
L DualHooks<Self, L>::detach(const L& x) {
  return L(Prims<T>::detach(x.primal()));
}

template <class Self, class L>
L DualHooks<Self, L>::constant_binary(BinaryOp op, const L& a, const L& b) {
  return L(Prims<T>::constant_binary(op, a.primal(), b.primal()));
}

template <class Self, class L>
L DualHooks<Self, L>::constant_unary(UnaryOp op, const L& x) {
  return L(Prims<T>::constant_unary(op, x.primal()));
}

template <class Self, class L>
L DualHooks<Self, L>::select(const L& cond, const L& a, const L& b) {
  return Self::apply(rules::Select<T>{cond.primal()}, a, b);
}

}  // namespace strata::detail
