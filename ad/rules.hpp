// SPDX-License-Identifier: MIT
#pragma once
/// The calculus of every differentiable primitive, one rule object each
/// (ad/rules/*.hpp, by family), consumed generically by Forward<T> (jvp),
/// Reverse<T> (vjp) and Batched<T> (batching): detail::RulePrims (ad/level.hpp) spells each
/// primitive once, as a line that builds its rule and hands it to the level's apply.
///
/// A rule is built from the primitive's non-differentiable parameters (an
/// op, axes, a shape, indices, a mask) and offers, for operands xs... of any
/// Diffable level T:
///
///   r(xs...)                     the primitive itself on T
///   Rule::linear                 true when the primitive is linear in its operands
///                                jointly: its jvp is then r applied to the tangents
///                                (zeros for a constant operand), for free
///   r.jvp(which, xs..., y, t)    otherwise, the jvp's term for operand `which`
///   r.pullback(which, xs..., y)  the vjp for operand `which`: a Pullback, the map
///                                from the output's cotangent to that operand's
///                                contribution, capturing only the rule's residuals,
///                                with the plain values the tape version-checks
///   r.batch(vs...)               the batching rule: one call of the primitive on T
///                                for a whole batch of Batched<T> operands
///   r.differentiable(xs...)      optional: false where no derivative flows
///                                (sign, an integer cast)
///   r.name()                     the primitive's name, for errors
///
/// Concat takes its operands as one list (r(xs), r.pullbacks(xs, y) and
/// r.batch(vs) on vectors). A rule with several outputs declares `outputs = K`; its r, jvp
/// and batch return arrays of K values and its pullback(which, output, xs..., ys) takes the
/// output's index (docs/adding_a_primitive.md). rules::Select is where with a condition of level T
/// (batched under st::vmap) instead of a plain tensor. Rules are written in Diffable ops on T, so
/// they are differentiable too: that is what makes Forward<Reverse<T>>, Reverse<Reverse<T>>, ...
/// work, to any order.
#include "ad/rules/conv.hpp"
#include "ad/rules/elementwise.hpp"
#include "ad/rules/factor.hpp"
#include "ad/rules/index.hpp"
#include "ad/rules/matmul.hpp"
#include "ad/rules/movement.hpp"
#include "ad/rules/reduce.hpp"
#include "ad/rules/select.hpp"
#include "ad/rules/spectral.hpp"
#include "ad/rules/windows.hpp"

namespace strata::rules {

/// Whether a derivative flows through `r` at these primal operands: r.differentiable(xs...)
/// where the rule says, true otherwise.
template <class Rule, class... Xs>
bool differentiable(const Rule& r, const Xs&... xs) {
  if constexpr (requires { r.differentiable(xs...); }) {
    return r.differentiable(xs...);
  } else {
    return true;
  }
}

}  // namespace strata::rules
