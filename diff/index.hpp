// SPDX-License-Identifier: MIT
#pragma once
/// NumPy-style indexing on every Diffable type (DESIGN §4, NEP 21, reference/003):
///
///   x.ix(...)   basic: integers, st::slice(start, stop, step), st::all,
///               st::newaxis, st::ellipsis. Always a zero-copy view.
///   x.oix(...)  outer: basic entries plus integer index tensors (the index's
///               shape replaces its axis, in place) and bool masks (a mask over
///               k axes replaces them by one axis of its true positions, in
///               row-major order). Each tensor index acts on its own axis.
///   x.vix(...)  vectorized: integer index tensors (and masks, as their true
///               positions) broadcast together; their broadcast dims come first,
///               then the remaining dims in order.
///
/// Every form also takes a std::vector<st::Index> built at run time. Integer
/// tensors may be i32 or i64; negative entries count from the end. Fancy
/// indices lower to index_select (whose derivative is index_add, so repeated
/// indices accumulate their gradients): the cost is proportional to the output.
///
/// st::take(x, idx, axis) is the gather along one axis by itself (numpy.take).
///
/// This header needs only the Diffable primitives (diff/tensor.hpp): it includes no
/// composite header, and diff/ops.hpp includes it.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "diff/tensor.hpp"

namespace strata {

/// Python's start:stop:step; an absent bound is st::none (std::nullopt). Made by
/// st::slice; bounds clamp to the axis like Python's, negative ones count from the end.
struct Slice {
  std::optional<int64_t> start;  ///< first position (none: the start, or the end when step < 0)
  std::optional<int64_t> stop;   ///< one past the last position (none: through the end)
  int64_t step = 1;              ///< stride between positions; negative walks backwards, never 0
};
/// An absent slice bound, or an axis left unmapped in st::vmap: `st::slice(st::none, 3)`.
inline constexpr std::nullopt_t none = std::nullopt;
/// The index entry start:stop:step, for ix, oix and vix; a view for every step. A step of 0
/// throws ValueError when the index is applied. Example: `x.ix(st::slice(1, st::none, 2))`
/// is Python's x[1::2]; `x.ix(st::slice(st::none, st::none, -1))` reverses the first axis.
inline Slice slice(std::optional<int64_t> start = std::nullopt,
                   std::optional<int64_t> stop = std::nullopt, int64_t step = 1) {
  return Slice{start, stop, step};
}
/// The type of st::all.
struct All {};
/// A whole axis (Python's `:`): `x.ix(st::all, 0)` is column 0.
inline constexpr All all{};
/// The type of st::newaxis.
struct NewAxis {};
/// A new axis of size 1 (numpy.newaxis): `v.ix(st::newaxis, st::all)` turns [n] into [1, n].
inline constexpr NewAxis newaxis{};
/// The type of st::ellipsis.
struct Ellipsis {};
/// As many whole axes as needed (Python's `...`); at most one per index (IndexError for
/// two). Example: `x.ix(st::ellipsis, 0)` takes position 0 of the last axis.
inline constexpr Ellipsis ellipsis{};

/// One entry of an index: an integer, a slice, all, newaxis, ellipsis, or a
/// tensor (integer positions or a bool mask; oix and vix only). Converts implicitly from
/// each, so a spec built at run time reads
/// `std::vector<st::Index> spec{st::Index(1), st::Index(st::slice(0, 2)), st::Index(i)};`
class Index {
 public:
  /// An integer position (negative counts from the end); it removes its axis.
  template <class I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) Index(I i) : v_(int64_t(i)) {}
  /// Deleted: a bool scalar is neither a position nor a mask (use a bool tensor for a mask).
  Index(bool) = delete;
  /// A slice start:stop:step (st::slice); it keeps its axis.
  Index(Slice s) : v_(s) {}
  /// A whole axis (st::all).
  Index(All a) : v_(a) {}
  /// A new axis of size 1 (st::newaxis).
  Index(NewAxis n) : v_(n) {}
  /// As many whole axes as needed (st::ellipsis).
  Index(Ellipsis e) : v_(e) {}
  /// An i32 / i64 tensor of positions, or a bool mask (oix and vix only; ix throws
  /// IndexError for a tensor entry).
  Index(Tensor t) : v_(std::move(t)) {}

  /// The entry, as the alternative it was made from.
  const std::variant<int64_t, Slice, All, NewAxis, Ellipsis, Tensor>& value() const { return v_; }

 private:
  std::variant<int64_t, Slice, All, NewAxis, Ellipsis, Tensor> v_;
};

namespace detail {

enum class IndexMode { basic, outer, vectorized };

/// One step of an index plan, in the order it applies to the tensor.
struct IndexStep {
  enum Kind { integer, slice, whole, newaxis, tensor, mask } kind;
  int64_t axis = 0;       // axis of the source tensor it consumes (messages)
  int64_t value = 0;      // integer: the position (validated); whole: how many axes
  Slice range;            // slice
  Tensor positions;       // tensor: i64 in-range positions; mask: its true positions
  int64_t mask_ndim = 0;  // mask: how many axes it covers
};

/// Validates `spec` against `shape` (ellipsis, counts, dtypes, ranges, mask
/// shapes) and returns the steps, each consuming its axes left to right.
std::vector<IndexStep> plan_index(const Shape& shape, const std::vector<Index>& spec,
                                  IndexMode mode, Device device);

/// The flat positions into the row-major merge of axes of sizes `sizes` for
/// index tensors broadcast together (vix with several tensors).
Tensor flat_positions(const std::vector<Tensor>& idx, const std::vector<int64_t>& sizes);

std::string_view index_op_name(IndexMode mode);

/// Applies a plan: basic steps as views, then the fancy ones as index_select.
template <Diffable T>
T apply_index(const T& x, const std::vector<Index>& spec, IndexMode mode) {
  const std::vector<IndexStep> steps = plan_index(x.shape(), spec, mode, x.device());
  T y = x;
  struct Fancy {
    int64_t at;  // axis of y it replaces
    Tensor idx;
    int64_t size;  // size of that axis
  };
  std::vector<Fancy> fancy;
  int64_t at = 0;
  for (const IndexStep& s : steps) {
    switch (s.kind) {
      case IndexStep::integer: {
        Shape dropped = y.shape();
        dropped.erase(std::size_t(at));
        y = Prims<T>::reshape(Prims<T>::slice(y, at, s.value, s.value + 1, 1), dropped);
        break;
      }
      case IndexStep::slice:
        y = Prims<T>::slice(y, at, s.range.start, s.range.stop, s.range.step);
        ++at;
        break;
      case IndexStep::whole:
        at += s.value;
        break;
      case IndexStep::newaxis: {
        Shape grown = y.shape();
        grown.insert(std::size_t(at), 1);
        y = Prims<T>::reshape(y, grown);
        ++at;
        break;
      }
      case IndexStep::mask: {
        // Merge the covered axes into one (a view when the strides allow it).
        const Shape& ys = y.shape();
        Shape merged;
        int64_t n = 1;
        for (int64_t d = 0; d < at; ++d) merged.push_back(ys[d]);
        for (int64_t d = at; d < at + s.mask_ndim; ++d) n *= ys[d];
        merged.push_back(n);
        for (int64_t d = at + s.mask_ndim; d < ys.ndim(); ++d) merged.push_back(ys[d]);
        y = Prims<T>::reshape(y, merged);
        fancy.push_back({at, s.positions, n});
        ++at;
        break;
      }
      case IndexStep::tensor:
        fancy.push_back({at, s.positions, y.shape()[at]});
        ++at;
        break;
    }
  }
  if (fancy.empty()) return y;

  if (mode == IndexMode::outer) {
    // Each index replaces its own axis. Apply the most shrinking first, so no
    // intermediate grows beyond the larger of the input and the output.
    std::vector<std::size_t> order(fancy.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      // idx_a / size_a < idx_b / size_b, without dividing (sizes may be 0).
      return fancy[a].idx.numel() * fancy[b].size < fancy[b].idx.numel() * fancy[a].size;
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
      const Fancy& f = fancy[order[k]];
      y = Prims<T>::index_select(y, f.at, f.idx);
      // Axes after this one shift by the index's extra dims.
      for (std::size_t j = k + 1; j < order.size(); ++j) {
        if (fancy[order[j]].at > f.at) fancy[order[j]].at += f.idx.ndim() - 1;
      }
    }
    return y;
  }

  // Vectorized: the indexed axes go first, merged into one when there are
  // several, and one gather with the broadcast flat positions replaces them.
  const int64_t n = y.shape().ndim();
  Shape dims;
  for (const Fancy& f : fancy) dims.push_back(f.at);
  for (int64_t d = 0; d < n; ++d) {
    bool indexed = false;
    for (const Fancy& f : fancy) indexed = indexed || f.at == d;
    if (!indexed) dims.push_back(d);
  }
  bool identity = true;
  for (int64_t d = 0; d < n; ++d) identity = identity && dims[std::size_t(d)] == d;
  if (!identity) y = Prims<T>::permute(y, dims);
  if (fancy.size() == 1) return Prims<T>::index_select(y, 0, fancy.front().idx);
  std::vector<Tensor> idx;
  std::vector<int64_t> sizes;
  Shape merged{1};
  for (const Fancy& f : fancy) {
    idx.push_back(f.idx);
    sizes.push_back(f.size);
    merged[0] *= f.size;
  }
  for (int64_t d = int64_t(fancy.size()); d < n; ++d) merged.push_back(y.shape()[d]);
  y = Prims<T>::reshape(y, merged);
  return Prims<T>::index_select(y, 0, flat_positions(idx, sizes));
}

}  // namespace detail

/// Basic indexing, x[spec] with integers, slices, all, newaxis and ellipsis: always a
/// zero-copy view. Each integer removes its axis, each slice keeps it. Throws IndexError
/// for a position out of range, too many entries, two ellipses or a tensor entry.
/// Example: `st::ix(x, {0, st::slice(1, 3)})`, or `x.ix(0, st::slice(1, 3))`.
template <Diffable T>
T ix(const T& x, const std::vector<Index>& spec) {
  return detail::apply_index(x, spec, detail::IndexMode::basic);
}
/// Outer indexing (NumPy's np.ix_ style): basic entries plus integer index tensors, each
/// replacing its own axis by the index's shape, and bool masks over k axes, replaced by
/// one axis of their true positions. Differentiable (repeated positions accumulate
/// gradients). Throws IndexError for out-of-range positions or mask shapes that do not
/// match, DTypeError for a float index tensor. Example: `x.oix(rows, cols)` for i64 `rows`
/// [2] and `cols` [3] gives [2, 3].
template <Diffable T>
T oix(const T& x, const std::vector<Index>& spec) {
  return detail::apply_index(x, spec, detail::IndexMode::outer);
}
/// Vectorized indexing (NumPy's fancy indexing, with the indexed dims first): integer
/// index tensors (and masks, as their true positions) broadcast together and pick one
/// element per broadcast position; their broadcast dims come first, then the remaining
/// axes. Throws like oix, and IndexError when the index tensors do not broadcast.
/// Example: `x.vix(rows, cols)` for i64 `rows` and `cols` of shape [k] gives [k].
template <Diffable T>
T vix(const T& x, const std::vector<Index>& spec) {
  return detail::apply_index(x, spec, detail::IndexMode::vectorized);
}

/// The positions idx along `axis` (numpy.take with an axis, torch.index_select): idx is
/// a plain i32 or i64 tensor of any shape whose dims replace that axis, and negative
/// entries (and a negative axis) count from the end. It is the index_select primitive,
/// differentiable at every level (repeated positions accumulate their gradients, through
/// index_add), so its errors name index_select: IndexError for a position or an axis out
/// of range or a rank-0 x, DTypeError for a non-integer idx, DeviceError for an idx on
/// another device. Example: `st::take(table, ids, 0)` looks up the rows of a [n, d]
/// table at ids of shape [b, s], giving [b, s, d].
template <Diffable T>
T take(const T& x, const Tensor& idx, int64_t axis) {
  return Prims<T>::index_select(x, axis, idx);
}

// --- the Ops mixin's methods ---------------------------------------------------------
template <class D>
D Ops<D>::ix(const std::vector<Index>& spec) const {
  return strata::ix(self(), spec);
}
template <class D>
template <class... I>
D Ops<D>::ix(const I&... idx) const {
  return strata::ix(self(), std::vector<Index>{Index(idx)...});
}
template <class D>
D Ops<D>::oix(const std::vector<Index>& spec) const {
  return strata::oix(self(), spec);
}
template <class D>
template <class... I>
D Ops<D>::oix(const I&... idx) const {
  return strata::oix(self(), std::vector<Index>{Index(idx)...});
}
template <class D>
D Ops<D>::vix(const std::vector<Index>& spec) const {
  return strata::vix(self(), spec);
}
template <class D>
template <class... I>
D Ops<D>::vix(const I&... idx) const {
  return strata::vix(self(), std::vector<Index>{Index(idx)...});
}

template <class D>
D Ops<D>::take(const Tensor& idx, int64_t axis) const {
  return strata::take(self(), idx, axis);
}

}  // namespace strata
