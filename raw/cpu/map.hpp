// SPDX-License-Identifier: MIT
#pragma once
/// The elementwise map of the CPU kernels: out[i] = f(ins[i]...) over tensors
/// of one shape, through the staged walk, with the unit-stride and
/// broadcast-scalar loops the compiler can vectorise.
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>

#include "raw/cpu/staged_walk.hpp"
#include "raw/cpu/walk.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::detail {

/// out[i] = f(ins[i]...) over tensors of one shape, with unit-stride and
/// (for two inputs, and where's last two) broadcast-scalar fast paths the
/// compiler can vectorise.
/// TO and TI... are the element types.
template <class TO, class... TI, class F, class... Ins>
void map_into(TO* out_base, const Layout& out, F f,
              const std::pair<const TI*, const Layout*>&... ins) {
  constexpr std::size_t N = 1 + sizeof...(TI);
  const std::array<const Layout*, N> layouts{&out, ins.second...};
  const std::tuple<const TI*...> bases{ins.first...};
  auto block = [&](const StagedBlock<N>& blk) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      const int64_t n = blk.n;
      const std::array<int64_t, N> st = blk.st;
      TO* o = blk.result(out_base);
      const std::tuple<const TI*...> p{blk.input(K + 1, std::get<K>(bases))...};
      bool unit = st[0] == 1;
      ((unit = unit && st[K + 1] == 1), ...);
      if (unit) {
        for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<K>(p)[i]...);
        return;
      }
      if constexpr (sizeof...(TI) == 2) {
        const auto* a = std::get<0>(p);
        const auto* b = std::get<1>(p);
        if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
          const auto bv = *b;
          for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
          return;
        }
        if (st[0] == 1 && st[1] == 0 && st[2] == 1) {
          const auto av = *a;
          for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
          return;
        }
      }
      if constexpr (sizeof...(TI) == 3) {
        // where(c, x, 0) and where(c, 0, x): relu and its derivative.
        const auto* c = std::get<0>(p);
        const auto* a = std::get<1>(p);
        const auto* b = std::get<2>(p);
        if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 0) {
          const auto bv = *b;
          for (int64_t i = 0; i < n; ++i) o[i] = f(c[i], a[i], bv);
          return;
        }
        if (st[0] == 1 && st[1] == 1 && st[2] == 0 && st[3] == 1) {
          const auto av = *a;
          for (int64_t i = 0; i < n; ++i) o[i] = f(c[i], av, b[i]);
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i) o[i * st[0]] = f(std::get<K>(p)[i * st[K + 1]]...);
    }
    (std::index_sequence_for<TI...>{});
  };
  parallel_walk_staged<N>(out.shape, layouts, {out_base, ins.first...},
                          {int(sizeof(TO)), int(sizeof(TI))...}, block);
}

template <class, class U>
using same_as_t = U;

/// map_into over RawTensors: out holds TO, the inputs hold TI... in order.
template <class TO, class... TI, class F>
void map(const RawTensor& out, F f, const same_as_t<TI, RawTensor>&... ins) {
  map_into<TO, TI...>(base_ptr<TO>(out), out.layout(), f,
                      std::pair<const TI*, const Layout*>{base_ptr<TI>(ins), &ins.layout()}...);
}

}  // namespace strata::detail
