// SPDX-License-Identifier: MIT
#include "diff/matrix.hpp"

#include <string>

#include "diff/reductions.hpp"
#include "raw/trace.hpp"

namespace strata {

Tensor one_hot(const Tensor& idx, int64_t n, DType dtype) {
  if (n < 0) detail::fail<ValueError>("one_hot", "number of classes ", n, " is negative");
  detail::check_positions(idx, n, "one_hot");
  const Tensor classes = arange(0, double(n), 1, idx.dtype(), idx.device());
  return cast(eq(unsqueeze(idx, -1), classes), dtype);
}

namespace detail {

void check_positions(const Tensor& idx, int64_t n, std::string_view op) {
  if (!idx.defined()) fail<ValueError>(op, "undefined index tensor");
  if (idx.dtype() != i32 && idx.dtype() != i64) {
    fail<DTypeError>(op, "indices have dtype ", dtype_name(idx.dtype()), ", need i32 or i64");
  }
  if (idx.numel() == 0) return;
  // Reads the indices: an effect, so that a jit plan checks them again on every call.
  raw::trace::effect(op, {idx.raw()}, [n, op = std::string(op)](auto in) {
    const Tensor i(in[0]);
    const int64_t lo = min(i).item<int64_t>(), hi = max(i).item<int64_t>();
    if (lo < 0 || hi >= n) {
      fail<IndexError>(op, "index ", lo < 0 ? lo : hi, " is out of range [0, ", n,
                       ") (indices of shape ", i.shape(), ")");
    }
  });
}

Tensor band_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device) {
  const Tensor r = unsqueeze(arange(0, double(rows), 1, i64, device), 1);
  const Tensor c = unsqueeze(arange(0, double(cols), 1, i64, device), 0);
  const Tensor diff = c - r;
  return lower ? (diff <= k) : (diff >= k);
}

}  // namespace detail
}  // namespace strata
