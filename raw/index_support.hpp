// SPDX-License-Identifier: MIT
#pragma once
/// Layout helpers every backend's index_select / index_add kernels share. The
/// indices themselves are checked and normalised by the front end
/// (raw/index_positions.hpp) before a backend sees them.
#include <cstdint>

#include "core/layout.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// `l` without axis `axis`.
Layout drop_axis(const Layout& l, int64_t axis);

/// A layout of shape [P..., J, Q...] for t of shape [P..., idx dims..., Q...]
/// (t contiguous, so the index dims always fold into one).
Layout fold_index_dims(const RawTensor& t, int64_t axis, int64_t idx_ndim, int64_t J);

}  // namespace strata::detail
