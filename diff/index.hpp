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
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "diff/ops.hpp"

namespace strata {

/// Python's start:stop:step; an absent bound is st::none (std::nullopt).
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
inline constexpr std::nullopt_t none = std::nullopt;
inline Slice slice(std::optional<int64_t> start = std::nullopt,
                   std::optional<int64_t> stop = std::nullopt, int64_t step = 1) {
  return Slice{start, stop, step};
}
/// A whole axis (Python's `:`).
struct All {};
inline constexpr All all{};
/// A new axis of size 1 (numpy.newaxis).
struct NewAxis {};
inline constexpr NewAxis newaxis{};
/// As many whole axes as needed (Python's `...`); at most one per index.
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

/// One entry of an index: an integer, a slice, all, newaxis, ellipsis, or a
/// tensor (integer positions or a bool mask; oix and vix only).
class Index {
 public:
  template <class I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) Index(I i) : v_(int64_t(i)) {}
  Index(bool) = delete;  // a bool scalar is neither a position nor a mask: say which
  Index(Slice s) : v_(s) {}
  Index(All a) : v_(a) {}
  Index(NewAxis n) : v_(n) {}
  Index(Ellipsis e) : v_(e) {}
  Index(Tensor t) : v_(std::move(t)) {}

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

/// Basic indexing: a zero-copy view.
template <Diffable T>
T ix(const T& x, const std::vector<Index>& spec) {
  return detail::apply_index(x, spec, detail::IndexMode::basic);
}
/// Outer indexing: each tensor index replaces its own axis.
template <Diffable T>
T oix(const T& x, const std::vector<Index>& spec) {
  return detail::apply_index(x, spec, detail::IndexMode::outer);
}
/// Vectorized indexing: tensor indices broadcast together; their dims come first.
template <Diffable T>
T vix(const T& x, const std::vector<Index>& spec) {
  return detail::apply_index(x, spec, detail::IndexMode::vectorized);
}

// --- the Ops mixin's methods ---------------------------------------------------------
#define STRATA_INDEX_METHOD(name)                                   \
  template <class D>                                                \
  D Ops<D>::name(const std::vector<Index>& spec) const {            \
    return strata::name(self(), spec);                              \
  }                                                                 \
  template <class D>                                                \
  template <class... I>                                             \
  D Ops<D>::name(const I&... idx) const {                           \
    return strata::name(self(), std::vector<Index>{Index(idx)...}); \
  }
STRATA_INDEX_METHOD(ix)
STRATA_INDEX_METHOD(oix)
STRATA_INDEX_METHOD(vix)
#undef STRATA_INDEX_METHOD

}  // namespace strata
