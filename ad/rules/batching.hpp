// SPDX-License-Identifier: MIT
#pragma once
/// The helpers of the batching rules: the batch size of several operands and
/// a per-example axis as an axis of the batched value.
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "diff/ops.hpp"

namespace strata {

template <Diffable T>
class Batched;

namespace detail {
/// [n, ...shape]: a shape with a leading batch axis.
inline Shape with_batch(int64_t n, const Shape& shape) {
  Shape s{n};
  for (int64_t d : shape) s.push_back(d);
  return s;
}
}  // namespace detail

/// The helpers of the batching rules (ad/rules/*.hpp) on Batched<T> values.
namespace rules::batching {

/// `v` as a batched value (its leading axis the batch axis).
template <Diffable T>
Batched<T> batched(T v) {
  return Batched<T>(std::move(v), true);
}

/// The common batch size of the batched operands (0 when none is batched).
template <Diffable T>
int64_t batch_of(std::span<const Batched<T>* const> xs) {
  int64_t n = 0;
  for (const Batched<T>* x : xs) {
    if (!x->batched()) continue;
    if (n != 0 && x->batch_size() != n) {
      detail::fail<ShapeError>("batch", "batch sizes ", n, " and ", x->batch_size(),
                               " do not match");
    }
    n = x->batch_size();
  }
  return n;
}
/// The common batch size of the batched operands (0 when none is batched).
template <Diffable T>
int64_t batch_of(std::initializer_list<const Batched<T>*> xs) {
  return batch_of<T>(std::span<const Batched<T>* const>(xs.begin(), xs.size()));
}

/// A per-example axis of x as an axis of x's batched form.
template <Diffable T>
int64_t batch_axis(const Batched<T>& x, int64_t axis, std::string_view op) {
  return normalize_axis(axis, x.ndim(), op) + 1;
}

/// A per-example axis of x as a physical one.
template <Diffable T>
int64_t shift(const Batched<T>& x, int64_t axis, std::string_view op) {
  return x.batched() ? batch_axis(x, axis, op) : axis;
}

/// f(), a primitive on x's batched form along the physical axis of x's per-example `axis`,
/// with an IndexError that names the physical axis ("... for axis 2 with size 3", from
/// raw/index_positions.cpp) naming the example's instead, as without st::vmap.
template <Diffable T, class F>
auto with_example_axis(const Batched<T>& x, int64_t axis, std::string_view op, F&& f)
    -> decltype(f()) {
  try {
    return f();
  } catch (const IndexError& e) {
    const int64_t own = normalize_axis(axis, x.ndim(), op);
    std::string m = e.what();
    const std::string seen = "for axis " + std::to_string(own + 1) + " with";
    const std::size_t at = m.find(seen);
    if (at == std::string::npos) throw;
    m.replace(at, seen.size(), "for axis " + std::to_string(own) + " with");
    throw IndexError(m);
  }
}

/// Per-example axes of x as physical ones.
template <Diffable T>
Shape shifted(const Batched<T>& x, const Shape& axes, std::string_view op) {
  Shape s;
  for (int64_t a : axes) s.push_back(shift(x, a, op));
  return s;
}

/// x as [n, 1..., ...shape] of rank `rank` + 1: the batch axis first (an unbatched x broadcast
/// over it, a zero-stride view) and size-1 dims before x's own, so that the per-example batch
/// dims of operands of different ranks line up as they broadcast.
template <Diffable T>
T aligned(const Batched<T>& x, int64_t n, int64_t rank) {
  Shape s;
  for (int64_t i = x.ndim(); i < rank; ++i) s.push_back(1);
  for (int64_t d : x.shape()) s.push_back(d);
  return Prims<T>::reshape(x.as_batch(n), detail::with_batch(n, s));
}

}  // namespace rules::batching
}  // namespace strata
