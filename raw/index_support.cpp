// SPDX-License-Identifier: MIT
#include "raw/index_support.hpp"

#include "core/error.hpp"

namespace strata::detail {

Layout drop_axis(const Layout& l, int64_t axis) {
  Layout r = l;
  r.shape.erase(std::size_t(axis));
  r.strides.erase(std::size_t(axis));
  return r;
}

Layout fold_index_dims(const RawTensor& t, int64_t axis, int64_t idx_ndim, int64_t J) {
  Shape folded;
  for (int64_t d = 0; d < axis; ++d) folded.push_back(t.shape()[d]);
  folded.push_back(J);
  for (int64_t d = axis + idx_ndim; d < t.ndim(); ++d) folded.push_back(t.shape()[d]);
  auto view = t.layout().reshape_view(folded);
  if (!view) fail<ValueError>("index", "internal: index dims of ", t.shape(), " do not fold");
  return *view;
}

}  // namespace strata::detail
