// SPDX-License-Identifier: MIT
#pragma once
/// How far the inputs of a random program's node lie from the points where its op is
/// not differentiable (the Gap of a row of tests/support/program_ops.hpp; program_guard
/// in random_program.cpp rejects a program with a node closer than 1e-3).
///
/// Exact ties of continuous ops are not counted: where two inputs of maximum or of a max
/// coincide exactly, they are the same function (a value duplicated by broadcasting or a
/// gather) or both constant (zeros of relu), and the op's rule splits the derivative
/// between them, which is then exact. Steps (cast(a > 0), where(a > 0, ...)) count exact
/// zeros: a value that is 0 by an identity is rounding noise on either side nearby.
#include <algorithm>
#include <cmath>
#include <limits>

#include <strata.hpp>

#include "support/program_draw.hpp"

namespace strata::testing::program {

/// The smallest nonzero |t| (+inf when every element is 0).
inline double nonzero_min(const Tensor& t) {
  double m = std::numeric_limits<double>::infinity();
  for (double v : t.to_vector<double>()) {
    if (v != 0) m = std::min(m, std::abs(v));
  }
  return m;
}
/// The smallest |t|, zeros included (+inf for an empty t).
inline double abs_min(const Tensor& t) {
  double m = std::numeric_limits<double>::infinity();
  for (double v : t.to_vector<double>()) m = std::min(m, std::abs(v));
  return m;
}
/// a's distance from 0 (relu, abs, sign): an exact 0 is harmless, as relu, abs and
/// a * sign(a) are continuous there and 0 is where a derivative of 0 is taken.
inline double gap_zero(const ProgNode&, const Tensor& a, const Tensor&) { return nonzero_min(a); }
/// a's distance from 0 for a step at 0 (cast(a > 0)), exact zeros included: a value that
/// is 0 by an identity (logsumexp(log_softmax(z))) is rounding noise around 0 nearby, on
/// either side of the step.
inline double gap_step(const ProgNode&, const Tensor& a, const Tensor&) { return abs_min(a); }
/// a's distance from b (maximum, minimum).
inline double gap_pair(const ProgNode&, const Tensor& a, const Tensor& b) {
  return nonzero_min(a - b);
}
/// where's conditions compare a with b (harmless where they coincide: the branches are
/// then equal), or a and b with 0 (steps, as cast(a > 0)).
inline double gap_where(const ProgNode& n, const Tensor& a, const Tensor& b) {
  if (n.k == 6 || n.k == 7) return std::min(abs_min(a), abs_min(b));
  return nonzero_min(a - b);
}
/// The distance of each maximum from the next value below it, over the reduced axes.
inline double gap_max(const ProgNode& n, const Tensor& a, const Tensor&) {
  return nonzero_min(max(a, n.dims, true) - a);
}
/// The same for a minimum.
inline double gap_min(const ProgNode& n, const Tensor& a, const Tensor&) {
  return nonzero_min(a - min(a, n.dims, true));
}
/// std is not differentiable where the variance is 0.
inline double gap_std(const ProgNode& n, const Tensor& a, const Tensor&) {
  return min(var(a, n.dims)).item<double>();
}
/// norm is not differentiable at 0.
inline double gap_norm(const ProgNode&, const Tensor& a, const Tensor&) {
  return norm(a).item<double>();
}
/// clamp's bounds.
inline double gap_clamp(const ProgNode& n, const Tensor& a, const Tensor&) {
  return std::min(nonzero_min(a - n.k), nonzero_min(a - double(n.ints[0]) / 4));
}

}  // namespace strata::testing::program
