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

/// What an elementwise derivative reads besides the tangent or cotangent v (JAX's defjvp
/// reads the inputs, defjvp2 the output): exactly what Reverse<T> keeps for it.
enum class Reads {
  nothing,  ///< a linear op: the derivative is a function of v alone
  input,    ///< the input x (unary) or the operands a, b (binary)
  output,   ///< the output y
};

/// The derivative entry of one unary op: what it reads, and v times the derivative at the
/// value it reads (x, y, or an empty T for Reads::nothing). No formula: the op is piecewise
/// constant (sign, logical_not) and no derivative flows through it.
template <Diffable T>
struct UnaryDerivative {
  Reads reads = Reads::nothing;              ///< x, y, or neither
  T (*times)(const T&, const T&) = nullptr;  ///< (value read, v) -> v * op'(x); null: none
};

/// The derivative entry of every unary op, one case each (a switch without a default label, so
/// -Werror=switch rejects an op without one).
template <Diffable T>
UnaryDerivative<T> unary_derivative(UnaryOp op) {
  using D = UnaryDerivative<T>;
  switch (op) {
    case UnaryOp::neg:
      return D{Reads::nothing, [](const T&, const T& v) { return -v; }};
    case UnaryOp::exp:
      return D{Reads::output, [](const T& y, const T& v) { return safe_mul(v, y); }};
    case UnaryOp::log:
      return D{Reads::input, [](const T& x, const T& v) { return safe_div(v, x); }};
    case UnaryOp::sin:
      return D{Reads::input, [](const T& x, const T& v) { return safe_mul(v, cos(x)); }};
    case UnaryOp::cos:
      return D{Reads::input, [](const T& x, const T& v) { return -safe_mul(v, sin(x)); }};
    case UnaryOp::sqrt:
      return D{Reads::output, [](const T& y, const T& v) { return safe_div(v, y * 2.0); }};
    case UnaryOp::tanh:
      return D{Reads::output, [](const T& y, const T& v) { return safe_mul(v, 1.0 - y * y); }};
    case UnaryOp::abs:
      return D{Reads::input, [](const T& x, const T& v) { return safe_mul(v, sign(x)); }};
    case UnaryOp::sign:
    case UnaryOp::logical_not:
      return D{};
    case UnaryOp::log1p:
      return D{Reads::input, [](const T& x, const T& v) { return safe_div(v, x + 1.0); }};
    case UnaryOp::expm1:
      return D{Reads::output, [](const T& y, const T& v) { return safe_mul(v, y + 1.0); }};
    case UnaryOp::erf:  // 2 / sqrt(pi) e^(-x^2)
      return D{Reads::input, [](const T& x, const T& v) {
                 return safe_mul(v, exp(-(x * x)) * 1.1283791670955126);
               }};
  }
  return D{};  // unreachable: every op has its case above
}

/// The unary primitive `op(x)`.
struct Unary {
  UnaryOp op;                            ///< which unary op
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// The op's name, for errors.
  std::string_view name() const { return op_name(op); }
  /// False for the piecewise-constant ops (sign, logical_not).
  template <Diffable T>
  bool differentiable(const T&) const {
    return unary_derivative<T>(op).times != nullptr;
  }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::unary(op, x);
  }
  /// The jvp: the derivative applied to the tangent t.
  template <Diffable T>
  T jvp(int, const T& x, const T& y, const T& t) const {
    const UnaryDerivative<T> d = unary_derivative<T>(op);
    return d.times(d.reads == Reads::output ? y : x, t);
  }
  /// The vjp, keeping only the value the derivative reads.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T& y) const {
    const UnaryDerivative<T> d = unary_derivative<T>(op);
    const Kept<T> r(d.reads != Reads::nothing, d.reads == Reads::output ? y : x);
    Pullback<T> pb{[times = d.times, r](const T& ct) { return times(*r, ct); }, {}};
    r.save_into(pb.saved);
    return pb;
  }
  /// The batching rule: elementwise, so the batch axis just rides along.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    return Batched<T>(Prims<T>::unary(op, x.value()), x.batched());
  }
};

/// One partial derivative of a binary op: the residuals it reads (keep_a, keep_b, keep_out of
/// ad/rules/residuals.hpp) and v times the partial, given a, b and y = op(a, b) (an empty T
/// for each value it does not read).
template <Diffable T>
struct Partial {
  /// (a, b, y, v) -> v * d op / d operand
  using Times = T (*)(const T&, const T&, const T&, const T&);
  unsigned reads = keep_nothing;  ///< what it reads
  Times times = nullptr;          ///< null: the operand gets no derivative
};

/// The derivative entry of one binary op: its two partials, or none (comparisons and
/// logical ops: no derivative flows).
template <Diffable T>
struct BinaryDerivative {
  Partial<T> da;  ///< in a
  Partial<T> db;  ///< in b
};

/// d maximum(mine, other) / d mine (Max) or d minimum / d mine, applied to v: 1 where mine
/// wins, 0 where it loses, and ties split evenly between the operands, like JAX.
template <Diffable T, bool Max>
T extremum_partial(const T& mine, const T& other, const T& v) {
  const T wins = Max ? cast(mine > other, v.dtype()) : cast(mine < other, v.dtype());
  return v * (wins + cast(mine == other, v.dtype()) * 0.5);
}

/// The derivative entry of every binary op, one case each (no default label, as above).
template <Diffable T>
BinaryDerivative<T> binary_derivative(BinaryOp op) {
  using D = BinaryDerivative<T>;
  using P = Partial<T>;
  switch (op) {
    case BinaryOp::add:
      return D{P{keep_nothing, [](const T&, const T&, const T&, const T& v) { return v; }},
               P{keep_nothing, [](const T&, const T&, const T&, const T& v) { return v; }}};
    case BinaryOp::sub:
      return D{P{keep_nothing, [](const T&, const T&, const T&, const T& v) { return v; }},
               P{keep_nothing, [](const T&, const T&, const T&, const T& v) { return -v; }}};
    case BinaryOp::mul:
    case BinaryOp::safe_mul:  // a * b, or 0 where a or b is 0: the same partials, made safe
      return D{
          P{keep_b, [](const T&, const T& b, const T&, const T& v) { return safe_mul(v, b); }},
          P{keep_a, [](const T& a, const T&, const T&, const T& v) { return safe_mul(v, a); }}};
    case BinaryOp::div:
    case BinaryOp::safe_div:
      return D{P{keep_b, [](const T&, const T& b, const T&, const T& v) { return safe_div(v, b); }},
               P{keep_b | keep_out, [](const T&, const T& b, const T& y, const T& v) {
                   return -safe_div(safe_mul(v, y), b);
                 }}};
    case BinaryOp::pow:
      // 0 ** 0 keeps finite derivatives: d/da is 0 where a == b == 0 (b * a ** (b - 1) is
      // 0 * inf there), and d/db uses log(1) where a == 0, as in JAX. Both are "double
      // wheres": the branch a where does not select still runs (and is differentiated, with
      // a zero cotangent) on inputs made safe first, a = 1, so its own derivatives are
      // finite and 0 * (its derivative) stays 0.
      return D{P{keep_a | keep_b,
                 [](const T& a, const T& b, const T&, const T& v) {
                   const T zero_zero = logical_and(a == 0, b == 0);
                   return safe_mul(v,
                                   where(zero_zero, 0, b * pow(where(zero_zero, 1, a), b - 1.0)));
                 }},
               P{keep_a | keep_out, [](const T& a, const T&, const T& y, const T& v) {
                   return safe_mul(safe_mul(v, log(where(a == 0, 1, a))), y);
                 }}};
    case BinaryOp::maximum:
      return D{P{keep_a | keep_b, [](const T& a, const T& b, const T&,
                                     const T& v) { return extremum_partial<T, true>(a, b, v); }},
               P{keep_a | keep_b, [](const T& a, const T& b, const T&, const T& v) {
                   return extremum_partial<T, true>(b, a, v);
                 }}};
    case BinaryOp::minimum:
      return D{P{keep_a | keep_b, [](const T& a, const T& b, const T&,
                                     const T& v) { return extremum_partial<T, false>(a, b, v); }},
               P{keep_a | keep_b, [](const T& a, const T& b, const T&, const T& v) {
                   return extremum_partial<T, false>(b, a, v);
                 }}};
    case BinaryOp::eq:
    case BinaryOp::ne:
    case BinaryOp::lt:
    case BinaryOp::le:
    case BinaryOp::gt:
    case BinaryOp::ge:
    case BinaryOp::logical_and:
    case BinaryOp::logical_or:
      return D{};
  }
  return D{};  // unreachable: every op has its case above
}

/// The binary primitive `op(a, b)` (operands broadcast to one shape beforehand).
struct Binary {
  BinaryOp op;                           ///< which binary op
  static constexpr bool linear = false;  ///< its jvp is jvp() below

  /// The op's name, for errors.
  std::string_view name() const { return op_name(op); }
  /// False for the comparisons and logical ops (no partial at all).
  template <Diffable T>
  bool differentiable(const T&, const T&) const {
    const BinaryDerivative<T> d = binary_derivative<T>(op);
    return d.da.times != nullptr || d.db.times != nullptr;
  }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& a, const T& b) const {
    return Prims<T>::binary(op, a, b);
  }
  /// The jvp's term for operand `which` with tangent t.
  template <Diffable T>
  T jvp(int which, const T& a, const T& b, const T& y, const T& t) const {
    const BinaryDerivative<T> d = binary_derivative<T>(op);
    const Partial<T> p = which == 0 ? d.da : d.db;
    return p.times ? p.times(a, b, y, t) : zeros_like(t);
  }
  /// The vjp for operand `which`, keeping only what its partial reads.
  template <Diffable T>
  Pullback<T> pullback(int which, const T& a, const T& b, const T& y) const {
    const BinaryDerivative<T> d = binary_derivative<T>(op);
    const Partial<T> p = which == 0 ? d.da : d.db;
    const Kept<T> ak(p.reads & keep_a, a), bk(p.reads & keep_b, b), yk(p.reads & keep_out, y);
    Pullback<T> pb{[times = p.times, ak, bk, yk](const T& ct) {
                     return times ? times(*ak, *bk, *yk, ct) : zeros_like(ct);
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
