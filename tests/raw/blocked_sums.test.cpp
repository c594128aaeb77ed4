// SPDX-License-Identifier: MIT
// The blocked float sums of every instruction set (raw/cpu/vmath.hpp): the same
// bits from every instruction set, exact on 2^24 ones, against double loops at odd
// lengths around the 32-lane and 4096-element block edges, and over rows.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "raw/cpu/prefetch.hpp"
#include "raw/cpu/staged_walk.hpp"
#include "raw/cpu/tuning.hpp"
#include "raw/cpu/vmath.hpp"
#include "support/elementwise_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
namespace raw = strata::raw;
namespace vm = strata::detail::vmath;
using st::BinaryOp;
using st::RawTensor;
using st::Shape;
using st::UnaryOp;
using Idx = std::vector<int64_t>;

TEST_CASE("the blocked sums of every instruction set give the same bits and match double loops",
          "[raw]") {
  // Odd lengths around the 32-lane and 4096-element block edges, and rows.
  std::vector<float> x(70001);
  std::vector<double> xd(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = float(std::sin(double(i) * 0.37) * 3 + 0.25);
    xd[i] = double(x[i]) * 1.0000001;
  }
  std::vector<double> first;
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const vm::Kernels* k = vm::kernels_for(isa);
    if (!k) continue;
    INFO("isa " << vm::isa_name(isa));
    std::vector<double> got;
    for (int64_t n : {0, 1, 31, 33, 1025, 4095, 4096, 4097, 8191, 8193, 70001}) {
      double want = 0, want_d = 0;
      for (int64_t i = 0; i < n; ++i) want += double(x[std::size_t(i)]);
      for (int64_t i = 0; i < n; ++i) want_d += xd[std::size_t(i)];
      const double s = k->sum_f32(x.data(), n), sd = k->sum_f64(xd.data(), n);
      CHECK(std::abs(s - want) <= 1e-5 * (1 + std::abs(want)) + 1e-4);
      CHECK(std::abs(sd - want_d) <= 1e-12 * (1 + std::abs(want_d)));
      got.push_back(s);
      got.push_back(sd);
    }
    // Column sums of a 67 x 601 block inside rows of 700 (row blocks of 32:
    // rows added four at a time, then the rest one at a time), and of a
    // 15 x 4500 one inside rows of 4600 (column blocks of 4096 f32 and 2048
    // f64, each with a tail).
    for (const auto& [rows, cols, ld] : {std::array<int64_t, 3>{67, 601, 700}, {15, 4500, 4600}}) {
      std::vector<double> acc(std::size_t(cols), 0.5), accd(std::size_t(cols), 0.5);
      k->sum_columns_f32(x.data(), rows, ld, cols, acc.data());
      k->sum_columns_f64(xd.data(), rows, ld, cols, accd.data());
      bool ok = true;
      for (int64_t j = 0; j < cols; ++j) {
        double w = 0.5, wd = 0.5;
        for (int64_t r = 0; r < rows; ++r) w += double(x[std::size_t(r * ld + j)]);
        for (int64_t r = 0; r < rows; ++r) wd += xd[std::size_t(r * ld + j)];
        ok = ok && std::abs(acc[std::size_t(j)] - w) <= 1e-5 * (1 + std::abs(w));
        ok = ok && std::abs(accd[std::size_t(j)] - wd) <= 1e-12 * (1 + std::abs(wd));
      }
      INFO(rows << " x " << cols);
      CHECK(ok);
      got.insert(got.end(), acc.begin(), acc.end());
      got.insert(got.end(), accd.begin(), accd.end());
    }
    // 2^24 ones: exact in every build.
    std::vector<float> ones(std::size_t(1) << 24, 1.0f);
    CHECK(k->sum_f32(ones.data(), int64_t(ones.size())) == 16777216.0);
    if (first.empty()) {
      first = got;
    } else {
      CHECK(got == first);
    }
  }
}
