// SPDX-License-Identifier: MIT
// The elementwise primitives (unary, binary, where): validation and the
// result's allocation, then the device backend's kernel.
#include "raw/ops.hpp"

#include <string_view>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::check_dtype;
using detail::fail;
using detail::require_defined;
using detail::require_nonzero_divisor;
using detail::require_same_device;
using detail::require_same_dtype;
using detail::require_same_shape;

static RawTensor unary_now(UnaryOp op, const RawTensor& x) {
  require_defined(x, op_name(op));
  check_dtype(op, x.dtype());
  RawTensor out = empty(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) backend_for(x.device()).unary(op, out, x);
  return out;
}

static RawTensor binary_now(BinaryOp op, const RawTensor& a, const RawTensor& b) {
  const std::string_view name = op_name(op);
  require_defined(a, name);
  require_defined(b, name);
  require_same_device(a, b, name);
  require_same_shape(a, b, name);
  require_same_dtype(a, b, name);
  check_dtype(op, a.dtype());
  if (op == BinaryOp::div && is_integral(a.dtype()) && a.numel() > 0) require_nonzero_divisor(b);
  const DType out_dtype = is_comparison(op) ? DType::b8 : a.dtype();
  RawTensor out = empty(a.shape(), out_dtype, a.device());
  if (out.numel() > 0) backend_for(a.device()).binary(op, out, a, b);
  return out;
}

static RawTensor where_now(const RawTensor& cond, const RawTensor& a, const RawTensor& b) {
  for (const RawTensor* t : {&cond, &a, &b}) require_defined(*t, "where");
  require_same_device(cond, a, "where");
  require_same_device(a, b, "where");
  if (cond.dtype() != DType::b8) {
    fail<DTypeError>("where", "condition has dtype ", dtype_name(cond.dtype()), ", needs bool");
  }
  if (cond.shape() != a.shape() || a.shape() != b.shape()) {
    fail<ShapeError>("where", "shapes ", cond.shape(), ", ", a.shape(), " and ", b.shape(),
                     " differ (the primitive does not broadcast)");
  }
  require_same_dtype(a, b, "where");
  RawTensor out = empty(a.shape(), a.dtype(), a.device());
  if (out.numel() > 0) backend_for(a.device()).where(out, cond, a, b);
  return out;
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

RawTensor unary(UnaryOp op, const RawTensor& x) {
  return trace::call_as(
      {trace::Elementwise::Kind::unary, uint8_t(op)}, op_name(op), Effect::pure,
      [op](const RawTensor& x) { return unary_now(op, x); }, x);
}

RawTensor binary(BinaryOp op, const RawTensor& a, const RawTensor& b) {
  return trace::call_as(
      {trace::Elementwise::Kind::binary, uint8_t(op)}, op_name(op), Effect::pure,
      [op](const RawTensor& a, const RawTensor& b) { return binary_now(op, a, b); }, a, b);
}

RawTensor where(const RawTensor& cond, const RawTensor& a, const RawTensor& b) {
  return trace::call_as({trace::Elementwise::Kind::where}, "where", Effect::pure, where_now, cond,
                        a, b);
}

}  // namespace strata::raw
