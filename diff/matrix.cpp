// SPDX-License-Identifier: MIT
#include "diff/matrix.hpp"

namespace strata {

Tensor one_hot(const Tensor& idx, int64_t n, DType dtype) {
  if (n < 0) detail::fail<ValueError>("one_hot", "number of classes ", n, " is negative");
  if (!is_integral(idx.dtype())) {
    detail::fail<DTypeError>("one_hot", "indices have dtype ", dtype_name(idx.dtype()),
                             ", need i32 or i64");
  }
  const Tensor classes = arange(0, double(n), 1, idx.dtype(), idx.device());
  return cast(eq(unsqueeze(idx, -1), classes), dtype);
}

namespace detail {

Tensor band_mask(int64_t rows, int64_t cols, int64_t k, bool lower, Device device) {
  const Tensor r = unsqueeze(arange(0, double(rows), 1, i64, device), 1);
  const Tensor c = unsqueeze(arange(0, double(cols), 1, i64, device), 0);
  const Tensor diff = c - r;
  return lower ? (diff <= k) : (diff >= k);
}

}  // namespace detail
}  // namespace strata
