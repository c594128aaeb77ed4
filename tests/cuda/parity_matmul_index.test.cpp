// SPDX-License-Identifier: MIT
// Device parity: every primitive on every CUDA device against the CPU backend,
// on the same random values in the same layouts (contiguous, permuted,
// sliced, flipped, broadcast, offset). Floats agree to rounding (reductions
// may add in another order); integers, bools, gathers and scatter-adds
// agree exactly. Matmul, gathers and scatter-adds, windows and fold, then the
// layers above: composites, indexing and derivatives of orders 1 and 2 computed
// on the device, and mixing devices. Elementwise ops and reductions: parity.test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/cuda_parity.hpp"
#include "support/elementwise_ref.hpp"
#include "support/op_reference.hpp"

namespace st = strata;
namespace raw = strata::raw;
using st::testing::compare;
using st::testing::cuda_devices;
using st::testing::host_values;
using st::testing::LayoutKind;
using st::testing::same_layout_on;
using st::testing::tol_for;

TEST_CASE("cuda: matmul with transposes, slices and batches", "[cuda]") {
  std::mt19937_64 rng(4);
  for (const st::Device d : cuda_devices()) {
    for (const st::DType t : {st::f32, st::f64, st::i32}) {
      const double tol = t == st::f32 ? 1e-4 : t == st::f64 ? 1e-12 : 0;
      const st::RawTensor a =
          st::testing::random_tensor({3, 33, 17}, t, LayoutKind::contiguous, rng);
      const st::RawTensor b =
          st::testing::random_tensor({3, 17, 20}, t, LayoutKind::contiguous, rng);
      auto check = [&](const st::RawTensor& x, const st::RawTensor& y) {
        CHECK(compare(raw::matmul(same_layout_on(x, d), same_layout_on(y, d)), raw::matmul(x, y),
                      tol) == "");
      };
      check(a, b);
      check(b.transpose(1, 2).transpose(1, 2), b.transpose(1, 2));  // column-major operand
      check(a.slice(2, 1, 15), b.slice(1, 2, 16));                  // column-sliced
      check(a.permute({1, 0, 2}).permute({1, 0, 2}), b);            // permuted batch strides
      check(a.slice(0, std::nullopt, std::nullopt, -1), b);         // negative batch stride
      check(a.select(0, 1).expand({3, 33, 17}), b);                 // broadcast batch
      const st::RawTensor p =
          st::testing::random_tensor({4, 2, 5, 6}, t, LayoutKind::permuted, rng);  // non-uniform
      const st::RawTensor q = st::testing::random_tensor({4, 2, 6, 3}, t, LayoutKind::sliced, rng);
      check(p, q);
      check(a.slice(1, 0, 1), b.slice(2, 0, 1));  // m = 1, n = 1
    }
  }
}

TEST_CASE("cuda: gathers and scatter-adds agree bit for bit", "[cuda]") {
  std::mt19937_64 rng(5);
  for (const st::Device d : cuda_devices()) {
    for (const st::DType t : {st::f32, st::f64, st::i64}) {
      for (const LayoutKind k : st::testing::kAllLayouts) {
        const st::RawTensor x = st::testing::random_tensor({50, 4, 6}, t, k, rng);
        std::vector<double> iv;
        for (int j = 0; j < 300; ++j) iv.push_back(double(int64_t(rng() % 100) - 50));
        const st::RawTensor idx = st::testing::make({30, 10}, st::i64, iv);  // repeats, negatives
        const st::RawTensor xd = same_layout_on(x, d), idd = raw::to_device(idx, d);
        CHECK(compare(raw::index_select(xd, 0, idd), raw::index_select(x, 0, idx), 0) == "");
        const st::RawTensor src = st::testing::random_tensor({30, 10, 4, 6}, t, k, rng);
        CHECK(compare(raw::index_add(xd, 0, idd, same_layout_on(src, d)),
                      raw::index_add(x, 0, idx, src), 0) == "");
        const st::RawTensor small = st::testing::make({4}, st::i32, {5, 0, 5, -1});
        CHECK(compare(raw::index_select(xd, 2, raw::to_device(small, d)),
                      raw::index_select(x, 2, small), 0) == "");
      }
    }
    const st::RawTensor x = raw::full({4}, 1.0, st::f32, d);
    CHECK_THROWS_AS(
        raw::index_select(x, 0, raw::to_device(st::testing::make({1}, st::i64, {4}), d)),
        st::IndexError);
    // Indices are checked in raw ops on the device (raw/index_positions.cpp):
    // the first bad entry, in row-major order of a transposed index, gives the
    // CPU's message; good transposed indices give the CPU's result.
    const st::RawTensor xc = raw::full({4}, 1.0, st::f32);
    for (const st::DType it : {st::i32, st::i64}) {
      for (const double bad : {4.0, -5.0}) {
        const st::RawTensor idx = st::testing::make({2, 2}, it, {1, bad, -4, 9}).transpose(0, 1);
        std::string on_cpu, on_device;
        try {
          raw::index_select(xc, 0, idx);
        } catch (const st::IndexError& e) {
          on_cpu = e.what();
        }
        try {
          raw::index_select(x, 0, same_layout_on(idx, d));
        } catch (const st::IndexError& e) {
          on_device = e.what();
        }
        CHECK(on_cpu.find("(entry 2 ") != std::string::npos);  // [[1, -4], [bad, 9]]
        CHECK(on_device == on_cpu);
      }
      const st::RawTensor good = st::testing::make({3, 2}, it, {3, -1, 0, -4, 2, 2});
      const st::RawTensor good_d = same_layout_on(good.transpose(0, 1), d);
      const st::RawTensor y = st::testing::random_tensor({4, 5}, st::f64, LayoutKind::flipped, rng);
      CHECK(compare(raw::index_select(same_layout_on(y, d), 0, good_d),
                    raw::index_select(y, 0, good.transpose(0, 1)), 0) == "");
      const st::RawTensor src =
          st::testing::random_tensor({2, 3, 5}, st::f64, LayoutKind::permuted, rng);
      CHECK(compare(raw::index_add(same_layout_on(y, d), 0, good_d, same_layout_on(src, d)),
                    raw::index_add(y, 0, good.transpose(0, 1), src), 0) == "");
    }
  }
}

TEST_CASE("cuda: windows views and fold agree bit for bit", "[cuda]") {
  std::mt19937_64 rng(6);
  for (const st::Device d : cuda_devices()) {
    const st::Window w{{3, 2}, {2, 1}, {1, 2}};  // over [9, 7]: 4 x 5 windows
    for (const st::DType t : {st::f32, st::f64, st::i32, st::i64}) {
      for (const LayoutKind k : st::testing::kAllLayouts) {
        const st::RawTensor y = st::testing::random_tensor({2, 3, 4, 5, 3, 2}, t, k, rng);
        CHECK(compare(raw::fold(same_layout_on(y, d), w, {9, 7}), raw::fold(y, w, {9, 7}), 0) ==
              "");
        const st::RawTensor x = st::testing::random_tensor({2, 3, 9, 7}, t, k, rng);
        CHECK(compare(raw::contiguous(same_layout_on(x, d).windows(w)),
                      raw::contiguous(x.windows(w)), 0) == "");
      }
    }
    // Leading axes that merge into more dims than a kernel decodes, and four windowed axes.
    const st::Window w1{{2}, {1}, {1}};
    const st::RawTensor deep = st::testing::random_tensor({2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 3, 2},
                                                          st::f32, LayoutKind::permuted, rng);
    CHECK(compare(raw::fold(same_layout_on(deep, d), w1, {4}), raw::fold(deep, w1, {4}), 0) == "");
    const st::Window w4{{2, 1, 2, 3}, {1, 2, 2, 1}, {2, 1, 1, 1}};  // over [5, 3, 4, 4]
    const st::RawTensor y4 =
        st::testing::random_tensor({2, 3, 2, 2, 2, 2, 1, 2, 3}, st::f64, LayoutKind::sliced, rng);
    CHECK(compare(raw::fold(same_layout_on(y4, d), w4, {5, 3, 4, 4}),
                  raw::fold(y4, w4, {5, 3, 4, 4}), 0) == "");
  }
}

TEST_CASE("cuda: composites, indexing and derivatives on the device", "[cuda]") {
  for (const st::Device d : cuda_devices()) {
    const st::Tensor x = st::randn({5, 4}, 11, st::f64);
    const st::Tensor xd = x.to(d);
    REQUIRE(xd.device() == d);
    auto f = [](const auto& v) {
      return st::sum(st::tanh(st::matmul(v, v.transpose(0, 1))) *
                     st::log_softmax(v, 1).ix(st::all, st::slice(0, 1)));
    };
    CHECK(f(xd).item<double>() == Approx(f(x).item<double>()).epsilon(1e-12));
    const st::Tensor g = st::grad(f, x), gd = st::grad(f, xd);
    CHECK(gd.device() == d);
    CHECK(compare(gd.raw(), g.raw(), 1e-11) == "");
    const st::Tensor h = st::hessian([](const auto& v) { return st::sum(st::sin(v) * v); }, x);
    const st::Tensor hd = st::hessian([](const auto& v) { return st::sum(st::sin(v) * v); }, xd);
    CHECK(compare(hd.raw(), h.raw(), 1e-11) == "");
    const st::Tensor idx = st::from_vector(std::vector<int64_t>{4, 0, 4});
    auto gather = [&](const st::Tensor& i) {
      return [i](const auto& v) { return st::sum(v.vix(i, st::all) * v.vix(i, st::all)); };
    };
    CHECK(compare(st::grad(gather(idx.to(d)), xd).raw(), st::grad(gather(idx), x).raw(), 1e-12) ==
          "");
  }
}

TEST_CASE("cuda: mixing devices is a DeviceError naming both", "[cuda]") {
  for (const st::Device d : cuda_devices()) {
    const st::Tensor a = st::ones({3}), b = st::ones({3}, st::f32, d);
    CHECK_THROWS_AS(a + b, st::DeviceError);
    CHECK_THROWS_WITH(
        a + b, Catch::Matchers::Contains("cpu") && Catch::Matchers::Contains(st::to_string(d)));
  }
}
