// SPDX-License-Identifier: MIT
#pragma once
/// Reverse<T>: reverse-mode values over any Diffable T.
///
/// A value is a primal, the tape of the transform call it belongs to, and
/// its node on that tape. No tape means a constant. Each primitive computes
/// its primal on T and records the pullbacks of its rule (ad/rules.hpp), in
/// T ops, on the tape; values of two different tapes never mix.
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "ad/tape.hpp"

namespace strata {

/// A reverse-mode value over the level T: a primal, the tape of the transform call that
/// records it and its node there (no tape: a constant). st::grad, st::vjp, st::jacrev and
/// st::hessian make these; a user's generic lambda receives them and applies ops as on a
/// Tensor. Shape, dtype and device are the primal's.
template <Diffable T>
class Reverse : public Ops<Reverse<T>> {
 public:
  /// An empty constant (a default-constructed primal).
  Reverse() = default;
  /// A constant (no tape).
  explicit Reverse(T primal) : primal_(std::move(primal)) {}
  /// Node `id` of `tape` (a constant when tape is null).
  Reverse(T primal, std::shared_ptr<Tape<T>> tape, int64_t id)
      : primal_(std::move(primal)), tape_(std::move(tape)), id_(tape_ ? id : -1) {}

  /// The value.
  const T& primal() const { return primal_; }
  /// The tape this value is recorded on (null for a constant).
  const std::shared_ptr<Tape<T>>& tape() const { return tape_; }
  /// The node on the tape (-1 for a constant).
  int64_t id() const { return id_; }
  /// True when no tape records this value.
  bool is_constant() const { return !tape_; }
  /// The primal's shape.
  Shape shape() const { return primal_.shape(); }
  /// The primal's number of dimensions.
  int64_t ndim() const { return primal_.shape().ndim(); }
  /// The primal's number of elements.
  int64_t numel() const { return checked_numel(primal_.shape(), "numel"); }
  /// The primal's dtype.
  DType dtype() const { return primal_.dtype(); }
  /// The primal's device.
  Device device() const { return primal_.device(); }

 private:
  T primal_;
  std::shared_ptr<Tape<T>> tape_;
  int64_t id_ = -1;
};

/// Reverse<T> wraps the level T.
template <Diffable T>
struct inner_level<Reverse<T>> {
  using type = T;  ///< T
};

namespace detail {
/// Throws the "two different transform calls" error.
[[noreturn]] void mixed_transform_calls(std::string_view op);
}  // namespace detail

/// The Diffable primitives of Reverse<T>: each computes the primal with Prims<T> and records
/// the pullbacks of its vjp rule (ad/rules.hpp) on the operands' tape.
template <Diffable T>
struct Prims<Reverse<T>> {
  using R = Reverse<T>;                 ///< the level these primitives act on
  using P = Prims<T>;                   ///< the primitives of the level below
  using Edge = typename Tape<T>::Edge;  ///< one input of a tape node

  /// @{
  /// The Diffable primitive of the same name (diff/diffable.hpp) on Reverse<T>: the primal by
  /// Prims<T>, plus a tape node whose pullbacks are its vjp rule; lift_inner(x) is x as a
  /// constant, constant(t) a plain tensor as a constant, plain(x) the plain value underneath.
  /// Throws ValueError when values of two different transform calls meet.

  static R lift_inner(const T& x) { return R(x); }
  static R constant(const Tensor& t) { return R(P::constant(t)); }
  static const Tensor& plain(const R& x) { return P::plain(x.primal()); }

  static R unary(UnaryOp op, const R& x) {
    T y = P::unary(op, x.primal());
    if (x.is_constant() || !rules::has_derivative(op)) return R(y);
    const unsigned k = rules::keeps(op);
    const Kept xk = kept(k & rules::keep_a, x.primal()), yk = kept(k & rules::keep_out, y);
    return record(
        y,
        {{x.id(), [op, xk, yk](const T& ct) { return *rules::unary(op, get(xk), get(yk), ct); }}},
        saved_of({&xk, &yk}), x.tape());
  }
  static R binary(BinaryOp op, const R& a, const R& b) {
    auto tape = common_tape({&a, &b}, op_name(op));
    T y = P::binary(op, a.primal(), b.primal());
    if (!tape) return R(y);
    std::vector<Edge> edges;
    // Each edge keeps only what its rule reads (its residuals); the tape
    // version-checks them, so they stay alive here until recorded.
    std::array<Kept, 6> res;
    for (int which = 0; which < 2; ++which) {
      const R& in = which == 0 ? a : b;
      if (in.is_constant()) continue;
      const unsigned k = rules::keeps(op, which);
      Kept* r = &res[std::size_t(3 * which)];
      r[0] = kept(k & rules::keep_a, a.primal());
      r[1] = kept(k & rules::keep_b, b.primal());
      r[2] = kept(k & rules::keep_out, y);
      edges.push_back({in.id(), [op, which, ak = r[0], bk = r[1], yk = r[2]](const T& ct) {
                         return rules::binary(op, which, get(ak), get(bk), get(yk), ct);
                       }});
    }
    return record(y, std::move(edges),
                  saved_of({&res[0], &res[1], &res[2], &res[3], &res[4], &res[5]}), tape);
  }
  static R where(const Tensor& cond, const R& a, const R& b) {
    auto tape = common_tape({&a, &b}, "where");
    T y = P::where(cond, a.primal(), b.primal());
    if (!tape) return R(y);
    std::vector<Edge> edges;
    if (!a.is_constant()) {
      edges.push_back({a.id(), [cond](const T& ct) { return P::where(cond, ct, zeros_like(ct)); }});
    }
    if (!b.is_constant()) {
      edges.push_back({b.id(), [cond](const T& ct) { return P::where(cond, zeros_like(ct), ct); }});
    }
    return record(y, std::move(edges), {&cond}, tape);
  }
  static R sum(const R& x, const Shape& axes, bool keepdims) {
    T y = P::sum(x.primal(), axes, keepdims);
    if (x.is_constant()) return R(y);
    const Shape in = x.shape();
    return record(y,
                  {{x.id(), [in, axes, keepdims](
                                const T& ct) { return rules::unreduce(ct, in, axes, keepdims); }}},
                  {}, x.tape());
  }
  static R max(const R& x, const Shape& axes, bool keepdims) {
    T y = P::max(x.primal(), axes, keepdims);
    if (x.is_constant()) return R(y);
    const T w = rules::max_weights(x.primal(), y, axes, keepdims);
    const Shape in = x.shape();
    return record(y,
                  {{x.id(),
                    [w, in, axes, keepdims](const T& ct) {
                      return P::binary(BinaryOp::mul, rules::unreduce(ct, in, axes, keepdims), w);
                    }}},
                  {}, x.tape());
  }
  static R permute(const R& x, const Shape& dims) {
    const Shape inv = rules::inverse_permutation(dims);
    return linear(x, P::permute(x.primal(), dims),
                  [inv](const T& ct) { return P::permute(ct, inv); });
  }
  static R expand(const R& x, const Shape& shape) {
    const Shape in = x.shape();
    return linear(x, P::expand(x.primal(), shape), [in](const T& ct) { return sum_to(ct, in); });
  }
  static R reshape(const R& x, const Shape& shape) {
    const Shape in = x.shape();
    return linear(x, P::reshape(x.primal(), shape),
                  [in](const T& ct) { return P::reshape(ct, in); });
  }
  static R slice(const R& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
    T y = P::slice(x.primal(), axis, start, stop, step);
    if (x.is_constant()) return R(y);
    const int64_t ax = normalize_axis(axis, x.shape(), "slice");
    const Tensor pos =
        rules::slice_positions(x.shape()[std::size_t(ax)], start, stop, step, x.device());
    const Shape in = x.shape();
    return linear(x, y, [ax, pos, in](const T& ct) {
      const T zero = detail::filled<T>(0.0, in, ct.dtype(), ct.device());
      return P::index_add(zero, ax, pos, ct);
    });
  }
  static R pad(const R& x, const Pads& pads) {
    const Shape in = x.shape();
    return linear(x, P::pad(x.primal(), pads),
                  [pads, in](const T& ct) { return rules::unpad(ct, pads, in); });
  }
  static R cast(const R& x, DType dtype) {
    T y = P::cast(x.primal(), dtype);
    if (!is_floating(dtype) || !is_floating(x.dtype()))
      return R(y);  // integers carry no derivative
    const DType from = x.dtype();
    return linear(x, y, [from](const T& ct) { return P::cast(ct, from); });
  }
  static R concat(const std::vector<R>& xs, int64_t axis) {
    std::vector<const R*> ptrs;
    std::vector<T> ys;
    for (const R& x : xs) ptrs.push_back(&x), ys.push_back(x.primal());
    auto tape = common_tape(ptrs, "concat");
    T y = P::concat(ys, axis);
    if (!tape) return R(y);
    const int64_t ax = normalize_axis(axis, y.shape(), "concat");
    std::vector<Edge> edges;
    int64_t at = 0;
    for (const R& x : xs) {
      const int64_t len = x.shape()[std::size_t(ax)];
      if (!x.is_constant()) {
        edges.push_back(
            {x.id(), [ax, at, len](const T& ct) { return P::slice(ct, ax, at, at + len, 1); }});
      }
      at += len;
    }
    return record(y, std::move(edges), {}, tape);
  }
  static R matmul(const R& a, const R& b) {
    auto tape = common_tape({&a, &b}, "matmul");
    T y = P::matmul(a.primal(), b.primal());
    if (!tape) return R(y);
    const T ap = a.primal(), bp = b.primal();
    std::vector<Edge> edges;
    if (!a.is_constant()) {
      edges.push_back({a.id(), [ap, bp](const T& ct) { return rules::matmul_vjp(0, ap, bp, ct); }});
    }
    if (!b.is_constant()) {
      edges.push_back({b.id(), [ap, bp](const T& ct) { return rules::matmul_vjp(1, ap, bp, ct); }});
    }
    return record(y, std::move(edges), {&strata::plain(ap), &strata::plain(bp)}, tape);
  }
  static R index_select(const R& x, int64_t axis, const Tensor& idx) {
    T y = P::index_select(x.primal(), axis, idx);
    if (x.is_constant()) return R(y);
    // Keeps the indices and the source's shape; the zeros are made when the pullback runs.
    const Shape in = x.shape();
    return record(y,
                  {{x.id(),
                    [in, axis, idx](const T& ct) {
                      const T zero = detail::filled<T>(0.0, in, ct.dtype(), ct.device());
                      return P::index_add(zero, axis, idx, ct);
                    }}},
                  {&idx}, x.tape());
  }
  static R index_add(const R& x, int64_t axis, const Tensor& idx, const R& src) {
    auto tape = common_tape({&x, &src}, "index_add");
    T y = P::index_add(x.primal(), axis, idx, src.primal());
    if (!tape) return R(y);
    std::vector<Edge> edges;
    if (!x.is_constant()) edges.push_back({x.id(), [](const T& ct) { return ct; }});
    if (!src.is_constant()) {
      edges.push_back(
          {src.id(), [axis, idx](const T& ct) { return P::index_select(ct, axis, idx); }});
    }
    return record(y, std::move(edges), {&idx}, tape);
  }
  /// @}

 private:
  static R record(const T& y, std::vector<Edge> edges, const std::vector<const Tensor*>& saved,
                  const std::shared_ptr<Tape<T>>& tape) {
    const int64_t id = tape->add(std::move(edges), saved);
    return R(y, tape, id);
  }
  /// A residual: the value when the rule reads it, nothing when it does not.
  using Kept = std::optional<T>;
  static Kept kept(bool keep, const T& v) { return keep ? Kept(v) : Kept(); }
  /// The residual, or an empty T() for one the rule does not read.
  static const T& get(const Kept& v) {
    static const T none{};
    return v ? *v : none;
  }
  /// The plain values under the residuals that are kept, for the version check.
  static std::vector<const Tensor*> saved_of(std::initializer_list<const Kept*> residuals) {
    std::vector<const Tensor*> out;
    for (const Kept* v : residuals) {
      if (*v) out.push_back(&strata::plain(**v));
    }
    return out;
  }
  /// A one-input primitive whose pullback is `pullback`.
  template <class Fn>
  static R linear(const R& x, T y, Fn&& pullback) {
    if (x.is_constant()) return R(std::move(y));
    return record(y, {{x.id(), std::forward<Fn>(pullback)}}, {}, x.tape());
  }
  /// The tape shared by the non-constant operands (null when all are constants).
  static std::shared_ptr<Tape<T>> common_tape(std::initializer_list<const R*> xs,
                                              std::string_view op) {
    return common_tape(std::vector<const R*>(xs), op);
  }
  static std::shared_ptr<Tape<T>> common_tape(const std::vector<const R*>& xs,
                                              std::string_view op) {
    std::shared_ptr<Tape<T>> tape;
    for (const R* x : xs) {
      if (!x->tape()) continue;
      if (tape && tape != x->tape()) detail::mixed_transform_calls(op);
      tape = x->tape();
    }
    return tape;
  }
};

}  // namespace strata
