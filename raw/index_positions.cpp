// SPDX-License-Identifier: MIT
// The front end's check and normalisation of index tensors. Both paths throw
// the same message for the same bad entry (the first in row-major order).
#include "raw/index_positions.hpp"

#include "core/error.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/ops.hpp"

namespace strata::detail {
namespace {

[[noreturn]] void out_of_range(int64_t value, int64_t entry, int64_t axis, int64_t size,
                               std::string_view op) {
  fail<IndexError>(op, "index ", value, " (entry ", entry,
                   " of the index tensor) is out of range for axis ", axis, " with size ", size);
}

void require_index_dtype(const RawTensor& idx, std::string_view op) {
  if (!is_integral(idx.dtype())) {
    fail<DTypeError>(op, "index tensor has dtype ", dtype_name(idx.dtype()), ", needs i32 or i64");
  }
}

}  // namespace

RawTensor index_positions(const RawTensor& idx, int64_t axis, int64_t size, std::string_view op) {
  return idx.device().is_cpu() ? host_index_positions(idx, axis, size, op)
                               : device_index_positions(idx, axis, size, op);
}

RawTensor host_index_positions(const RawTensor& idx, int64_t axis, int64_t size,
                               std::string_view op) {
  require_index_dtype(idx, op);
  if (!idx.device().is_cpu()) {
    fail<DeviceError>(op, "host_index_positions needs a CPU tensor, got ", to_string(idx.device()));
  }
  const RawTensor pos = raw::contiguous(raw::cast(idx, DType::i64));
  const int64_t n = pos.numel();
  const int64_t* v = static_cast<const int64_t*>(pos.storage()->data()) + pos.offset();
  // The common case, every entry in [0, size), in one vectorised pass; from the
  // first entry outside it, one by one.
  const int64_t first = vmath::first_outside(v, n, 0, size);
  if (first == n) return pos;
  for (int64_t j = first; j < n; ++j) {
    if (v[j] < -size || v[j] >= size) out_of_range(v[j], j, axis, size, op);
  }
  // Never write into the caller's tensor: a fresh buffer unless pos is a copy already.
  const RawTensor out =
      pos.storage() == idx.storage() ? raw::empty(pos.shape(), DType::i64, Device::cpu()) : pos;
  int64_t* w = static_cast<int64_t*>(out.storage()->data()) + out.offset();
  for (int64_t j = 0; j < n; ++j) w[j] = v[j] < 0 ? v[j] + size : v[j];
  return out;
}

RawTensor device_index_positions(const RawTensor& idx, int64_t axis, int64_t size,
                                 std::string_view op) {
  require_index_dtype(idx, op);
  const RawTensor i = raw::cast(idx, DType::i64);
  const Device device = i.device();
  const Shape& shape = i.shape();
  if (i.numel() == 0) return raw::contiguous(i);
  // 0 and size as broadcast scalars: fills on the device, or for a size a
  // double does not hold exactly (a broadcast axis past 2^53) a host copy.
  const RawTensor zero = raw::full({}, 0.0, DType::i64, device).expand(shape);
  const RawTensor n = (size <= (int64_t{1} << 53) ? raw::full({}, double(size), DType::i64, device)
                                                  : raw::from_host(&size, {}, DType::i64, device))
                          .expand(shape);
  // Normalise first: v < -size stays negative and v >= size stays >= size
  // (v + size cannot overflow for v < 0), so one [min, max] test is the check.
  const RawTensor pos =
      raw::where(raw::binary(BinaryOp::lt, i, zero), raw::binary(BinaryOp::add, i, n), i);
  const RawTensor flat = raw::reshape(pos, {1, -1});
  const RawTensor range = raw::concat(
      {raw::reduce(ReduceOp::min, flat, {1}), raw::reduce(ReduceOp::max, flat, {1})}, 0);
  int64_t lo_hi[2] = {0, 0};
  raw::to_host(range, lo_hi);
  if (lo_hi[0] >= 0 && lo_hi[1] < size) return pos;
  // The first bad entry (argmax picks the first true), for the message.
  const RawTensor bad = raw::binary(BinaryOp::logical_or, raw::binary(BinaryOp::lt, pos, zero),
                                    raw::binary(BinaryOp::ge, pos, n));
  int64_t entry = 0, value = 0;
  raw::to_host(raw::reduce(ReduceOp::argmax, raw::reshape(bad, {-1}), {0}), &entry);
  raw::to_host(raw::reshape(i, {-1}).select(0, entry), &value);
  out_of_range(value, entry, axis, size, op);
}

}  // namespace strata::detail
