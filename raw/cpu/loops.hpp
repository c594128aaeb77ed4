// SPDX-License-Identifier: MIT
#pragma once
/// Loop helpers shared by the CPU kernels: typed base pointers, the parallel
/// strided walk, and value conversions with defined results for every input.
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/parallel.hpp"
#include "core/strided.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// Elements per parallel piece: below this, threads cost more than they save.
inline constexpr int64_t kGrain = int64_t{1} << 15;

/// The storage's first element (the layout's offset is applied by plans).
template <class T>
T* base_ptr(const RawTensor& t) {
  return static_cast<T*>(t.storage()->data());
}

/// Walks all operands (same shape) in parallel blocks: fn(offsets, n, strides).
template <std::size_t N, class Fn>
void parallel_walk(const Shape& shape, const std::array<const Layout*, N>& layouts, Fn&& fn) {
  const StridedPlan<N> plan = make_plan<N>(shape, layouts);
  if (plan.numel == 0) return;
  parallel_for(0, plan.numel, kGrain,
               [&](int64_t lo, int64_t hi) { for_each_block(plan, lo, hi, fn); });
}

/// out[i] = f(ins[i]...) over tensors of one shape, with a unit-stride fast
/// path the compiler can vectorise. TO and TI... are the element types.
template <class TO, class... TI, class F, class... Ins>
void map_into(TO* out_base, const Layout& out, F f,
              const std::pair<const TI*, const Layout*>&... ins) {
  constexpr std::size_t N = 1 + sizeof...(TI);
  const std::array<const Layout*, N> layouts{&out, ins.second...};
  const std::tuple<const TI*...> bases{ins.first...};
  parallel_walk<N>(out.shape, layouts, [&](const auto& off, int64_t n, const auto& st) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      TO* o = out_base + off[0];
      const std::tuple<const TI*...> p{std::get<K>(bases) + off[K + 1]...};
      bool unit = st[0] == 1;
      ((unit = unit && st[K + 1] == 1), ...);
      if (unit) {
        for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<K>(p)[i]...);
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * st[0]] = f(std::get<K>(p)[i * st[K + 1]]...);
      }
    }
    (std::index_sequence_for<TI...>{});
  });
}

template <class, class U>
using same_as_t = U;

/// map_into over RawTensors: out holds TO, the inputs hold TI... in order.
template <class TO, class... TI, class F>
void map(const RawTensor& out, F f, const same_as_t<TI, RawTensor>&... ins) {
  map_into<TO, TI...>(base_ptr<TO>(out), out.layout(), f,
                      std::pair<const TI*, const Layout*>{base_ptr<TI>(ins), &ins.layout()}...);
}

/// Converts a value to T with a defined result for every input: floats to
/// integers saturate (NaN becomes 0), anything to bool is "!= 0".
template <class T, class S>
T convert(S v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != S(0);
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<S>) {
    if (std::isnan(v)) return T(0);
    if (v <= S(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= S(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace strata::detail
