// SPDX-License-Identifier: MIT
#pragma once
/// What a rule's pullback keeps for the backward pass: its residuals.
#include <functional>
#include <optional>
#include <vector>

#include "diff/ops.hpp"

namespace strata::rules {

/// The values a derivative rule reads besides the tangent or cotangent: its
/// residuals. Reverse<T> keeps exactly these on the tape (and version-checks
/// exactly these), so a chain of adds keeps nothing alive and writing into an
/// add's input after recording is harmless.
enum Keep : unsigned {
  keep_nothing = 0,
  keep_a = 1,    ///< the first (or only) input
  keep_b = 2,    ///< the second input
  keep_out = 4,  ///< the output
};

/// One residual of a pullback: the value when its rule reads it, nothing when it does not.
template <Diffable T>
class Kept {
 public:
  /// `v` when `keep`, else nothing.
  Kept(bool keep, const T& v) {
    if (keep) v_ = v;
  }
  /// The value, or an empty T for one the rule does not read.
  const T& operator*() const {
    static const T none{};
    return v_ ? *v_ : none;
  }
  /// Appends the plain value underneath (for the tape's version check) when kept.
  void save_into(std::vector<Tensor>& saved) const {
    if (v_) saved.push_back(detail::stored(*v_));
  }

 private:
  std::optional<T> v_;
};

/// A rule's vjp for one operand: the map from the output's cotangent to the
/// operand's contribution (capturing only the rule's residuals), and the
/// plain values under those residuals, which the tape version-checks so that
/// an in-place write to one after recording is reported, not silently used.
template <Diffable T>
struct Pullback {
  std::function<T(const T&)> fn;  ///< cotangent of the output -> the operand's contribution
  std::vector<Tensor> saved;      ///< the plain values `fn` reads
};

}  // namespace strata::rules
