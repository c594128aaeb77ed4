// SPDX-License-Identifier: MIT
#include "diff/dropout.hpp"

#include <cmath>

#include "diff/comparison.hpp"
#include "diff/movement.hpp"

namespace strata {

Tensor bernoulli(Key key, double p, const Shape& shape, Device device) {
  if (!(p >= 0 && p <= 1)) {
    detail::fail<ValueError>("bernoulli", "p = ", p, " is not a probability in [0, 1]");
  }
  return rand(shape, key.bits(), f64, device) < p;
}

namespace detail {

Tensor dropout_scale(Key key, double p, const Shape& shape, DType dtype, Device device) {
  if (!(p >= 0 && p < 1)) {
    fail<ValueError>("dropout", "p = ", p, " must be in [0, 1) (the probability of zeroing an ",
                     "element; p = 1 would zero everything: leave the dropout out instead)");
  }
  if (p == 0) return Tensor();
  const Tensor keep = logical_not(bernoulli(key, p, shape, device));
  // 1 / (1 - p) rounded once in dtype, as torch's noise.div_(1 - p).
  return cast(keep, dtype) / full({}, 1 - p, dtype, device);
}

}  // namespace detail
}  // namespace strata
