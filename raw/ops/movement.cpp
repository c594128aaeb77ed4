// SPDX-License-Identifier: MIT
// The movement primitives that copy (contiguous, reshape of a non-viewable
// layout, pad, concat, fold, cast): validation, allocation, the backend's kernel.
#include "raw/ops.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::fail;
using detail::full_for;
using detail::require_defined;
using detail::require_numeric;
using detail::require_same_device;
using detail::require_same_dtype;

static RawTensor contiguous_now(const RawTensor& x) {
  require_defined(x, "contiguous");
  if (x.is_contiguous()) return x;
  RawTensor out = empty(x.shape(), x.dtype(), x.device());
  backend_for(x.device()).copy(out, x);
  return out;
}

static RawTensor reshape_now(const RawTensor& x, const Shape& shape) {
  require_defined(x, "reshape");
  const Shape target = infer_reshape(shape, x.numel(), x.shape(), "reshape");
  if (auto view = x.layout().reshape_view(target)) return x.view(*view);
  return contiguous(x).view(Layout::contiguous(target));
}

static RawTensor pad_now(const RawTensor& x, const std::vector<std::pair<int64_t, int64_t>>& pads,
                         double value) {
  require_defined(x, "pad");
  if (static_cast<int64_t>(pads.size()) != x.ndim()) {
    fail<ShapeError>("pad", pads.size(), " (before, after) pairs given for a tensor of shape ",
                     x.shape(), " (needs one per axis)");
  }
  Shape shape = x.shape();
  for (std::size_t i = 0; i < pads.size(); ++i) {
    const auto [lo, hi] = pads[i];
    if (lo < 0 || hi < 0) {
      fail<ValueError>("pad", "padding (", lo, ", ", hi, ") on axis ", i, " is negative");
    }
    if (__builtin_add_overflow(shape[i], lo, &shape[i]) ||
        __builtin_add_overflow(shape[i], hi, &shape[i])) {
      fail<ValueError>("pad", "padded size of axis ", i, " overflows");
    }
  }
  RawTensor out = full_for(shape, value, x.dtype(), x.device(), "pad");
  RawTensor inner = out;
  for (std::size_t i = 0; i < pads.size(); ++i) {
    inner = inner.slice(static_cast<int64_t>(i), pads[i].first, pads[i].first + x.shape()[i]);
  }
  if (x.numel() > 0) backend_for(x.device()).copy(inner, x);
  return out;
}

static RawTensor concat_now(const std::vector<RawTensor>& xs, int64_t axis) {
  if (xs.empty()) fail<ValueError>("concat", "needs at least one tensor");
  for (const RawTensor& x : xs) require_defined(x, "concat");
  const RawTensor& first = xs.front();
  axis = normalize_axis(axis, first.shape(), "concat");
  Shape shape = first.shape();
  shape[axis] = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const RawTensor& x = xs[i];
    require_same_device(first, x, "concat");
    require_same_dtype(first, x, "concat");
    bool fits = x.ndim() == first.ndim();
    for (int64_t d = 0; fits && d < x.ndim(); ++d)
      fits = d == axis || x.shape()[d] == first.shape()[d];
    if (!fits) {
      fail<ShapeError>("concat", "tensor ", i, " has shape ", x.shape(), ", which does not match ",
                       first.shape(), " outside axis ", axis);
    }
    if (__builtin_add_overflow(shape[axis], x.shape()[axis], &shape[axis])) {
      fail<ValueError>("concat", "size of axis ", axis, " overflows");
    }
  }
  RawTensor out = empty(shape, first.dtype(), first.device(), "concat");
  int64_t at = 0;
  for (const RawTensor& x : xs) {
    const int64_t len = x.shape()[axis];
    if (x.numel() > 0) backend_for(x.device()).copy(out.slice(axis, at, at + len), x);
    at += len;
  }
  return out;
}

static RawTensor fold_now(const RawTensor& y, const Window& w, const Shape& spatial) {
  require_defined(y, "fold");
  require_numeric(y.dtype(), "fold");
  const Shape shape = fold_shape(y.shape(), w, spatial);
  RawTensor out = empty(shape, y.dtype(), y.device(), "fold");
  if (out.numel() > 0) backend_for(y.device()).fold(out, y, w);
  return out;
}

static RawTensor cast_now(const RawTensor& x, DType dtype) {
  require_defined(x, "cast");
  if (x.dtype() == dtype) return x;
  RawTensor out = empty(x.shape(), dtype, x.device());
  if (out.numel() > 0) backend_for(x.device()).copy(out, x);
  return out;
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

RawTensor contiguous(const RawTensor& x) {
  return trace::call("contiguous", Effect::pure, contiguous_now, x);
}

RawTensor reshape(const RawTensor& x, const Shape& shape) {
  return trace::call(
      "reshape", Effect::pure, [shape](const RawTensor& x) { return reshape_now(x, shape); }, x);
}

RawTensor pad(const RawTensor& x, const std::vector<std::pair<int64_t, int64_t>>& pads,
              double value) {
  if (!trace::recording()) return pad_now(x, pads, value);  // no copy of the pads
  // The fuser reads a pad's result through it (jit/fuse.hpp): what it pads, and with what.
  trace::Elementwise ew{trace::Elementwise::Kind::pad};
  for (const auto& p : pads) ew.before.push_back(p.first);
  ew.value = value;
  return trace::call_as(
      std::move(ew), "pad", Effect::pure,
      [pads, value](const RawTensor& x) { return pad_now(x, pads, value); }, x);
}

RawTensor concat(const std::vector<RawTensor>& xs, int64_t axis) {
  return trace::call_list(
      "concat",
      [axis](std::span<const RawTensor> xs) {
        return concat_now(std::vector<RawTensor>(xs.begin(), xs.end()), axis);
      },
      xs);
}

RawTensor fold(const RawTensor& y, const Window& w, const Shape& spatial) {
  return trace::call(
      "fold", Effect::pure, [w, spatial](const RawTensor& y) { return fold_now(y, w, spatial); },
      y);
}

RawTensor cast(const RawTensor& x, DType dtype) {
  return trace::call_as(
      {trace::Elementwise::Kind::cast, uint8_t(dtype)}, "cast", Effect::pure,
      [dtype](const RawTensor& x) { return cast_now(x, dtype); }, x);
}

}  // namespace strata::raw
