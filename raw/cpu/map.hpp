// SPDX-License-Identifier: MIT
#pragma once
/// The elementwise map of the CPU kernels: out[i] = f(ins[i]...) over tensors
/// of one shape, through the staged walk, with the unit-stride and
/// broadcast-scalar loops the compiler can vectorise.
#include <array>
#include <bit>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "raw/cpu/staged_walk.hpp"
#include "raw/cpu/walk.hpp"
#include "raw/raw_tensor.hpp"
#include "raw/scalar_ops.hpp"

namespace strata::detail {

/// o[i * so] = f(in[i * s]...) for i < n, each input a pointer and its step: the block loop
/// of map_into, with unit-stride and (for two inputs, and where's last two) broadcast-scalar
/// fast paths the compiler can vectorise. Out of line, so that every caller (map_into's walk,
/// a plan's fused blocks: raw/cpu/blocks.cpp) runs the same machine code for an op and gets
/// the same bits, NaN payloads included.
template <class TO, class... TI, class F>
[[gnu::noinline]] void map_block(F f, TO* o, int64_t so, int64_t n,
                                 std::pair<const TI*, int64_t>... in) {
  if (so == 1 && ((in.second == 1) && ...)) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(in.first[i]...);
    return;
  }
  if constexpr (sizeof...(TI) == 2) {
    const auto [a, sa] = std::get<0>(std::tuple{in...});
    const auto [b, sb] = std::get<1>(std::tuple{in...});
    if (so == 1 && sa == 1 && sb == 0) {
      const auto bv = *b;
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
      return;
    }
    if (so == 1 && sa == 0 && sb == 1) {
      const auto av = *a;
      for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
      return;
    }
  }
  if constexpr (sizeof...(TI) == 3) {
    // where(c, x, 0) and where(c, 0, x): relu and its derivative.
    const auto [c, sc] = std::get<0>(std::tuple{in...});
    const auto [a, sa] = std::get<1>(std::tuple{in...});
    const auto [b, sb] = std::get<2>(std::tuple{in...});
    if (so == 1 && sc == 1 && sa == 1 && sb == 0) {
      const auto bv = *b;
      for (int64_t i = 0; i < n; ++i) o[i] = f(c[i], a[i], bv);
      return;
    }
    if (so == 1 && sc == 1 && sa == 0 && sb == 1) {
      const auto av = *a;
      for (int64_t i = 0; i < n; ++i) o[i] = f(c[i], av, b[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) o[i * so] = f(in.first[i * in.second]...);
}

/// out[i] = f(ins[i]...) over tensors of one shape, block by block (map_block).
/// TO and TI... are the element types.
template <class TO, class... TI, class F, class... Ins>
void map_into(TO* out_base, const Layout& out, F f,
              const std::pair<const TI*, const Layout*>&... ins) {
  constexpr std::size_t N = 1 + sizeof...(TI);
  const std::array<const Layout*, N> layouts{&out, ins.second...};
  const std::tuple<const TI*...> bases{ins.first...};
  auto block = [&](const StagedBlock<N>& blk) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      const std::array<int64_t, N> st = blk.st;
      map_block<TO, TI...>(
          f, blk.result(out_base), st[0], blk.n,
          std::pair<const TI*, int64_t>{blk.input(K + 1, std::get<K>(bases)), st[K + 1]}...);
    }
    (std::index_sequence_for<TI...>{});
  };
  parallel_walk_staged<N>(out.shape, layouts, {out_base, ins.first...},
                          {int(sizeof(TO)), int(sizeof(TI))...}, block);
}

/// where's select of a non-bool T through bit masks: no branch on the (often random)
/// condition, so nothing to mispredict, and the loop vectorises. The condition is read as a
/// byte (a bool tensor holds 0 or 1 in each): GCC 12 vectorises no conversion from bool, whose
/// precision is one bit, and left a loop over bools scalar. One functor for the eager kernel
/// and the fused blocks (map_block).
template <class T>
struct MaskSelect {
  /// x where c is 1, else y (bit for bit).
  T operator()(uint8_t c, T x, T y) const {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    const U m = U(0) - U(c);
    return std::bit_cast<T>(U((std::bit_cast<U>(x) & m) | (std::bit_cast<U>(y) & U(~m))));
  }
};
/// where's select of bools.
struct BoolSelect {
  /// x where c, else y.
  bool operator()(bool c, bool x, bool y) const { return c ? x : y; }
};

/// The NaN-safe products' fixup (safe_mul, safe_div): the plain op's result v, or safe(x, y)
/// where v is NaN. One functor for the eager kernel and the fused blocks (map_block).
template <class Safe>
struct NanFixup {
  Safe safe;  ///< the NaN-safe functor
  /// v, or safe(x, y) when v is NaN.
  template <class T>
  T operator()(T v, T x, T y) const {
    return v != v ? safe(x, y) : v;
  }
};

/// A cast's conversion (scalar::convert: integers wrap, floats to integers saturate, NaN to
/// 0). One functor for the eager copy and the fused blocks (map_block).
template <class TO>
struct ConvertTo {
  /// v as a TO.
  template <class TI>
  TO operator()(TI v) const {
    return scalar::convert<TO>(v);
  }
};

template <class, class U>
using same_as_t = U;

/// map_into over RawTensors: out holds TO, the inputs hold TI... in order.
template <class TO, class... TI, class F>
void map(const RawTensor& out, F f, const same_as_t<TI, RawTensor>&... ins) {
  map_into<TO, TI...>(base_ptr<TO>(out), out.layout(), f,
                      std::pair<const TI*, const Layout*>{base_ptr<TI>(ins), &ins.layout()}...);
}

}  // namespace strata::detail
