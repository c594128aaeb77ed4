// SPDX-License-Identifier: MIT
// The vectorised max and min of contiguous rows (raw/cpu/vmath.hpp's extreme, and raw::reduce
// over a last axis, which uses it): the bits of a first-wins scalar loop on rows holding NaNs
// with distinct payloads, zeros of both signs, infinities and ties, at every length around the
// kernels' lanes, on every instruction set this CPU runs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "raw/cpu/vmath.hpp"
#include "support/float_bits.hpp"
#include "support/naive.hpp"

namespace st = strata;
namespace vm = strata::detail::vmath;
using strata::testing::nan_with;
using strata::testing::same_float_bits;

namespace {

/// The first NaN of x, or else the first of its largest (less: smallest) values.
template <class T>
T first_extreme(const T* x, int64_t n, bool less) {
  T best = x[0];
  for (int64_t i = 0; i < n && !std::isnan(best); ++i) {
    if (std::isnan(x[i]) || (less ? x[i] < best : best < x[i])) best = x[i];
  }
  return best;
}

/// Rows of every length up to 80 with, per length, a clean row, a row with two NaNs of
/// different payloads, one of zeros of both signs (the extreme a zero), one with infinities,
/// and one of ties.
template <class T>
std::vector<std::vector<T>> rows() {
  std::mt19937_64 rng(91);
  std::normal_distribution<double> normal;
  std::vector<std::vector<T>> out;
  const T inf = std::numeric_limits<T>::infinity();
  for (int64_t n = 1; n <= 80; ++n) {
    std::vector<T> clean(static_cast<std::size_t>(n));
    for (T& v : clean) v = T(normal(rng));
    out.push_back(clean);
    std::vector<T> nans = clean;
    nans[std::size_t(rng() % uint64_t(n))] = nan_with<T>(5, true);
    nans[std::size_t(rng() % uint64_t(n))] = nan_with<T>(9, false);
    out.push_back(nans);
    std::vector<T> zeros(static_cast<std::size_t>(n));
    for (T& v : zeros) v = rng() % 2 ? T(-0.0) : T(0.0);
    zeros[std::size_t(rng() % uint64_t(n))] = T(-1);
    out.push_back(zeros);
    std::vector<T> infs = clean;
    infs[std::size_t(rng() % uint64_t(n))] = inf;
    infs[std::size_t(rng() % uint64_t(n))] = -inf;
    out.push_back(infs);
    std::vector<T> ties(std::size_t(n), T(2.5));
    ties[std::size_t(rng() % uint64_t(n))] = T(-3);
    out.push_back(ties);
  }
  return out;
}

template <class T>
void check_kernels() {
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const vm::Kernels* k = vm::kernels_for(isa);
    if (!k) continue;
    for (const std::vector<T>& row : rows<T>()) {
      for (bool less : {false, true}) {
        const T want = first_extreme(row.data(), int64_t(row.size()), less);
        T got = T(7);
        bool taken;
        if constexpr (sizeof(T) == 4) {
          taken = k->extreme_f32[less](row.data(), int64_t(row.size()), &got);
        } else {
          taken = k->extreme_f64[less](row.data(), int64_t(row.size()), &got);
        }
        INFO(vm::isa_name(isa) << (less ? " min" : " max") << " of " << row.size());
        // Declined exactly where the order could matter, and right everywhere else.
        CHECK(taken == !(std::isnan(want) || want == T(0)));
        if (taken) CHECK(same_float_bits(got, want));
      }
    }
  }
}

template <class T>
void check_reduce(st::DType dtype) {
  // Rows of 80 laid side by side (the first 80 of each generated row, zero-padded), read whole
  // and through a view whose rows start at a stride of 83.
  const std::vector<std::vector<T>> rs = rows<T>();
  const int64_t n = 80, m = int64_t(rs.size());
  std::vector<double> flat(std::size_t(m * 83), 1.0);
  std::vector<T> typed(flat.size(), T(1));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      const std::size_t from = std::size_t(c) % rs[std::size_t(r)].size();
      typed[std::size_t(r * 83 + c)] = rs[std::size_t(r)][from];
    }
  }
  for (std::size_t i = 0; i < flat.size(); ++i) flat[i] = double(typed[i]);
  st::RawTensor wide = st::testing::make({m, 83}, dtype, flat);
  // make() goes through doubles; the NaN payloads are written again bit for bit.
  std::memcpy(wide.storage()->data(), typed.data(), typed.size() * sizeof(T));
  const st::RawTensor view = wide.slice(1, 0, n);
  for (st::ReduceOp op : {st::ReduceOp::max, st::ReduceOp::min}) {
    const st::RawTensor got = st::raw::reduce(op, view, {1});
    const T* g = static_cast<const T*>(got.storage()->data()) + got.offset();
    for (int64_t r = 0; r < m; ++r) {
      const T want = first_extreme(typed.data() + r * 83, n, op == st::ReduceOp::min);
      INFO("row " << r);
      CHECK(same_float_bits(g[r], want));
    }
  }
}

}  // namespace

TEST_CASE("the extreme kernels of every instruction set give the first-wins bits or decline",
          "[raw]") {
  check_kernels<float>();
  check_kernels<double>();
}

TEST_CASE("reduce: max and min over contiguous rows give the first-wins bits", "[raw]") {
  check_reduce<float>(st::f32);
  check_reduce<double>(st::f64);
}
