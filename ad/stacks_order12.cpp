// SPDX-License-Identifier: MIT
// Explicit instantiation of the order-1 and order-2 dual-type stacks, those of jacfwd, jacrev
// and hessian, and their tapes.
#include "ad/stacks.hpp"

namespace strata {
#define STRATA_INSTANTIATE_STACK(...) \
  template struct Prims<__VA_ARGS__>; \
  template struct detail::RulePrims<Prims<__VA_ARGS__>, __VA_ARGS__>;
#define STRATA_INSTANTIATE_DUAL_STACK(...) \
  STRATA_INSTANTIATE_STACK(__VA_ARGS__)    \
  template struct detail::DualHooks<Prims<__VA_ARGS__>, __VA_ARGS__>;
#define STRATA_INSTANTIATE_TAPE(...) template class Tape<__VA_ARGS__>;
STRATA_FOR_EACH_STACK_ORDER12(STRATA_INSTANTIATE_DUAL_STACK)
STRATA_FOR_EACH_STACK_BATCHED_DUAL(STRATA_INSTANTIATE_DUAL_STACK)
STRATA_FOR_EACH_STACK_BATCHED_PLAIN(STRATA_INSTANTIATE_STACK)
STRATA_FOR_EACH_TAPE(STRATA_INSTANTIATE_TAPE)
}  // namespace strata
