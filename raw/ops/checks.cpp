// SPDX-License-Identifier: MIT
#include "raw/ops/checks.hpp"

#include "raw/backend.hpp"
#include "raw/ops.hpp"

namespace strata::detail {

void require_defined(const RawTensor& x, std::string_view op) {
  if (!x.defined()) fail<ValueError>(op, "undefined tensor (default-constructed)");
}

void require_same_device(Device a, Device b, std::string_view op) {
  if (a != b) {
    fail<DeviceError>(op, "tensors are on different devices (", to_string(a), " and ", to_string(b),
                      "); move one with .to(device)");
  }
}

void require_same_shape(const Shape& a, const Shape& b, std::string_view op) {
  if (a != b) {
    fail<ShapeError>(op, "shapes ", a, " and ", b, " differ (the primitive does not broadcast)");
  }
}

void require_same_dtype(DType a, DType b, std::string_view op) {
  if (a != b) {
    fail<DTypeError>(op, "dtypes ", dtype_name(a), " and ", dtype_name(b),
                     " differ (cast one first)");
  }
}

void require_float(DType t, std::string_view op) {
  if (!is_floating(t)) {
    fail<DTypeError>(op, "dtype ", dtype_name(t), " is not supported (needs f32 or f64)");
  }
}

void require_numeric(DType t, std::string_view op) {
  if (t == DType::b8) fail<DTypeError>(op, "dtype bool is not supported (cast to a number)");
}

void require_bool(DType t, std::string_view op) {
  if (t != DType::b8)
    fail<DTypeError>(op, "dtype ", dtype_name(t), " is not supported (needs bool)");
}

void require_writable(const RawTensor& dst, std::string_view op) {
  for (int64_t i = 0; i < dst.ndim(); ++i) {
    if (dst.strides()[i] == 0 && dst.shape()[i] > 1) {
      fail<ValueError>(op, "cannot write in place to a broadcast view (shape ", dst.shape(),
                       ", strides ", dst.strides(), ")");
    }
  }
}

void require_nonzero_divisor(const RawTensor& b) {
  const RawTensor zero = raw::full({}, 0.0, b.dtype(), b.device()).expand(b.shape());
  bool found = false;
  raw::to_host(raw::reduce(ReduceOp::max, raw::binary(BinaryOp::eq, b, zero), all_axes(b.ndim())),
               &found);
  if (found) fail<ValueError>("div", "integer division by zero");
}

RawTensor unaliased(const RawTensor& dst, const RawTensor& src) {
  if (src.storage() == dst.storage() &&
      !(src.layout().strides == dst.layout().strides && src.offset() == dst.offset())) {
    RawTensor copy = raw::empty(src.shape(), src.dtype(), src.device());
    backend_for(src.device()).copy(copy, src);
    return copy;
  }
  return src;
}

Shape all_axes(int64_t ndim) {
  Shape axes;
  for (int64_t d = 0; d < ndim; ++d) axes.push_back(d);
  return axes;
}

RawTensor full_for(const Shape& shape, double value, DType dtype, Device device,
                   std::string_view op) {
  RawTensor out = raw::empty(shape, dtype, device, op);
  if (out.numel() > 0) backend_for(device).fill(out, value);
  return out;
}

}  // namespace strata::detail
