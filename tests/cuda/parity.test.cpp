// SPDX-License-Identifier: MIT
// Device parity: every primitive on every CUDA device against the CPU backend,
// on the same random values in the same layouts (contiguous, permuted,
// sliced, flipped, broadcast, offset). Floats agree to rounding (reductions
// may add in another order); integers, bools, gathers, scatter-adds and the
// uniform random stream agree exactly. Then the layers above: composites,
// indexing and derivatives of orders 1 and 2 computed on the device.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/elementwise_ref.hpp"
#include "support/op_reference.hpp"

namespace st = strata;
namespace raw = strata::raw;
using st::testing::LayoutKind;

namespace {

std::vector<st::Device> cuda_devices() {
  std::vector<st::Device> d;
  for (int i = 0; i < st::cuda_device_count(); ++i) d.push_back(st::Device::cuda(i));
  return d;
}

/// The same storage bytes and layout as the CPU tensor t, on device d.
st::RawTensor same_layout_on(const st::RawTensor& t, st::Device d) {
  const std::size_t es = st::dtype_size(t.dtype());
  const int64_t n = int64_t(t.storage()->bytes() / es);
  const st::RawTensor flat = raw::from_host(t.storage()->data(), {n}, t.dtype(), d);
  return st::RawTensor(flat.storage(), t.layout(), t.dtype());
}

std::vector<double> host_values(const st::RawTensor& t) {
  return st::testing::values(raw::to_device(t, st::Device::cpu()));
}

/// "" when a (device) equals b (CPU): exactly, or to `tol` relative for floats.
std::string compare(const st::RawTensor& dev, const st::RawTensor& cpu, double tol) {
  if (dev.shape() != cpu.shape() || dev.dtype() != cpu.dtype()) return "shape or dtype differ";
  const std::vector<double> a = host_values(dev), b = st::testing::values(cpu);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool both_nan = std::isnan(a[i]) && std::isnan(b[i]);
    const double err = std::abs(a[i] - b[i]);
    if (!both_nan && !(a[i] == b[i] || err <= tol * (1 + std::abs(b[i])))) {
      return "element " + std::to_string(i) + ": device " + std::to_string(a[i]) + " vs cpu " +
             std::to_string(b[i]);
    }
  }
  return "";
}

double tol_for(st::DType t) { return t == st::f32 ? 2e-6 : t == st::f64 ? 1e-13 : 0.0; }

}  // namespace

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
