// SPDX-License-Identifier: MIT
// The reductions: axes checked and sorted, the result allocated (kept axes of
// size 1), then the device backend's kernel.
#include "raw/ops.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::fail;
using detail::require_defined;

static RawTensor reduce_now(ReduceOp op, const RawTensor& x, const Shape& axes, bool keepdims) {
  const std::string_view name = op_name(op);
  require_defined(x, name);
  Shape sorted;
  for (int64_t a : axes) sorted.push_back(normalize_axis(a, x.shape(), name));
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      fail<IndexError>(name, "axis ", sorted[i], " repeated in axes ", axes, " (shape ", x.shape(),
                       ")");
    }
  }
  Shape kept = x.shape();
  int64_t reduced = 1;
  for (int64_t a : sorted) reduced *= x.shape()[a], kept[a] = 1;
  if (op != ReduceOp::sum && reduced == 0) {
    fail<ValueError>(name, "cannot reduce over an empty axis (shape ", x.shape(), ", axes ", axes,
                     ")");
  }
  DType out_dtype = x.dtype();
  if (op == ReduceOp::sum && !is_floating(x.dtype())) out_dtype = DType::i64;
  if (op == ReduceOp::argmax || op == ReduceOp::argmin) out_dtype = DType::i64;
  RawTensor out = empty(kept, out_dtype, x.device());
  if (out.numel() > 0) {
    if (reduced == 0) {
      backend_for(x.device()).fill(out, 0.0);
    } else {
      backend_for(x.device()).reduce(op, out, x, sorted);
    }
  }
  if (keepdims) return out;
  Shape squeezed;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (!std::binary_search(sorted.begin(), sorted.end(), i)) squeezed.push_back(x.shape()[i]);
  }
  return out.view(Layout::contiguous(squeezed));
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

// Whether axes (unchecked: any error is reduce_now's to report) name the last k >= 1 axes of
// a rank-ndim tensor: such a reduction may end a plan's fused chain.
static bool trailing_axes(const Shape& axes, int64_t ndim) {
  if (ndim < 1 || ndim > 64) return false;
  uint64_t named = 0;  // bit d: axis d is reduced
  for (int64_t a : axes) {
    if (a < -ndim || a >= ndim) return false;
    named |= uint64_t{1} << (a < 0 ? a + ndim : a);
  }
  // The named bits are exactly bits [d, ndim) for the lowest named axis d.
  const uint64_t all = ndim == 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  const uint64_t lowest = named & (~named + 1);
  return named != 0 && named == (all & ~(lowest - 1));
}

RawTensor reduce(ReduceOp op, const RawTensor& x, const Shape& axes, bool keepdims) {
  // Only a recording needs to know (the check is not free on the eager path).
  const bool trailing = trace::recording() && trailing_axes(axes, x.ndim());
  const trace::Elementwise ew{
      trailing ? trace::Elementwise::Kind::reduce : trace::Elementwise::Kind::none, uint8_t(op)};
  return trace::call_as(
      ew, "reduce", Effect::pure,
      [op, axes, keepdims](const RawTensor& x) { return reduce_now(op, x, axes, keepdims); }, x);
}

}  // namespace strata::raw
