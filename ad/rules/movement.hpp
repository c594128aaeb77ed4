// SPDX-License-Identifier: MIT
#pragma once
/// The rules of the movement primitives, all linear: permute, expand,
/// reshape, slice, pad, concat.
#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ad/rules/batching.hpp"
#include "ad/rules/residuals.hpp"

namespace strata::rules {

/// The inverse of a permutation.
inline Shape inverse_permutation(const Shape& dims) {
  Shape inv(dims.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    inv[std::size_t(normalize_axis(dims[i], dims.ndim(), "permute"))] = int64_t(i);
  }
  return inv;
}

/// The first position and the count of the positions a slice picks along an axis of size n
/// (Python's slice.indices, as Layout::slice clamps them).
inline std::pair<int64_t, int64_t> slice_span(int64_t n, std::optional<int64_t> start,
                                              std::optional<int64_t> stop, int64_t step) {
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    const int64_t i = *v < 0 ? *v + n : *v;
    return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t b = clamp(start, step > 0 ? 0 : n - 1);
  const int64_t e = clamp(stop, step > 0 ? n : -1);
  int64_t len = 0;
  if (step > 0 && e > b) len = (e - b - 1) / step + 1;
  if (step < 0 && b > e) len = (e - b + 1) / step + 1;
  return {b, len};
}

/// The transpose of slice(x, axis, start, stop, step) for x of shape `in`: ct placed at the
/// sliced positions of zeros, built from pad, reshape and slice only (a pad is one pass over
/// the output; a scatter into materialised zeros was three, plus an index table per call):
/// a step of k spaces the elements out with k - 1 zeros after each, a negative step first
/// reverses ct (a view). Pad and slice are each other's transposes, so higher orders stay cheap.
template <Diffable T>
T unslice(const T& ct, int64_t ax, const Shape& in, std::optional<int64_t> start,
          std::optional<int64_t> stop, int64_t step) {
  const int64_t n = in[std::size_t(ax)];
  auto [first, len] = slice_span(n, start, stop, step);
  if (len == 0) return detail::filled<T>(0.0, in, ct.dtype(), ct.device());
  T c = ct;
  const int64_t k = step > 0 ? step : -step;
  if (step < 0) {
    c = Prims<T>::slice(c, ax, std::nullopt, std::nullopt, -1);
    first += (len - 1) * step;  // the lowest position picked
  }
  const int64_t rank = in.ndim();
  if (k > 1 && len > 1) {
    Shape spaced = c.shape();
    spaced.insert(std::size_t(ax) + 1, 1);
    Pads gap(std::size_t(rank + 1), {0, 0});
    gap[std::size_t(ax) + 1] = {0, k - 1};
    c = Prims<T>::pad(Prims<T>::reshape(c, spaced), gap);  // [..., len, k, ...]
    Shape merged = c.shape();
    merged[std::size_t(ax)] = len * k;
    merged.erase(std::size_t(ax) + 1);
    c = Prims<T>::slice(Prims<T>::reshape(c, merged), ax, 0, (len - 1) * k + 1, 1);
  }
  const int64_t span = (len - 1) * k + 1;
  Pads around(std::size_t(rank), {0, 0});
  around[std::size_t(ax)] = {first, n - first - span};
  return Prims<T>::pad(c, around);
}

/// The primitive `permute(x, dims)`.
struct Permute {
  Shape dims;                           ///< the new order of x's axes
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent

  /// "permute", for errors.
  std::string_view name() const { return "permute"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::permute(x, dims);
  }
  /// The transpose: the inverse permutation.
  template <Diffable T>
  Pullback<T> pullback(int, const T&, const T&) const {
    return {[inv = inverse_permutation(dims)](const T& ct) { return Prims<T>::permute(ct, inv); },
            {}};
  }
  /// The batching rule: the batch axis stays first.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::permute(x.value(), dims));
    if (dims.ndim() != x.ndim()) {
      detail::fail<ShapeError>("permute", "dims ", dims, " do not match the shape ", x.shape());
    }
    Shape d{0};
    for (int64_t a : batching::shifted(x, dims, "permute")) d.push_back(a);
    return batching::batched(Prims<T>::permute(x.value(), d));
  }
};

/// The primitive `expand(x, shape)` (broadcast to `shape`).
struct Expand {
  Shape shape;                          ///< the shape broadcast to
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent

  /// "expand", for errors.
  std::string_view name() const { return "expand"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::expand(x, shape);
  }
  /// The transpose: the cotangent summed back to x's shape.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[in = x.shape()](const T& ct) { return sum_to(ct, in); }, {}};
  }
  /// The batching rule: axes the expansion adds go after the batch axis.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::expand(x.value(), shape));
    const Shape in = x.shape();
    const int64_t lead = shape.ndim() - in.ndim();
    if (lead < 0) {
      detail::fail<ShapeError>("expand", "cannot broadcast shape ", in, " to ", shape,
                               " (fewer dims)");
    }
    Shape padded;
    for (int64_t i = 0; i < lead; ++i) padded.push_back(1);
    for (int64_t d : in) padded.push_back(d);
    const int64_t n = x.batch_size();
    return batching::batched(Prims<T>::expand(
        Prims<T>::reshape(x.value(), detail::with_batch(n, padded)), detail::with_batch(n, shape)));
  }
};

/// The primitive `reshape(x, shape)`.
struct Reshape {
  Shape shape;                          ///< the new shape
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent

  /// "reshape", for errors.
  std::string_view name() const { return "reshape"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::reshape(x, shape);
  }
  /// The transpose: the cotangent reshaped back.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[in = x.shape()](const T& ct) { return Prims<T>::reshape(ct, in); }, {}};
  }
  /// The batching rule: the batch axis stays first.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::reshape(x.value(), shape));
    // A -1 is resolved against one example: with the batch axis in front, a batch of 0
    // examples would leave it undetermined.
    const Shape example = x.shape();
    const Shape one = infer_reshape(shape, checked_numel(example, "reshape"), example, "reshape");
    T r = Prims<T>::reshape(x.value(), detail::with_batch(x.batch_size(), one));
    // Reshaping the examples keeps each one's elements in order: still the identity basis.
    return x.is_identity() ? Batched<T>::identity(std::move(r)) : batching::batched(std::move(r));
  }
};

/// The primitive `slice(x, axis, start, stop, step)`.
struct Slice {
  int64_t axis;                         ///< the sliced axis
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent
  std::optional<int64_t> start;         ///< first position (the start if none)
  std::optional<int64_t> stop;          ///< end position (the end if none)
  int64_t step;                         ///< stride

  /// "slice", for errors.
  std::string_view name() const { return "slice"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::slice(x, axis, start, stop, step);
  }
  /// The transpose: the cotangent at the sliced positions of zeros of x's shape (unslice).
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    const int64_t ax = normalize_axis(axis, x.shape(), "slice");
    return {[ax, in = x.shape(), start = start, stop = stop, step = step](const T& ct) {
              return unslice(ct, ax, in, start, stop, step);
            },
            {}};
  }
  /// The batching rule: the axis shifts past the batch axis.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::slice(x.value(), axis, start, stop, step));
    return batching::batched(
        Prims<T>::slice(x.value(), batching::shift(x, axis, "slice"), start, stop, step));
  }
};

/// The primitive `pad(x, pads)` (zeros before and after each axis).
struct Pad {
  Pads pads;                            ///< (before, after) per axis
  static constexpr bool linear = true;  ///< its jvp is the primitive applied to the tangent

  /// "pad", for errors.
  std::string_view name() const { return "pad"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const T& x) const {
    return Prims<T>::pad(x, pads);
  }
  /// The transpose: the interior of the cotangent.
  template <Diffable T>
  Pullback<T> pullback(int, const T& x, const T&) const {
    return {[pads = pads, in = x.shape()](const T& ct) {
              T c = ct;
              for (std::size_t i = 0; i < pads.size(); ++i) {
                c = Prims<T>::slice(c, int64_t(i), pads[i].first, pads[i].first + in[i], 1);
              }
              return c;
            },
            {}};
  }
  /// The batching rule: the batch axis is not padded.
  template <Diffable T>
  Batched<T> batch(const Batched<T>& x) const {
    if (!x.batched()) return Batched<T>(Prims<T>::pad(x.value(), pads));
    Pads p{{0, 0}};
    p.insert(p.end(), pads.begin(), pads.end());
    return batching::batched(Prims<T>::pad(x.value(), p));
  }
};

/// The primitive `concat(xs, axis)`, linear in every operand; its operands come as a list.
struct Concat {
  int64_t axis;                         ///< the joined axis
  static constexpr bool linear = true;  ///< its jvp is the concat of the tangents

  /// "concat", for errors.
  std::string_view name() const { return "concat"; }
  /// The primitive on T.
  template <Diffable T>
  T operator()(const std::vector<T>& xs) const {
    return Prims<T>::concat(xs, axis);
  }
  /// The transposes, one per operand: each operand's slice of the cotangent.
  template <Diffable T>
  std::vector<Pullback<T>> pullbacks(const std::vector<T>& xs, const T& y) const {
    const int64_t ax = normalize_axis(axis, y.shape(), "concat");
    std::vector<Pullback<T>> out;
    int64_t at = 0;
    for (const T& x : xs) {
      const int64_t len = x.shape()[std::size_t(ax)];
      out.push_back(
          {[ax, at, len](const T& ct) { return Prims<T>::slice(ct, ax, at, at + len, 1); }, {}});
      at += len;
    }
    return out;
  }
  /// The batching rule: unbatched operands are broadcast, the axis shifts past the batch axis.
  template <Diffable T>
  Batched<T> batch(const std::vector<Batched<T>>& xs) const {
    std::vector<const Batched<T>*> ptrs;
    for (const Batched<T>& x : xs) ptrs.push_back(&x);
    const int64_t n = batching::batch_of<T>(std::span<const Batched<T>* const>(ptrs));
    std::vector<T> vs;
    for (const Batched<T>& x : xs) vs.push_back(n > 0 ? x.as_batch(n) : x.value());
    if (n == 0) return Batched<T>(Prims<T>::concat(vs, axis));
    return batching::batched(Prims<T>::concat(vs, batching::batch_axis(xs[0], axis, "concat")));
  }
};

}  // namespace strata::rules
