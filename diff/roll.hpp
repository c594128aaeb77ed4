// SPDX-License-Identifier: MIT
#pragma once
/// roll: the elements of a tensor rotated along an axis (numpy.roll).
#include <cstdint>
#include <optional>

#include "diff/movement.hpp"

namespace strata {

/// x with its elements shifted by `shift` positions along `axis`, those pushed past the end
/// coming back at the start (numpy.roll): element i of the result is x[(i - shift) mod n], so
/// `st::roll(y, 1)` puts y's last element first. A negative shift rolls the other way. Without
/// an axis, x is rolled flattened (row-major) and keeps its shape, as numpy's axis=None. Two
/// slices and a concat, so it is differentiable at every level. Throws IndexError for an axis
/// out of range. Example: the left neighbour of every element, `st::roll(y, 1, 0)`.
template <Diffable T>
T roll(const T& x, int64_t shift, std::optional<int64_t> axis = std::nullopt) {
  if (!axis) return reshape(roll(reshape(x, {-1}), shift, int64_t{0}), x.shape());
  if (x.shape().ndim() == 0) {
    detail::fail<IndexError>("roll", "axis ", *axis, " is out of range for a 0-d tensor");
  }
  const int64_t a = normalize_axis(*axis, x.shape(), "roll");
  const int64_t n = x.shape()[std::size_t(a)];
  if (n == 0) return x;
  const int64_t k = ((shift % n) + n) % n;
  if (k == 0) return x;
  return concat({slice(x, a, n - k, n), slice(x, a, 0, n - k)}, a);
}

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::roll(int64_t shift, std::optional<int64_t> axis) const {
  return strata::roll(self(), shift, axis);
}

}  // namespace strata
