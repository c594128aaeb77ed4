// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the elementwise primitives: unary, binary, where, cast.
///
/// An elementwise derivative is a pointwise multiplication, a linear map that
/// is its own transpose, so one function serves as the jvp term and the vjp:
/// `v` is a tangent (jvp) or a cotangent (vjp).
///
/// NaN-safe gradients: `v` is multiplied into a local derivative with
/// safe_mul / safe_div (raw/primitives.hpp), so a tangent or cotangent that is
/// exactly zero contributes exactly zero even through an infinite or NaN local
/// derivative. The branch a `where` does not select then never poisons a
/// gradient: d/dx where(x > 0, sqrt(x), 0) at 0 is 0, where JAX and PyTorch
/// give NaN (0 * inf). A nonzero v still meets the infinity (d sqrt(x) at 0 is inf).
#include <optional>
#include <string_view>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"

namespace strata::rules {

/// v * d, but exactly 0 where v == 0 or d == 0 (operands broadcast; C++ scalars allowed for d).
template <Diffable T, class D>
T safe_mul(const T& v, const D& d) {
  return detail::lifted_binary(BinaryOp::safe_mul, v, d);
}
/// v / d, but exactly 0 where v == 0.
template <Diffable T, class D>
T safe_div(const T& v, const D& d) {
  return detail::lifted_binary(BinaryOp::safe_div, v, d);
}

/// The unary primitive `op(x)`.
struct Unary {
  UnaryOp op;                            ///< which unary op
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// What the derivative of `op` reads: x (keep_a), y (keep_out), or nothing.
  static constexpr unsigned keeps(UnaryOp op) {
    switch (op) {
      case UnaryOp::exp:
      case UnaryOp::sqrt:
      case UnaryOp::tanh:
      case UnaryOp::expm1:
        return keep_out;
      case UnaryOp::log:
      case UnaryOp::log1p:
      case UnaryOp::erf:
      case UnaryOp::sin:
      case UnaryOp::cos:
      case UnaryOp::abs:
        return keep_a;
      default:
        return keep_nothing;  // neg is linear; sign and logical_not have no derivative
    }
  }
  /// d op(x) applied to v, given y = op(x); nullopt where the derivative is zero (sign).
  template <Diffable T>
  static std::optional<T> derivative(UnaryOp op, const T& x, const T& y, const T& v) {
    switch (op) {
      case UnaryOp::neg:
        return -v;
      case UnaryOp::exp:
        return safe_mul(v, y);
      case UnaryOp::log:
        return safe_div(v, x);
      case UnaryOp::sin:
        return safe_mul(v, cos(x));
      case UnaryOp::cos:
        return -safe_mul(v, sin(x));
      case UnaryOp::sqrt:
        return safe_div(v, y * 2.0);
      case UnaryOp::tanh:
        return safe_mul(v, 1.0 - y * y);
      case UnaryOp::abs:
        return safe_mul(v, sign(x));
      case UnaryOp::log1p:
        return safe_div(v, x + 1.0);
      case UnaryOp::expm1:
        return safe_mul(v, y + 1.0);
      case UnaryOp::erf:
        return safe_mul(v, exp(-(x * x)) * 1.1283791670955126);  // 2 / sqrt(pi)
      default:
        return std::nullopt;  // sign, logical_not: piecewise constant
    }
  }

  /// The op's name, for errors.
  std::string_view name() const { return op_name(op); }
  /// False for the piecewise-constant ops (sign, logical_not).
  template <Diffable T>
  bool differentiable(const T&) const {
    return op != UnaryOp::sign && op != UnaryOp::logical_not;
  }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::unary(op, x);
  }
  /// The jvp: the derivative applied to the tangent t.
  template <Diffable T>
  T jvp(int, const T& x, const T& y, const T& t) const {
    return *derivative(op, x, y, t);
  }
  /// The vjp, keeping only what keeps(op) names.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T& y) const {
    const unsigned k = keeps(op);
    const Kept<T> xk(k & keep_a, x), yk(k & keep_out, y);
    Pullback<T> pb{[op = op, xk, yk](const T& ct) { return *derivative(op, *xk, *yk, ct); }, {}};
    xk.save_into(pb.saved);
    yk.save_into(pb.saved);
    return pb;
  }
  /// The batching rule: elementwise, so the batch axis just rides along.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    return Batched<T>(Prims<T>::unary(op, x.value()), x.batched());
  }
};

/// The binary primitive `op(a, b)` (operands broadcast to one shape beforehand).
struct Binary {
  BinaryOp op;                           ///< which binary op
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// What the partial derivative of `op` in operand `which` (0: a, 1: b) reads.
  static constexpr unsigned keeps(BinaryOp op, int which) {
    switch (op) {
      case BinaryOp::mul:
      case BinaryOp::safe_mul:
        return which == 0 ? keep_b : keep_a;
      case BinaryOp::div:
      case BinaryOp::safe_div:
        return which == 0 ? keep_b : keep_b | keep_out;
      case BinaryOp::pow:
        return which == 0 ? keep_a | keep_b : keep_a | keep_out;
      case BinaryOp::maximum:
      case BinaryOp::minimum:
        return keep_a | keep_b;
      default:
        return keep_nothing;  // add, sub: linear
    }
  }
  /// The partial derivative of op(a, b) in operand `which` applied to v, given y = op(a, b).
  template <Diffable T>
  static T derivative(BinaryOp op, int which, const T& a, const T& b, const T& y, const T& v) {
    switch (op) {
      case BinaryOp::add:
        return v;
      case BinaryOp::sub:
        return which == 0 ? v : -v;
      case BinaryOp::mul:
      case BinaryOp::safe_mul:  // a * b, or 0 where a or b is 0: the same partials, made safe
        return which == 0 ? safe_mul(v, b) : safe_mul(v, a);
      case BinaryOp::div:
      case BinaryOp::safe_div:
        return which == 0 ? safe_div(v, b) : -safe_div(safe_mul(v, y), b);
      case BinaryOp::pow:
        // 0 ** 0 keeps finite derivatives: d/da is 0 where a == b == 0 (b * a ** (b - 1)
        // is 0 * inf there), and d/db uses log(1) where a == 0, as in JAX. Both are
        // "double wheres": the branch a where does not select still runs (and is
        // differentiated, with a zero cotangent) on inputs made safe first, a = 1,
        // so its own derivatives are finite and 0 * (its derivative) stays 0.
        if (which == 0) {
          const T zero_zero = logical_and(a == 0, b == 0);
          return safe_mul(v, where(zero_zero, 0, b * pow(where(zero_zero, 1, a), b - 1.0)));
        }
        return safe_mul(safe_mul(v, log(where(a == 0, 1, a))), y);
      case BinaryOp::maximum:
      case BinaryOp::minimum: {
        // Ties split the derivative evenly between the operands, like JAX.
        const bool mx = op == BinaryOp::maximum;
        const T mine = which == 0 ? a : b, other = which == 0 ? b : a;
        const T wins = mx ? cast(mine > other, v.dtype()) : cast(mine < other, v.dtype());
        return v * (wins + cast(mine == other, v.dtype()) * 0.5);
      }
      default:
        break;
    }
    detail::fail<DTypeError>(op_name(op), "has no derivative");
  }

  /// The op's name, for errors.
  std::string_view name() const { return op_name(op); }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& b) const {
    return Prims<T>::binary(op, a, b);
  }
  /// The jvp's term for operand `which` with tangent t.
  template <Diffable T>
  T jvp(int which, const T& a, const T& b, const T& y, const T& t) const {
    return derivative(op, which, a, b, y, t);
  }
  /// The vjp for operand `which`, keeping only what keeps(op, which) names.
  template <Diffable T>
  Pullback<T> pullback(int which, const T& a, const T& b, const T& y) const {
    const unsigned k = keeps(op, which);
    const Kept<T> ak(k & keep_a, a), bk(k & keep_b, b), yk(k & keep_out, y);
    Pullback<T> pb{[op = op, which, ak, bk, yk](const T& ct) {
                     return derivative(op, which, *ak, *bk, *yk, ct);
                   },
                   {}};
    ak.save_into(pb.saved);
    bk.save_into(pb.saved);
    yk.save_into(pb.saved);
    return pb;
  }
  /// The batching rule: an unbatched operand is broadcast over the batch.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a, const Batched<T>& b) const {
    if (!a.batched() && !b.batched()) return Batched<T>(Prims<T>::binary(op, a.value(), b.value()));
    const int64_t n = batching::batch_of<T>({&a, &b});
    return batching::batched(Prims<T>::binary(op, a.as_batch(n), b.as_batch(n)));
  }
};

/// The primitive `where(cond, a, b)`, linear in (a, b); the mask is a plain constant.
struct Where {
  Tensor cond;                          ///< where to take a
  static constexpr bool linear = true;  ///< its jvp is where(cond, ta, tb)

  /// "where", for errors.
  std::string_view name() const { return "where"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& b) const {
    return Prims<T>::where(cond, a, b);
  }
  /// The transpose for operand `which`: the cotangent where that operand was taken.
  template <Diffable T>
  Pullback<T> pullback(int which, const T&, const T&, const T&) const {
    if (which == 0) {
      return {[c = cond](const T& ct) { return Prims<T>::where(c, ct, zeros_like(ct)); }, {cond}};
    }
    return {[c = cond](const T& ct) { return Prims<T>::where(c, zeros_like(ct), ct); }, {cond}};
  }
  /// The batching rule: the mask is broadcast over the batch with the operands.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& a, const Batched<T>& b) const {
    if (!a.batched() && !b.batched())
      return Batched<T>(Prims<T>::where(cond, a.value(), b.value()));
    const int64_t n = batching::batch_of<T>({&a, &b});
    const Tensor c = Prims<Tensor>::expand(cond, detail::with_batch(n, cond.shape()));
    return batching::batched(Prims<T>::where(c, a.as_batch(n), b.as_batch(n)));
  }
};

/// The primitive `cast(x, dtype)`, linear between floating dtypes; integers carry no derivative.
struct Cast {
  DType dtype;                          ///< the dtype cast to
  static constexpr bool linear = true;  ///< its jvp is the cast of the tangent

  /// "cast", for errors.
  std::string_view name() const { return "cast"; }
  /// True between floating dtypes only.
  template <Diffable T>
  bool differentiable(const T& x) const {
    return is_floating(dtype) && is_floating(x.dtype());
  }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::cast(x, dtype);
  }
  /// The transpose: the cotangent cast back to x's dtype.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[from = x.dtype()](const T& ct) { return Prims<T>::cast(ct, from); }, {}};
  }
  /// The batching rule: elementwise.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    return Batched<T>(Prims<T>::cast(x.value(), dtype), x.batched());
  }
};

}  // namespace strata::rules
