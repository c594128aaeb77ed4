// SPDX-License-Identifier: MIT
// index_select and index_add: the index tensor checked and normalised once
// (raw/index_positions.hpp), then the device backend's kernel.
#include "raw/ops.hpp"

#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/index_positions.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::fail;
using detail::require_defined;
using detail::require_numeric;
using detail::require_same_device;
using detail::require_same_dtype;

static Shape index_result_shape(const RawTensor& x, int64_t axis, const RawTensor& idx,
                                std::string_view op) {
  if (!is_integral(idx.dtype())) {
    fail<DTypeError>(op, "index tensor has dtype ", dtype_name(idx.dtype()), ", needs i32 or i64");
  }
  Shape shape;
  for (int64_t d = 0; d < axis; ++d) shape.push_back(x.shape()[d]);
  for (int64_t d : idx.shape()) shape.push_back(d);
  for (int64_t d = axis + 1; d < x.ndim(); ++d) shape.push_back(x.shape()[d]);
  checked_numel(shape, op);
  return shape;
}

static RawTensor index_select_now(const RawTensor& x, int64_t axis, const RawTensor& idx) {
  require_defined(x, "index_select");
  require_defined(idx, "index_select");
  require_same_device(x, idx, "index_select");
  if (x.ndim() == 0) fail<IndexError>("index_select", "cannot index a rank-0 tensor");
  axis = normalize_axis(axis, x.shape(), "index_select");
  RawTensor out = empty(index_result_shape(x, axis, idx, "index_select"), x.dtype(), x.device(),
                        "index_select");
  // Checked even when the result is empty; the backend gets [0, size) positions.
  const RawTensor pos = detail::index_positions(idx, axis, x.shape()[axis], "index_select");
  if (out.numel() > 0) backend_for(x.device()).index_select(out, x, axis, pos);
  return out;
}

static RawTensor index_add_now(const RawTensor& x, int64_t axis, const RawTensor& idx,
                               const RawTensor& src) {
  for (const RawTensor* t : {&x, &idx, &src}) require_defined(*t, "index_add");
  require_same_device(x, idx, "index_add");
  require_same_device(x, src, "index_add");
  if (x.ndim() == 0) fail<IndexError>("index_add", "cannot index a rank-0 tensor");
  axis = normalize_axis(axis, x.shape(), "index_add");
  const Shape expected = index_result_shape(x, axis, idx, "index_add");
  if (src.shape() != expected) {
    fail<ShapeError>("index_add", "source has shape ", src.shape(), ", expected ", expected,
                     " (base ", x.shape(), " with axis ", axis, " replaced by index shape ",
                     idx.shape(), ")");
  }
  require_same_dtype(x, src, "index_add");
  require_numeric(x.dtype(), "index_add");
  const RawTensor pos = detail::index_positions(idx, axis, x.shape()[axis], "index_add");
  RawTensor out = empty(x.shape(), x.dtype(), x.device(), "index_add");
  Backend& be = backend_for(x.device());
  if (out.numel() > 0) {
    // A broadcast float scalar base (the zero of a backward pass) is a fill,
    // not a copy (exact: f32 and f64 values round-trip through double).
    bool scalar = is_floating(x.dtype());
    for (int64_t s : x.strides()) scalar = scalar && s == 0;
    if (scalar) {
      RawTensor first = x;
      while (first.ndim() > 0) first = first.select(0, 0);
      double v = 0;
      to_host(cast(first, DType::f64), &v);
      be.fill(out, v);
    } else {
      be.copy(out, x);
    }
  }
  if (src.numel() > 0) be.index_add(out, axis, pos, contiguous(src));
  return out;
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

RawTensor index_select(const RawTensor& x, int64_t axis, const RawTensor& idx) {
  return trace::call(
      "index_select", Effect::pure,
      [axis](const RawTensor& x, const RawTensor& idx) { return index_select_now(x, axis, idx); },
      x, idx);
}

RawTensor index_add(const RawTensor& x, int64_t axis, const RawTensor& idx, const RawTensor& src) {
  return trace::call(
      "index_add", Effect::pure,
      [axis](const RawTensor& x, const RawTensor& idx, const RawTensor& src) {
        return index_add_now(x, axis, idx, src);
      },
      x, idx, src);
}

}  // namespace strata::raw
