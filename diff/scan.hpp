// SPDX-License-Identifier: MIT
#pragma once
/// Running sums and products along an axis: cumsum and cumprod (numpy.cumsum,
/// numpy.cumprod). Both are one composite scan over the Diffable primitives, so
/// they run and differentiate at every level; cumprod's derivative comes from the
/// products themselves (no division by x), so it is exact where x has zeros.
#include <cstdint>
#include <optional>

#include "diff/movement.hpp"

namespace strata {

namespace detail {

/// Pads for one axis of a rank-r tensor: (before, after) on `axis`, nothing elsewhere.
inline Pads pads_on(int64_t rank, int64_t axis, int64_t before, int64_t after) {
  Pads p(std::size_t(rank), {0, 0});
  p[std::size_t(axis)] = {before, after};
  return p;
}

/// x shifted by k positions along `axis` (k < n): `unit` in the first k, x's first n - k after.
template <Diffable T>
T shift_in(const T& x, int64_t axis, int64_t k, double unit) {
  const int64_t n = x.shape()[std::size_t(axis)];
  return pad(slice(x, axis, 0, n - k), pads_on(x.shape().ndim(), axis, k, 0), unit);
}

/// The inclusive scan of x along `axis` (normalised) with the associative `op` (add or mul)
/// whose identity is `unit`. A short axis takes ceil(log2 n) shifted combines (Hillis and
/// Steele); a long one combines neighbouring pairs, scans the half-length result and
/// interleaves (Blelloch's work-efficient recursion), so the work stays O(n) and the depth
/// O(log n): each level reads half as many elements as the one before.
template <Diffable T>
T scan(const T& x, int64_t axis, BinaryOp op, double unit) {
  const Shape s = x.shape();
  const int64_t n = s[std::size_t(axis)];
  constexpr int64_t kShort = 16;  // below this, fewer ops beat less work
  if (n <= kShort) {
    T y = x;
    for (int64_t k = 1; k < n; k *= 2) y = binary(op, y, shift_in(y, axis, k, unit));
    return y;
  }
  if (n % 2 == 1) {  // one identity element at the end makes the pairs whole
    const T padded = pad(x, pads_on(s.ndim(), axis, 0, 1), unit);
    return slice(scan(padded, axis, op, unit), axis, 0, n);
  }
  Shape pairs = s;
  pairs[std::size_t(axis)] = n / 2;
  pairs.insert(std::size_t(axis) + 1, 2);
  const T xp = reshape(x, pairs);  // [..., n/2, 2, ...]
  const T even = squeeze(slice(xp, axis + 1, 0, 1), axis + 1);
  const T odd = squeeze(slice(xp, axis + 1, 1, 2), axis + 1);
  // Position 2i + 1 of the result is the scan of the pair sums at i; position 2i adds x_2i
  // to the scan of the pair sums before i.
  const T upto_odd = scan(binary(op, even, odd), axis, op, unit);
  const T upto_even = binary(op, shift_in(upto_odd, axis, 1, unit), even);
  return reshape(stack({upto_even, upto_odd}, axis + 1), s);
}

/// The scan of x along `axis`, or of x flattened when axis is absent (numpy's axis=None).
template <Diffable T>
T scan_along(const T& x, std::optional<int64_t> axis, BinaryOp op, double unit,
             std::string_view name) {
  // Bools and i32 run in i64, as numpy and PyTorch do (numpy.cumsum of a mask gives counts).
  const bool widen = x.dtype() == DType::b8 || x.dtype() == DType::i32;
  const T v = widen ? T(Prims<T>::cast(x, DType::i64)) : x;
  if (!axis) return scan(reshape(v, {-1}), 0, op, unit);
  if (v.shape().ndim() == 0) {
    detail::fail<IndexError>(name, "axis ", *axis, " is out of range for a 0-d tensor");
  }
  return scan(v, normalize_axis(*axis, v.shape(), name), op, unit);
}

}  // namespace detail

/// The running sum of x along `axis` (numpy.cumsum): element i is x_0 + ... + x_i. Without an
/// axis, the running sum of x flattened (row-major), as numpy's axis=None. Bools and i32 give
/// i64. Differentiable (its transpose is the running sum from the other end). Throws
/// IndexError for an axis out of range. Example: `st::cumsum(x, 1)`, `x.cumsum(-1)`.
template <Diffable T>
T cumsum(const T& x, std::optional<int64_t> axis = std::nullopt) {
  return detail::scan_along(x, axis, BinaryOp::add, 0.0, "cumsum");
}

/// The running product of x along `axis` (numpy.cumprod): element i is x_0 * ... * x_i. Without
/// an axis, the running product of x flattened; bools and i32 give i64. Differentiable and
/// exact where x has zeros: the derivative is built from the partial products, never by
/// dividing by x. Throws IndexError for an axis out of range. Example: a power table
/// `st::cumprod(t.expand({n, m}), 1)`.
template <Diffable T>
T cumprod(const T& x, std::optional<int64_t> axis = std::nullopt) {
  return detail::scan_along(x, axis, BinaryOp::mul, 1.0, "cumprod");
}

// --- the Ops mixin's methods ------------------------------------------------------------
template <class D>
D Ops<D>::cumsum(std::optional<int64_t> axis) const {
  return strata::cumsum(self(), axis);
}
template <class D>
D Ops<D>::cumprod(std::optional<int64_t> axis) const {
  return strata::cumprod(self(), axis);
}

}  // namespace strata
