// SPDX-License-Identifier: MIT
#pragma once
/// Helpers every backend's index_select / index_add kernels share.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/layout.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// idx (any device, i32 or i64) as host int64 positions normalised into
/// [0, size); IndexError names the bad entry, the axis and its size.
std::vector<int64_t> index_positions(const RawTensor& idx, int64_t axis, int64_t size,
                                     std::string_view op);

/// `l` without axis `axis`.
Layout drop_axis(const Layout& l, int64_t axis);

/// A layout of shape [P..., J, Q...] for t of shape [P..., idx dims..., Q...]
/// (t contiguous, so the index dims always fold into one).
Layout fold_index_dims(const RawTensor& t, int64_t axis, int64_t idx_ndim, int64_t J);

}  // namespace strata::detail
