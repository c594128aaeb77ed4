// SPDX-License-Identifier: MIT
#pragma once
/// Test support: bit-for-bit equality of two tensors, for results that must be eager's exact
/// bits (a jit plan's replay, a kernel run on another instruction set).
#include "diff/tensor.hpp"
#include "support/naive.hpp"

namespace strata::testing {

/// True when a and b have the same shape and dtype and every byte of their elements agrees.
inline bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && bits(a.raw()) == bits(b.raw());
}

}  // namespace strata::testing
