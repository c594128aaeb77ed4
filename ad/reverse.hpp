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

#include "ad/level.hpp"
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

/// The tape shared by the recorded values among xs, any range of const Reverse<T>* (null when
/// all are constants); throws ValueError, naming `op`, when two transform calls' values meet.
template <Diffable T, class Ptrs>
std::shared_ptr<Tape<T>> common_tape(const Ptrs& xs, std::string_view op) {
  const std::shared_ptr<Tape<T>>* tape = nullptr;
  for (const Reverse<T>* x : xs) {
    if (!x->tape()) continue;
    if (tape && *tape != x->tape()) mixed_transform_calls(op);
    tape = &x->tape();
  }
  return tape ? *tape : nullptr;
}
}  // namespace detail

/// The Diffable primitives of Reverse<T> (every one from detail::RulePrims, ad/level.hpp):
/// each computes the primal with the rule on T and records the rule's pullbacks on the
/// operands' tape. Throws ValueError when values of two different transform calls meet.
template <Diffable T>
struct Prims<Reverse<T>> : detail::RulePrims<Prims<Reverse<T>>, Reverse<T>>,
                           detail::DualHooks<Prims<Reverse<T>>, Reverse<T>> {
  using R = Reverse<T>;  ///< the level these primitives act on
  using P = Prims<T>;    ///< the primitives of the level below

  /// The primitive of rule `r` on the operands xs: the primal by the rule on T, and a tape
  /// node with the rule's pullback for each operand that is not a constant.
  template <class Rule, class... Xs>
  static R apply(const Rule& r, const Xs&... xs) {
    auto tape = detail::common_tape<T>(std::array<const R*, sizeof...(Xs)>{&xs...}, r.name());
    T y = r(xs.primal()...);
    if (!tape || !rules::differentiable(r, xs.primal()...)) return R(std::move(y));
    const int64_t id = tape->add_node();
    int which = 0;
    auto edge = [&](const R& x) {
      if (!x.is_constant()) add_edge(*tape, x, r.pullback(which, xs.primal()..., y));
      ++which;
    };
    (edge(xs), ...);
    return R(std::move(y), std::move(tape), id);
  }
  /// apply() for a rule with Rule::outputs results: the primals by the rule on T, and one tape
  /// node per floating output whose edges are the rule's pullbacks of that output
  /// (r.pullback(which, output, xs..., ys)). The vjp is linear in the outputs' cotangents, so
  /// the nodes' contributions add up to it, and an output that receives no cotangent never
  /// runs its pullbacks (the eigenvectors' 1 / (l_i - l_j) when only eigenvalues are used).
  template <class Rule, class... Xs>
  static std::array<R, Rule::outputs> apply_multi(const Rule& r, const Xs&... xs) {
    constexpr std::size_t K = Rule::outputs;
    auto tape = detail::common_tape<T>(std::array<const R*, sizeof...(Xs)>{&xs...}, r.name());
    std::array<T, K> ys = r(xs.primal()...);
    std::array<R, K> out;
    const bool record = tape && rules::differentiable(r, xs.primal()...);
    for (std::size_t k = 0; k < K; ++k) {
      if (!record || !is_floating(ys[k].dtype())) {
        out[k] = R(ys[k]);
        continue;
      }
      const int64_t id = tape->add_node();
      int which = 0;
      auto edge = [&](const R& x) {
        if (!x.is_constant()) add_edge(*tape, x, r.pullback(which, int(k), xs.primal()..., ys));
        ++which;
      };
      (edge(xs), ...);
      out[k] = R(ys[k], tape, id);
    }
    return out;
  }
  /// apply() for a rule whose operands come as one list (concat).
  template <class Rule>
  static R apply_list(const Rule& r, const std::vector<R>& xs) {
    std::vector<const R*> ptrs;
    std::vector<T> ys;
    for (const R& x : xs) ptrs.push_back(&x), ys.push_back(x.primal());
    auto tape = detail::common_tape<T>(ptrs, r.name());
    T y = r(ys);
    if (!tape) return R(std::move(y));
    std::vector<rules::Pullback<T>> pbs = r.pullbacks(ys, y);
    const int64_t id = tape->add_node();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (!xs[i].is_constant()) add_edge(*tape, xs[i], std::move(pbs[i]));
    }
    return R(std::move(y), std::move(tape), id);
  }

 private:
  /// Adds x's edge, with pullback pb, to the node `tape` records last.
  static void add_edge(Tape<T>& tape, const R& x, rules::Pullback<T> pb) {
    tape.add_edge(x.id(), std::move(pb.fn));
    for (const Tensor& t : pb.saved) tape.save(t);
  }
};

}  // namespace strata
