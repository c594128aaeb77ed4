// SPDX-License-Identifier: MIT
#pragma once
/// The reducers, one per row of STRATA_REDUCE_OPS (raw/primitives.hpp), for
/// both devices. A reducer folds values (with their positions) into an Acc:
/// init(), step(acc, v, i), combine(acc, acc2) with acc2 covering later
/// positions or, on a GPU block tree, any positions; finish(acc) is the
/// output element.
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"
#include "raw/scalar/arith.hpp"

namespace strata::detail::scalar {

/// sum: floats in double, integers and bools in wrapping int64.
template <class T>
struct SumReducer {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  using Out = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  STRATA_HD static Acc init() { return 0; }
  STRATA_HD static void step(Acc& a, T v, int64_t) { combine(a, Acc(v)); }
  STRATA_HD static void combine(Acc& a, const Acc& b) {
    if constexpr (std::is_floating_point_v<Acc>) {
      a += b;
    } else {
      a = int64_t(uint64_t(a) + uint64_t(b));
    }
  }
  STRATA_HD static Out finish(const Acc& a) { return Out(a); }
};

/// Is v a better extreme than best (Less: smaller)? A NaN beats everything.
template <class T, bool Less>
STRATA_HD bool better(T v, T best) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  return Less ? v < best : best < v;
}

/// max (Less = false) or min (Less = true); a NaN, once seen, stays.
template <class T, bool Less>
struct ExtremeReducer {
  struct Acc {
    T v;
    bool any;
  };
  using Out = T;
  STRATA_HD static Acc init() { return {T{}, false}; }
  STRATA_HD static void step(Acc& a, T v, int64_t) { combine(a, Acc{v, true}); }
  STRATA_HD static void combine(Acc& a, const Acc& b) {
    if (b.any && (!a.any || better<T, Less>(b.v, a.v))) a = b;
  }
  STRATA_HD static Out finish(const Acc& a) { return a.v; }
};

/// argmax (Less = false) or argmin: the position of the extreme; ties (and two
/// NaNs) go to the smaller position, so no combination order changes the answer.
template <class T, bool Less>
struct ArgReducer {
  struct Acc {
    T v;
    int64_t i;
  };
  using Out = int64_t;
  STRATA_HD static Acc init() { return {T{}, -1}; }
  STRATA_HD static void step(Acc& a, T v, int64_t i) { combine(a, Acc{v, i}); }
  STRATA_HD static void combine(Acc& a, const Acc& b) {
    if (b.i < 0) return;
    if (a.i < 0 || better<T, Less>(b.v, a.v) || (!better<T, Less>(a.v, b.v) && b.i < a.i)) a = b;
  }
  STRATA_HD static Out finish(const Acc& a) { return a.i; }
};

template <class T>
using MaxReducer = ExtremeReducer<T, false>;
template <class T>
using MinReducer = ExtremeReducer<T, true>;
template <class T>
using ArgmaxReducer = ArgReducer<T, false>;
template <class T>
using ArgminReducer = ArgReducer<T, true>;

}  // namespace strata::detail::scalar
