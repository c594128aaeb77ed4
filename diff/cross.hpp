// SPDX-License-Identifier: MIT
#pragma once
/// cross: the cross product of 3-vectors (numpy.cross).
#include <cstdint>

#include "diff/arithmetic.hpp"
#include "diff/movement.hpp"

namespace strata {

/// The cross product a x b of the 3-vectors along `axis` (numpy.cross with axis=): the operands
/// broadcast together (NumPy rules, mixed levels and dtypes like `a * b`), and that axis must have
/// size 3 in the broadcast shape. A composite of slices, products and a concat, so it is
/// differentiable at every level. Throws ShapeError when the axis does not have size 3 or the
/// shapes do not broadcast, IndexError for an axis out of range. Example: the velocity of a
/// rotating point, `st::cross(omega, r)`; for rows of [n, 3] matrices `st::cross(a, b, 1)`.
template <class A, class B>
requires detail::Operands<A, B> &&
    (!Scalar<A>)&&(!Scalar<B>)common_level_t<A, B> cross(const A& a, const B& b,
                                                         int64_t axis = -1) {
  auto [x, y] = detail::operands(a, b, "cross");
  using R = decltype(x);
  if (x.shape().ndim() == 0) {
    detail::fail<ShapeError>("cross", "needs vectors of 3 elements, got 0-d operands");
  }
  const int64_t ax = normalize_axis(axis, x.shape(), "cross");
  if (x.shape()[std::size_t(ax)] != 3) {
    detail::fail<ShapeError>("cross", "axis ", axis, " of the broadcast shape ", x.shape(),
                             " has size ", x.shape()[std::size_t(ax)], ", not 3");
  }
  auto c = [ax](const R& v, int64_t i) { return slice(v, ax, i, i + 1); };
  return concat({c(x, 1) * c(y, 2) - c(x, 2) * c(y, 1), c(x, 2) * c(y, 0) - c(x, 0) * c(y, 2),
                 c(x, 0) * c(y, 1) - c(x, 1) * c(y, 0)},
                ax);
}

}  // namespace strata
