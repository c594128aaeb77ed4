// SPDX-License-Identifier: MIT
// Explicit instantiation of the order-1 and order-2 dual-type stacks, and those of jacfwd.
#include "ad/stacks.hpp"

namespace strata {
#define STRATA_INSTANTIATE_STACK(...) \
  template struct Prims<__VA_ARGS__>; \
  template struct detail::RulePrims<Prims<__VA_ARGS__>, __VA_ARGS__>;
STRATA_FOR_EACH_STACK_ORDER12(STRATA_INSTANTIATE_STACK)
STRATA_FOR_EACH_STACK_BATCHED(STRATA_INSTANTIATE_STACK)
}  // namespace strata
