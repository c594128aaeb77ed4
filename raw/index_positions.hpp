// SPDX-License-Identifier: MIT
#pragma once
/// The front end's one check of an index tensor (raw::index_select and
/// raw::index_add): range-checked and normalised here, once, so that no
/// backend reads indices back to validate them.
#include <cstdint>
#include <string_view>

#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// idx (i32 or i64, any shape and layout, on any device) as a contiguous i64
/// tensor of idx's shape on idx's device, every entry normalised into
/// [0, size) (a negative entry v becomes v + size). An entry outside
/// [-size, size) throws IndexError naming its value, its row-major position
/// in idx, the axis and its size. Dispatches to host_index_positions on the
/// CPU and to device_index_positions elsewhere; an empty idx gives an empty
/// tensor.
RawTensor index_positions(const RawTensor& idx, int64_t axis, int64_t size, std::string_view op);

/// index_positions by one pass over host memory (CPU tensors only): no
/// temporaries beyond one i64 copy, and none when idx is already contiguous
/// i64 with no negative entries.
RawTensor host_index_positions(const RawTensor& idx, int64_t axis, int64_t size,
                               std::string_view op);

/// index_positions in raw ops on idx's own device (where, add, comparisons,
/// min/max reductions). Reads back 16 bytes (the normalised minimum and
/// maximum) to decide; only a failing check reads more (the position and
/// value of the first bad entry, for the message). Works on every device.
RawTensor device_index_positions(const RawTensor& idx, int64_t axis, int64_t size,
                                 std::string_view op);

}  // namespace strata::detail
