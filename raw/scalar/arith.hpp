// SPDX-License-Identifier: MIT
#pragma once
/// Scalar arithmetic with a defined result for every input, on both devices:
/// the casts (floats to integers saturate, NaN becomes 0), signed integer
/// arithmetic that wraps (two's complement, as in NumPy and PyTorch: signed
/// overflow would be undefined), arange's element, and the NaN test.
#include <math.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/hd.hpp"

namespace strata::detail::scalar {

/// v converted to T with a defined result for every input: floats to integers
/// saturate (NaN becomes 0), anything to bool is "!= 0".
template <class T, class S>
STRATA_HD T convert(S v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != S(0);
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<S>) {
    if (v != v) return T(0);
    if (v <= S(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= S(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// --- wrapping integer arithmetic (signed overflow would be undefined) ---------

template <class T>
using Wide = std::make_unsigned_t<T>;

/// a + b, wrapping for integers.
template <class T>
STRATA_HD T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(a) + Wide<T>(b));
  } else {
    return a + b;
  }
}
/// a - b, wrapping for integers.
template <class T>
STRATA_HD T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(a) - Wide<T>(b));
  } else {
    return a - b;
  }
}
/// a * b, wrapping for integers.
template <class T>
STRATA_HD T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(a) * Wide<T>(b));
  } else {
    return a * b;
  }
}
/// -a, wrapping for integers (-MIN is MIN).
template <class T>
STRATA_HD T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(0) - Wide<T>(a));
  } else {
    return -a;
  }
}
/// Element i of arange(start, step): start + i * step in double, the product and
/// the sum each rounded, on every device. nvcc would otherwise fuse them into one
/// FMA, whose single rounding gives 5.55e-17 instead of 0 for arange(-1, 1, 0.2)
/// at i = 5 (seen on the first GPU run).
STRATA_HD inline double arange_at(double start, double step, int64_t i) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(start, __dmul_rn(double(i), step));
#else
  return start + double(i) * step;
#endif
}

/// v is NaN (never, for integers and bool).
template <class T>
STRATA_HD bool is_nan(T v) {
  return v != v;
}

}  // namespace strata::detail::scalar
