// SPDX-License-Identifier: MIT
// Explicit instantiation of the order-3 dual-type stacks.
#include "ad/stacks.hpp"

namespace strata {
#define STRATA_INSTANTIATE_DUAL_STACK(...)                            \
  template struct Prims<__VA_ARGS__>;                                 \
  template struct detail::RulePrims<Prims<__VA_ARGS__>, __VA_ARGS__>; \
  template struct detail::DualHooks<Prims<__VA_ARGS__>, __VA_ARGS__>;
STRATA_FOR_EACH_STACK_ORDER3(STRATA_INSTANTIATE_DUAL_STACK)
}  // namespace strata
