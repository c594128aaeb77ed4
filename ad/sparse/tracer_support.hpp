// SPDX-License-Identifier: MIT
#pragma once
/// What the sparsity tracer's primitives share (ad/sparse/tracer.cpp, tracer_movement.cpp,
/// tracer_linalg.cpp; defined in tracer_support.cpp): the checks that mirror the raw
/// primitives' own, and the positions trick by which the movement ops learn where each
/// element goes.
#include <string_view>
#include <vector>

#include "ad/sparse/tracer.hpp"
#include "raw/ops/checks.hpp"

namespace strata::detail::sparsity {

using S = SparsityTracer;  ///< the level

/// DeviceError unless a and b are on one device (raw's check, raw/ops/checks.hpp).
inline void require_same_device(const S& a, const S& b, std::string_view op) {
  detail::require_same_device(a.device(), b.device(), op);
}
/// DTypeError unless a and b have one dtype (raw's check).
inline void require_same_dtype(const S& a, const S& b, std::string_view op) {
  detail::require_same_dtype(a.dtype(), b.dtype(), op);
}
using detail::require_float;  ///< DTypeError unless the dtype is f32 or f64 (raw's check)

/// DeviceError, DTypeError or ShapeError unless where's condition (its dtype and shape) and
/// branches fit: a bool condition, one shape for all three, one dtype and device for a and b.
void require_where_operands(DType cond_dtype, const Shape& cond_shape, const S& a, const S& b);

/// The positions offset, offset + 1, ... as an i64 tensor of `shape` on the CPU: a movement
/// op applied to it says, for each output element, which input element it holds.
Tensor positions(const Shape& shape, int64_t offset = 0);
/// The elements of an i64 tensor, row-major.
std::vector<int64_t> host_positions(const Tensor& t);

/// A traced value of `shape` with x's dtype and device, whose sets are x's at the positions
/// `from` (one per element of shape; -1: none).
S moved(const S& x, const Shape& shape, const std::vector<int64_t>& from);

/// The index of each element of a [batch, rows, cols] value's matrix: i / (rows * cols).
std::vector<int64_t> matrix_of_each(int64_t batch, int64_t rows, int64_t cols);

}  // namespace strata::detail::sparsity
