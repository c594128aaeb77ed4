// SPDX-License-Identifier: MIT
#pragma once
/// The common dual-type stacks, instantiated once in ad/stacks_*.cpp instead
/// of in every file that differentiates something (orders 1 to 3, every mix
/// of forward and reverse mode).
#include "ad/batched.hpp"
#include "ad/forward.hpp"
#include "ad/reverse.hpp"

/// Calls X(stack) for each dual-type stack of order 1 and 2.
#define STRATA_FOR_EACH_STACK_ORDER12(X) \
  X(Forward<Tensor>)                     \
  X(Reverse<Tensor>)                     \
  X(Forward<Forward<Tensor>>)            \
  X(Forward<Reverse<Tensor>>)            \
  X(Reverse<Forward<Tensor>>)            \
  X(Reverse<Reverse<Tensor>>)

/// Calls X(stack) for each dual-type stack of order 3.
#define STRATA_FOR_EACH_STACK_ORDER3(X) \
  X(Forward<Forward<Forward<Tensor>>>)  \
  X(Forward<Forward<Reverse<Tensor>>>)  \
  X(Forward<Reverse<Forward<Tensor>>>)  \
  X(Forward<Reverse<Reverse<Tensor>>>)  \
  X(Reverse<Forward<Forward<Tensor>>>)  \
  X(Reverse<Forward<Reverse<Tensor>>>)  \
  X(Reverse<Reverse<Forward<Tensor>>>)  \
  X(Reverse<Reverse<Reverse<Tensor>>>)

/// The dual stacks of jacfwd, jacrev and hessian (jacfwd of jacrev).
#define STRATA_FOR_EACH_STACK_BATCHED_DUAL(X) \
  X(Forward<Batched<Tensor>>)                 \
  X(Reverse<Batched<Tensor>>)                 \
  X(Reverse<Batched<Forward<Batched<Tensor>>>>)

/// The batched levels those stacks wrap.
#define STRATA_FOR_EACH_STACK_BATCHED_PLAIN(X) \
  X(Batched<Tensor>)                           \
  X(Batched<Forward<Batched<Tensor>>>)

/// The levels a Reverse of the stacks above records on: one Tape each.
#define STRATA_FOR_EACH_TAPE(X) \
  X(Tensor)                     \
  STRATA_FOR_EACH_STACK_ORDER12(X) STRATA_FOR_EACH_STACK_BATCHED_PLAIN(X)

namespace strata {
// Each level's primitives and hooks live in bases of its Prims (ad/level.hpp), which an
// explicit instantiation of the derived Prims does not reach: all are named. Their members
// are defined out of the classes, so a file using these stacks compiles none of them.
#define STRATA_EXTERN_STACK(...)             \
  extern template struct Prims<__VA_ARGS__>; \
  extern template struct detail::RulePrims<Prims<__VA_ARGS__>, __VA_ARGS__>;
#define STRATA_EXTERN_DUAL_STACK(...) \
  STRATA_EXTERN_STACK(__VA_ARGS__)    \
  extern template struct detail::DualHooks<Prims<__VA_ARGS__>, __VA_ARGS__>;
#define STRATA_EXTERN_TAPE(...) extern template class Tape<__VA_ARGS__>;
STRATA_FOR_EACH_STACK_ORDER12(STRATA_EXTERN_DUAL_STACK)
STRATA_FOR_EACH_STACK_ORDER3(STRATA_EXTERN_DUAL_STACK)
STRATA_FOR_EACH_STACK_BATCHED_DUAL(STRATA_EXTERN_DUAL_STACK)
STRATA_FOR_EACH_STACK_BATCHED_PLAIN(STRATA_EXTERN_STACK)
STRATA_FOR_EACH_TAPE(STRATA_EXTERN_TAPE)
#undef STRATA_EXTERN_STACK
#undef STRATA_EXTERN_DUAL_STACK
#undef STRATA_EXTERN_TAPE

// Every level kind provides every hook of diff/diffable.hpp.
static_assert(WrappingLevel<Forward<Tensor>>);
static_assert(WrappingLevel<Reverse<Tensor>>);
static_assert(WrappingLevel<Batched<Tensor>>);
}  // namespace strata
