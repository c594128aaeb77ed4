// SPDX-License-Identifier: MIT
// The batched matrix product: shapes checked and broadcast over the batch
// axes, then the device backend's matmul.
#include "raw/ops.hpp"

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::fail;
using detail::require_defined;
using detail::require_numeric;
using detail::require_same_device;
using detail::require_same_dtype;

static RawTensor matmul_now(const RawTensor& a, const RawTensor& b) {
  require_defined(a, "matmul");
  require_defined(b, "matmul");
  require_same_device(a, b, "matmul");
  if (a.ndim() < 2 || b.ndim() < 2) {
    fail<ShapeError>("matmul", "operands need rank >= 2, got shapes ", a.shape(), " and ",
                     b.shape(), " (use the composite st::matmul for vectors)");
  }
  require_same_dtype(a, b, "matmul");
  require_numeric(a.dtype(), "matmul");
  const int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1];
  const int64_t k2 = b.shape()[b.ndim() - 2], n = b.shape()[b.ndim() - 1];
  if (k != k2) {
    fail<ShapeError>("matmul", "shapes ", a.shape(), " and ", b.shape(), " do not fit (inner dims ",
                     k, " vs ", k2, ")");
  }
  Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape = batch, a_shape = batch, b_shape = batch;
  out_shape.push_back(m), out_shape.push_back(n);
  a_shape.push_back(m), a_shape.push_back(k);
  b_shape.push_back(k), b_shape.push_back(n);
  RawTensor out = empty(out_shape, a.dtype(), a.device(), "matmul");
  if (out.numel() == 0) return out;
  if (k == 0) {
    backend_for(a.device()).fill(out, 0.0);
    return out;
  }
  backend_for(a.device()).matmul(out, a.expand(a_shape), b.expand(b_shape));
  return out;
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

RawTensor matmul(const RawTensor& a, const RawTensor& b) {
  return trace::call("matmul", Effect::pure, matmul_now, a, b);
}

}  // namespace strata::raw
