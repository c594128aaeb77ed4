// SPDX-License-Identifier: MIT
// Device parity: every primitive on every CUDA device against the CPU backend,
// on the same random values in the same layouts (contiguous, permuted,
// sliced, flipped, broadcast, offset). Floats agree to rounding (reductions
// may add in another order); integers, bools and the uniform random stream
// agree exactly. Creation, copies, elementwise ops and reductions here;
// matmul, gathers, windows and the layers above in parity_matmul_index.test.cpp.
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

TEST_CASE("cuda: creation, copies and the random stream", "[cuda]") {
  for (const st::Device d : cuda_devices()) {
    INFO(st::to_string(d));
    for (const st::DType t : st::testing::kAllDTypes) {
      CHECK(compare(raw::full({3, 5}, 2.0, t, d), raw::full({3, 5}, 2.0, t, st::Device::cpu()),
                    0) == "");
      CHECK(compare(raw::arange(-3, 40, 3, t == st::bool_ ? st::i64 : t, d),
                    raw::arange(-3, 40, 3, t == st::bool_ ? st::i64 : t, st::Device::cpu()),
                    0) == "");
    }
    for (const st::DType t : {st::f32, st::f64}) {
      CHECK(compare(raw::uniform({1000, 3}, 42, t, d), raw::uniform({1000, 3}, 42, t), 0) == "");
      CHECK(compare(raw::normal({1000, 3}, 7, t, d), raw::normal({1000, 3}, 7, t), 1e-14) == "");
    }
    // Round trips through host memory keep every layout's values.
    std::mt19937_64 rng(1);
    for (const LayoutKind k : st::testing::kAllLayouts) {
      const st::RawTensor x = st::testing::random_tensor({4, 5, 3}, st::f64, k, rng);
      const st::RawTensor back = raw::to_device(raw::to_device(x, d), st::Device::cpu());
      CHECK(st::testing::values(back) == st::testing::values(x));
      CHECK(compare(raw::contiguous(same_layout_on(x, d)), raw::contiguous(x), 0) == "");
      CHECK(compare(raw::cast(same_layout_on(x, d), st::i32), raw::cast(x, st::i32), 0) == "");
    }
  }
}

TEST_CASE("cuda: unary and binary ops on every layout", "[cuda]") {
  std::mt19937_64 rng(2);
  for (const st::Device d : cuda_devices()) {
    INFO(st::to_string(d));
    for (const st::DType t : st::testing::kAllDTypes) {
      for (const LayoutKind k : st::testing::kAllLayouts) {
        INFO(st::testing::dname(t) << " " << st::testing::layout_name(k));
        const st::RawTensor x = st::testing::random_tensor({6, 4, 5}, t, k, rng);
        const st::RawTensor y = st::testing::random_tensor({6, 4, 5}, t, LayoutKind::permuted, rng);
        st::testing::replace_zeros(y);  // integer divisors
        // |x| for the ops of the positive domain (log, sqrt, log1p).
        const st::RawTensor ax = st::is_floating(t) ? raw::unary(st::UnaryOp::abs, x) : x;
        const st::RawTensor xd = same_layout_on(x, d), yd = same_layout_on(y, d);
        // Every row of the op tables that admits t; transcendental functions may
        // differ by a few ulp between the CPU's libm and CUDA's.
        for (const auto& row : st::kUnaryOps) {
          if (!st::admits(row.dtypes, t)) continue;
          INFO(row.name);
          const bool positive =
              st::testing::unary_reference(row.op).domain == st::testing::Domain::positive;
          const st::RawTensor& in = positive ? ax : x;
          CHECK(compare(raw::unary(row.op, same_layout_on(in, d)), raw::unary(row.op, in),
                        4 * tol_for(t)) == "");
        }
        for (const auto& row : st::kBinaryOps) {
          if (!st::admits(row.dtypes, t)) continue;
          INFO(row.name);
          CHECK(compare(raw::binary(row.op, xd, yd), raw::binary(row.op, x, y), 4 * tol_for(t)) ==
                "");
        }
        const st::RawTensor cond = raw::binary(st::BinaryOp::gt, x, y);
        CHECK(compare(raw::where(same_layout_on(cond, d), xd, yd), raw::where(cond, x, y), 0) ==
              "");
        if (st::is_floating(t)) {  // the optimisers' in-place update, into a copy of x
          const st::RawTensor on_cpu = raw::contiguous(x), on_dev = raw::to_device(on_cpu, d);
          raw::axpby_(on_cpu, 0.75, y, -0.3);
          raw::axpby_(on_dev, 0.75, yd, -0.3);
          CHECK(compare(on_dev, on_cpu, 4 * tol_for(t)) == "");
          // Adam's fused step, on fresh tensors (x may share on_cpu's storage): p = -x,
          // m = -y, v = |x|, the gradient x + y.
          const st::AdamStepCoefficients c{
              .beta1 = 0.9, .beta2 = 0.999, .step = 0.02, .sqrt_bc2 = 0.1, .eps = 1e-8, .l2 = 0.05};
          const st::RawTensor p = raw::unary(st::UnaryOp::neg, x),
                              m = raw::unary(st::UnaryOp::neg, y),
                              v = raw::unary(st::UnaryOp::abs, x),
                              g = raw::binary(st::BinaryOp::add, x, y);
          const st::RawTensor pd = raw::to_device(p, d), md = raw::to_device(m, d),
                              vd = raw::to_device(v, d), gd = raw::to_device(g, d);
          raw::adam_step_(p, m, v, g, c);
          raw::adam_step_(pd, md, vd, gd, c);
          CHECK(compare(pd, p, 16 * tol_for(t)) == "");
          CHECK(compare(md, m, 4 * tol_for(t)) == "");
          CHECK(compare(vd, v, 4 * tol_for(t)) == "");
        }
      }
    }
    // Integer division truncates, and by zero it throws (as on the CPU).
    const st::RawTensor a = st::testing::make({4}, st::i32, {7, -7, 9, -9});
    const st::RawTensor b = st::testing::make({4}, st::i32, {2, 2, -4, 3});
    CHECK(compare(raw::binary(st::BinaryOp::div, raw::to_device(a, d), raw::to_device(b, d)),
                  raw::binary(st::BinaryOp::div, a, b), 0) == "");
    const st::RawTensor z = st::testing::make({4}, st::i32, {1, 0, 1, 1});
    CHECK_THROWS_AS(raw::binary(st::BinaryOp::div, raw::to_device(a, d), raw::to_device(z, d)),
                    st::ValueError);
  }
}

TEST_CASE("cuda: elementwise maps over runs long enough to unroll", "[cuda]") {
  // The small shapes above end in map_kernel's one-element tail (raw/cuda/common.cuh);
  // these lengths run its unrolled rounds too, alone (4096) and beside the tail.
  std::mt19937_64 rng(5);
  for (const st::Device d : cuda_devices()) {
    for (const st::DType t : {st::f32, st::f64, st::i64, st::bool_}) {
      for (const int64_t n : {int64_t(4096), int64_t(4133), int64_t(1) << 20}) {
        INFO(st::testing::dname(t) << " n " << n);
        const st::RawTensor x = st::testing::random_tensor({n}, t, LayoutKind::contiguous, rng);
        const st::RawTensor y = st::testing::random_tensor({n}, t, LayoutKind::contiguous, rng);
        const st::RawTensor xd = raw::to_device(x, d), yd = raw::to_device(y, d);
        const double tol = 4 * tol_for(t);
        if (st::is_floating(t)) {
          CHECK(compare(raw::unary(st::UnaryOp::exp, xd), raw::unary(st::UnaryOp::exp, x), tol) ==
                "");
        }
        if (t != st::bool_) {  // neg and maximum are for numbers
          CHECK(compare(raw::unary(st::UnaryOp::neg, xd), raw::unary(st::UnaryOp::neg, x), tol) ==
                "");
          CHECK(compare(raw::binary(st::BinaryOp::maximum, xd, yd),
                        raw::binary(st::BinaryOp::maximum, x, y), 0) == "");
        }
        CHECK(compare(raw::binary(st::BinaryOp::lt, xd, yd), raw::binary(st::BinaryOp::lt, x, y),
                      0) == "");
        const st::RawTensor c = raw::binary(st::BinaryOp::lt, x, y);
        CHECK(compare(raw::where(raw::to_device(c, d), xd, yd), raw::where(c, x, y), 0) == "");
        CHECK(compare(raw::cast(xd, st::f32), raw::cast(x, st::f32), tol_for(st::f32)) == "");
        CHECK(compare(raw::cast(xd, st::i32), raw::cast(x, st::i32), 0) == "");
      }
    }
  }
}

TEST_CASE("cuda: reductions over every axis set", "[cuda]") {
  std::mt19937_64 rng(3);
  for (const st::Device d : cuda_devices()) {
    for (const st::DType t : {st::f32, st::f64, st::i32, st::bool_}) {
      for (const LayoutKind k : st::testing::kAllLayouts) {
        const st::RawTensor x = st::testing::random_tensor({7, 300, 3}, t, k, rng);
        const st::RawTensor xd = same_layout_on(x, d);
        for (const st::Shape& axes :
             {st::Shape{0}, st::Shape{1}, st::Shape{2}, st::Shape{0, 2}, st::Shape{0, 1, 2}}) {
          INFO(st::testing::dname(t) << " " << st::testing::layout_name(k) << " axes " << axes);
          for (const auto& row : st::kReduceOps) {
            // Sums may add in another order; the rest (and argmax ties) agree exactly.
            INFO(row.name);
            const double tol = row.op == st::ReduceOp::sum ? tol_for(t) : 0.0;
            CHECK(compare(raw::reduce(row.op, xd, axes), raw::reduce(row.op, x, axes), tol) == "");
          }
        }
      }
    }
    // Ties and NaN: the first position wins, as on the CPU.
    const st::RawTensor ties = st::testing::make({6}, st::f64, {1, 5, 5, st::testing::kNaN, 5, 0});
    for (const st::ReduceOp op : {st::ReduceOp::max, st::ReduceOp::argmax, st::ReduceOp::argmin}) {
      CHECK(compare(raw::reduce(op, raw::to_device(ties, d), {0}), raw::reduce(op, ties, {0}), 0) ==
            "");
    }
  }
}

TEST_CASE("cuda: reductions with few outputs cut R into slices", "[cuda]") {
  // Few outputs over many positions: the reduced positions are cut into slices
  // whose accumulators are folded in order (raw/cuda/reduce.cu). Both kernels,
  // shapes on either side of the slicing thresholds, in two layouts.
  std::mt19937_64 rng(4);
  const std::vector<std::pair<st::Shape, st::Shape>> cases = {
      {{3, 40000}, {1}},      // rows kernel, several slices an output
      {{50000, 3}, {0}},      // columns kernel, many slices
      {{200001}, {0}},        // one output
      {{4096, 10}, {0}},      // a bias gradient
      {{4096, 256}, {0}},     //
      {{2, 8191}, {1}},       // rows: one slice (under two blocks' worth)
      {{63, 5}, {0}},         // columns: one slice (under two threads' worth)
      {{9, 3000, 5}, {0, 1}}  // kept axis innermost, two reduced axes
  };
  for (const st::Device d : cuda_devices()) {
    for (const st::DType t : {st::f32, st::f64, st::i32}) {
      for (const LayoutKind k : {LayoutKind::contiguous, LayoutKind::permuted}) {
        for (const auto& [shape, axes] : cases) {
          INFO(st::testing::dname(t)
               << " " << st::testing::layout_name(k) << " shape " << shape << " axes " << axes);
          const st::RawTensor x = st::testing::random_tensor(shape, t, k, rng);
          const st::RawTensor xd = same_layout_on(x, d);
          for (const auto& row : st::kReduceOps) {
            INFO(row.name);
            if (row.op == st::ReduceOp::sum && st::is_floating(t)) {
              // The device adds in double throughout; the CPU's blocked kernels add
              // runs of 32 in T first (raw/cpu/vmath_sum.inc), an f32 error that
              // grows with R (8e-6 at R = 4096 on the first GPU run). Against the
              // sum in f64, the device's differs by its last rounding to T.
              CHECK(compare(raw::cast(raw::reduce(row.op, xd, axes), st::f64),
                            raw::reduce(row.op, raw::cast(x, st::f64), axes), tol_for(t)) == "");
            } else {
              CHECK(compare(raw::reduce(row.op, xd, axes), raw::reduce(row.op, x, axes), 0) == "");
            }
          }
        }
      }
    }
    // Equal extremes in several slices: the first position wins; then NaNs in
    // two later slices: the first NaN wins, and max and min are NaN.
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> v(100000);
    for (double& e : v) e = u(rng);
    v[70000] = v[30000] = v[90000] = 5;
    v[50000] = v[10000] = -5;
    auto position = [&](st::ReduceOp op) {
      int64_t at = -1;
      raw::to_host(raw::reduce(op, raw::to_device(st::testing::make({100000}, st::f64, v), d), {0}),
                   &at);
      return at;
    };
    CHECK(position(st::ReduceOp::argmax) == 30000);
    CHECK(position(st::ReduceOp::argmin) == 10000);
    v[80000] = v[60000] = st::testing::kNaN;
    CHECK(position(st::ReduceOp::argmax) == 60000);
    CHECK(position(st::ReduceOp::argmin) == 60000);
    double m = 0;
    raw::to_host(raw::reduce(st::ReduceOp::max,
                             raw::to_device(st::testing::make({100000}, st::f64, v), d), {0}),
                 &m);
    CHECK(std::isnan(m));
  }
}
