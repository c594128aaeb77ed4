// SPDX-License-Identifier: MIT
#pragma once
/// The front end's shared argument checks (raw/ops/*.cpp, and the levels that check
/// shapes without a RawTensor, such as ad/sparse's tracer): each throws the st::Error
/// subclass that names the op, the values and the fix, so that no backend checks its
/// arguments again.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "raw/primitives.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// x holds a tensor (not a default-constructed RawTensor).
void require_defined(const RawTensor& x, std::string_view op);
/// a and b are on one device.
void require_same_device(Device a, Device b, std::string_view op);
/// a and b are one shape (the primitives do not broadcast).
void require_same_shape(const Shape& a, const Shape& b, std::string_view op);
/// a and b are one dtype (the primitives do not promote).
void require_same_dtype(DType a, DType b, std::string_view op);
/// a and b are on one device.
inline void require_same_device(const RawTensor& a, const RawTensor& b, std::string_view op) {
  require_same_device(a.device(), b.device(), op);
}
/// a and b have one shape (the primitives do not broadcast).
inline void require_same_shape(const RawTensor& a, const RawTensor& b, std::string_view op) {
  require_same_shape(a.shape(), b.shape(), op);
}
/// a and b have one dtype (the primitives do not promote).
inline void require_same_dtype(const RawTensor& a, const RawTensor& b, std::string_view op) {
  require_same_dtype(a.dtype(), b.dtype(), op);
}
/// t is f32 or f64.
void require_float(DType t, std::string_view op);
/// t is a number (not bool).
void require_numeric(DType t, std::string_view op);
/// t is bool.
void require_bool(DType t, std::string_view op);
/// dst may be written in place: no broadcast (zero-stride) axis of size > 1.
void require_writable(const RawTensor& dst, std::string_view op);

/// The dtype check of an op table row: its dtype class admits t.
template <class Op>
void check_dtype(Op op, DType t) {
  const OpInfo<Op>& row = op_info(op);
  switch (row.dtypes) {
    case DTypeClass::floating:
      return require_float(t, row.name);
    case DTypeClass::numeric:
      return require_numeric(t, row.name);
    case DTypeClass::boolean:
      return require_bool(t, row.name);
    case DTypeClass::any:
      return;
  }
}

/// Integer division has no value for a zero divisor: checked here, before any
/// backend runs, so kernels on every device divide without a check.
void require_nonzero_divisor(const RawTensor& b);

/// src itself, or a private copy when it shares dst's storage under another
/// layout (an in-place op then reads no element it has already written).
RawTensor unaliased(const RawTensor& dst, const RawTensor& src);

/// 0, 1, ..., ndim - 1.
Shape all_axes(int64_t ndim);

/// raw::full() whose errors name op.
RawTensor full_for(const Shape& shape, double value, DType dtype, Device device,
                   std::string_view op);

}  // namespace strata::detail
