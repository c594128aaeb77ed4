// SPDX-License-Identifier: MIT
// The CPU backend's fast paths against naive loops in double precision:
// tiled walks of transposed operands (tile edges, odd sizes, rank 3),
// broadcast-scalar and negative-stride operands, thread-threshold boundaries
// (same bits on 1 and 2 threads), float sums (exactness and accuracy on every
// axis), matmul with column-sliced, transposed and batched operands (uniform
// and non-uniform batch strides) on both sides of the oneDNN size threshold,
// the caching allocator in a loop of same-shaped ops, and one-element walks
// (no plan) at any offset and rank.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support/device.hpp"
#include "support/elementwise_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
namespace raw = strata::raw;
using st::BinaryOp;
using st::RawTensor;
using st::Shape;
using st::UnaryOp;
using Idx = std::vector<int64_t>;

TEST_CASE("transposed operands walk in tiles and match the reference", "[raw]") {
  for (st::DType t : {st::f32, st::f64}) {
    for (const Shape& s : {Shape{130, 70}, Shape{64, 64}, Shape{65, 129}, Shape{200, 3}}) {
      const RawTensor base = raw::normal({s[1], s[0]}, 3, t);
      const RawTensor xt = base.transpose(0, 1);  // strides (1, s[0])
      const RawTensor y = raw::normal(s, 4, t);
      INFO(tt::dname(t) << " shape " << s);
      CHECK(tt::first_mismatch(raw::unary(UnaryOp::exp, xt), s, t,
                               [&](const Idx& i) { return std::exp(tt::get(xt, i)); }) == "");
      CHECK(tt::first_mismatch(raw::binary(BinaryOp::add, xt, y), s, t,
                               [&](const Idx& i) { return tt::get(xt, i) + tt::get(y, i); }) == "");
      CHECK(tt::first_mismatch(raw::binary(BinaryOp::sub, y, xt.flip(0)), s, t, [&](const Idx& i) {
              return tt::get(y, i) - tt::get(xt.flip(0), i);
            }) == "");
      CHECK(tt::first_mismatch(raw::contiguous(xt), s, t,
                               [&](const Idx& i) { return tt::get(xt, i); }) == "");
    }
    // Rank 3, the fast dim of x in the middle of the result's.
    const RawTensor b3 = raw::normal({5, 90, 70}, 5, t);
    const RawTensor x3 = b3.permute({0, 2, 1});  // [5, 70, 90]
    CHECK(tt::first_mismatch(raw::unary(UnaryOp::sin, x3), x3.shape(), t,
                             [&](const Idx& i) { return std::sin(tt::get(x3, i)); }) == "");
    const RawTensor y3 = raw::normal({70, 5, 90}, 6, t).permute({1, 0, 2});
    CHECK(tt::first_mismatch(raw::binary(BinaryOp::mul, x3, y3), x3.shape(), t,
                             [&](const Idx& i) { return tt::get(x3, i) * tt::get(y3, i); }) == "");
  }
}

TEST_CASE("broadcast-scalar and negative-stride operands take their fast paths correctly",
          "[raw]") {
  for (st::DType t : {st::f32, st::f64, st::i32, st::i64}) {
    const RawTensor x = raw::normal({300, 257}, 7, st::f64);
    const RawTensor xs =
        st::is_floating(t)
            ? raw::cast(x, t)
            : raw::cast(raw::binary(BinaryOp::mul, x, raw::full(x.shape(), 10, st::f64)), t);
    const RawTensor s = raw::full({1, 1}, 3, t).expand({300, 257});
    for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::maximum}) {
      auto f = [&](double a, double b) {
        switch (op) {
          case BinaryOp::add:
            return a + b;
          case BinaryOp::sub:
            return a - b;
          case BinaryOp::mul:
            return a * b;
          default:
            return a < b ? b : a;
        }
      };
      for (const RawTensor& a : {xs, xs.flip(1)}) {
        INFO(tt::dname(t) << " op " << st::op_name(op) << " strides " << a.strides());
        CHECK(tt::first_mismatch(raw::binary(op, a, s), a.shape(), t,
                                 [&](const Idx& i) { return f(tt::get(a, i), 3.0); }) == "");
        CHECK(tt::first_mismatch(raw::binary(op, s, a), a.shape(), t,
                                 [&](const Idx& i) { return f(3.0, tt::get(a, i)); }) == "");
      }
    }
  }
  const RawTensor x = raw::normal({1000}, 8, st::f32).flip(0);
  CHECK(tt::first_mismatch(raw::unary(UnaryOp::tanh, x), x.shape(), st::f32,
                           [&](const Idx& i) { return std::tanh(tt::get(x, i)); }) == "");
  const RawTensor c = raw::full({1}, 0.25, st::f32).expand({5000});
  CHECK(tt::first_mismatch(raw::unary(UnaryOp::log, c), c.shape(), st::f32,
                           [&](const Idx&) { return std::log(0.25); }) == "");
}

TEST_CASE("results are the same bits on 1 and 2 threads around the parallel threshold",
          "[raw][threads]") {
  tt::ThreadCountGuard restore;
  const int64_t grain = int64_t{1} << 15;
  for (int64_t n : {grain - 1, grain, grain + 1, 2 * grain + 3, int64_t{1} << 20}) {
    const RawTensor x = raw::normal({n}, 9, st::f32);
    const RawTensor y = raw::normal({n}, 10, st::f32);
    std::vector<std::vector<float>> got[2];
    for (int threads : {1, 2}) {
      st::set_num_threads(threads);
      auto& g = got[threads - 1];
      g.push_back(tt::host_elems<float>(raw::unary(UnaryOp::exp, x)));
      g.push_back(tt::host_elems<float>(raw::binary(BinaryOp::add, x, y)));
      g.push_back(tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, x, {0})));
      g.push_back(tt::host_elems<float>(
          raw::reduce(st::ReduceOp::sum, raw::reshape(x.slice(0, 0, n / 3 * 3), {n / 3, 3}), {0})));
    }
    INFO("n = " << n);
    CHECK(got[0] == got[1]);
    const std::vector<float> e = got[0][0];
    const std::vector<float> xv = tt::host_elems<float>(x);
    bool ok = true;
    for (std::size_t i = 0; i < e.size(); ++i) {
      ok = ok && tt::same_value(e[i], double(float(std::exp(double(xv[i])))), 1e-6);
    }
    CHECK(ok);
  }
}

TEST_CASE("float sums are exact on ones and accurate on normals over every axis", "[raw]") {
  const RawTensor ones = raw::full({int64_t{1} << 24}, 1.0, st::f32);
  CHECK(tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, ones, {0}))[0] == 16777216.0f);
  const RawTensor ones2 = raw::full({4096, 4096}, 1.0, st::f32);
  CHECK(tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, ones2, {0, 1}))[0] == 16777216.0f);

  const int64_t n = 10'000'000;
  const RawTensor x = raw::normal({n}, 11, st::f32);
  const std::vector<float> xv = tt::host_elems<float>(x);
  double exact = 0;
  for (float v : xv) exact += double(v);
  const double got = tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, x, {0}))[0];
  INFO("sum " << got << " vs f64 " << exact);
  CHECK(std::fabs(got - exact) <= 1e-5 * std::fabs(exact));

  // Axis 0, axis 1 and all of a matrix, contiguous and transposed, vs double loops.
  const int64_t r = 1000, c = 777;
  const RawTensor m = raw::reshape(raw::normal({r * c}, 12, st::f32), {r, c});
  for (const RawTensor& a : {m, m.transpose(0, 1)}) {
    const int64_t R = a.shape()[0], C = a.shape()[1];
    std::vector<double> rows(std::size_t(R), 0.0), cols(std::size_t(C), 0.0);
    double all = 0;
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t j = 0; j < C; ++j) {
        const double v = tt::get(a, {i, j});
        rows[std::size_t(i)] += v, cols[std::size_t(j)] += v, all += v;
      }
    }
    const auto s1 = tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, a, {1}));
    const auto s0 = tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, a, {0}));
    const auto sa = tt::host_elems<float>(raw::reduce(st::ReduceOp::sum, a, {0, 1}));
    double worst = 0;
    for (int64_t i = 0; i < R; ++i)
      worst = std::max(worst, std::fabs(s1[std::size_t(i)] - rows[std::size_t(i)]));
    for (int64_t j = 0; j < C; ++j)
      worst = std::max(worst, std::fabs(s0[std::size_t(j)] - cols[std::size_t(j)]));
    INFO("strides " << a.strides());
    CHECK(worst < 1e-3);
    CHECK(std::fabs(sa[0] - all) < 1e-2);
  }
}

namespace {

/// "" when matmul(a, b) matches a double loop within a tolerance scaled by
/// sum |a_ip * b_pj| (the rounding a float dot product can accumulate).
std::string matmul_loop_mismatch(const RawTensor& a, const RawTensor& b) {
  const RawTensor c = raw::matmul(a, b);
  const int64_t nd = c.ndim(), k = a.shape()[nd - 1];
  const double rel = c.dtype() == st::f32 ? 1e-5 : 1e-13;
  std::string bad;
  tt::for_each_index(c.shape(), [&](const Idx& i) {
    if (!bad.empty()) return;
    double s = 0, mag = 0;
    Idx ia = i, ib = i;
    for (int64_t p = 0; p < k; ++p) {
      ia[std::size_t(nd - 1)] = p;
      ib[std::size_t(nd - 2)] = p;
      s += tt::get(a, ia) * tt::get(b, ib);
      mag += std::fabs(tt::get(a, ia) * tt::get(b, ib));
    }
    const double g = tt::get(c, i);
    if (!(std::fabs(g - s) <= rel * mag)) {
      bad = "at " + tt::index_str(i) + ": got " + std::to_string(g) + ", expected " +
            std::to_string(s);
    }
  });
  return bad;
}

}  // namespace

TEST_CASE("matmul reads sliced, transposed and batched operands in place", "[raw]") {
  for (st::DType t : {st::f32, st::f64}) {
    for (int64_t n : {7, 70}) {  // below and above the oneDNN threshold
      const int64_t m = n + 3, k = n + 5;
      INFO(tt::dname(t) << " n " << n);
      const RawTensor a = raw::normal({m, k}, 20, t), b = raw::normal({k, n}, 21, t);
      CHECK(matmul_loop_mismatch(a, b) == "");
      const RawTensor wide = raw::normal({m, 2 * k + 1}, 22, t);
      const RawTensor a_cols = wide.slice(1, 1, k + 1);  // column-sliced: row stride 2k+1
      CHECK(matmul_loop_mismatch(a_cols, b) == "");
      const RawTensor bt = raw::normal({n, k}, 23, t).transpose(0, 1);
      CHECK(matmul_loop_mismatch(a, bt) == "");
      CHECK(matmul_loop_mismatch(raw::normal({k, m}, 24, t).transpose(0, 1), bt) == "");
      const RawTensor b_cols = raw::normal({k, 3 * n}, 25, t).slice(1, n, 2 * n);
      CHECK(matmul_loop_mismatch(a_cols, b_cols) == "");
      // Batched, uniform batch strides (contiguous) and non-uniform ones (a
      // permuted, sliced base: the batch dims do not merge).
      const RawTensor ab = raw::normal({2, 3, m, k}, 26, t);
      const RawTensor bb = raw::normal({2, 3, k, n}, 27, t);
      CHECK(matmul_loop_mismatch(ab, bb) == "");
      const RawTensor ab2 =
          raw::normal({3, 4, m, k}, 28, t).permute({1, 0, 2, 3}).slice(0, 0, 4, 2);
      const RawTensor bb2 = raw::normal({3, 2, n, k}, 29, t).permute({1, 0, 3, 2});
      CHECK(matmul_loop_mismatch(ab2, bb2) == "");
      // A broadcast batch (zero stride) on one side.
      const RawTensor b1 = raw::normal({1, 1, k, n}, 30, t).expand({2, 3, k, n});
      CHECK(matmul_loop_mismatch(ab, b1) == "");
    }
  }
}

TEST_CASE("a loop of same-shaped ops stops calling the system allocator", "[raw]") {
  const RawTensor x = raw::normal({512, 300}, 31, st::f32);
  const RawTensor w = raw::normal({300, 200}, 32, st::f32);
  auto step = [&] {
    const RawTensor h = raw::unary(UnaryOp::tanh, raw::matmul(x, w));
    const RawTensor y =
        raw::binary(BinaryOp::add, h, raw::unary(UnaryOp::exp, h.transpose(0, 1)).transpose(0, 1));
    return raw::reduce(st::ReduceOp::sum, y, {0});
  };
  step();  // the first iteration fills the free lists
  const st::AllocatorStats before = st::testing::test_allocator().stats();
  for (int i = 0; i < 20; ++i) step();
  const st::AllocatorStats after = st::testing::test_allocator().stats();
  CHECK(after.from_system == before.from_system);
  CHECK(after.from_cache >= before.from_cache + 20 * 5);
}

TEST_CASE("one-element operands at any offset and rank skip the plan and stay right", "[raw]") {
  // Every operand a one-element view somewhere inside a larger random tensor (0-d, [1],
  // [1, 1, 1], a broadcast [1, 1] of a 0-d, a flipped [1]), each op against a double
  // computation from the elements read, and the base's other elements left as they were.
  for (st::DType t : {st::f32, st::f64}) {
    const RawTensor a = raw::normal({4, 5}, 21, t), b = raw::normal({3, 7}, 22, t);
    const RawTensor c =
        raw::binary(BinaryOp::gt, raw::normal({2, 3}, 23, t), raw::normal({2, 3}, 24, t));
    const std::vector<std::pair<RawTensor, RawTensor>> pairs = {
        {a.select(0, 2).select(0, 3), b.select(0, 1).select(0, 6)},      // 0-d, 0-d
        {a.slice(0, 3, 4).select(1, 4), b.slice(1, 2, 3).select(0, 2)},  // [1], [1]
        {raw::reshape(a.slice(0, 1, 2).slice(1, 1, 2), {1, 1, 1}),
         raw::reshape(b.slice(0, 2, 3).slice(1, 5, 6), {1, 1, 1})},  // [1, 1, 1]
        {a.slice(0, 3, 4).slice(1, 0, 1), b.select(0, 0).select(0, 3).expand({1, 1})},
        {a.slice(0, 0, 1).select(1, 2).flip(0), b.slice(0, 1, 2).select(1, 0)},  // flipped [1]
    };
    for (const auto& [x, y] : pairs) {
      const double xv = tt::values(x)[0], yv = tt::values(y)[0];
      INFO(tt::dname(t) << " shape " << x.shape() << " offsets " << x.offset() << ", "
                        << y.offset());
      const double tol = tt::rel_tol(t);
      CHECK(tt::same_value(tt::values(raw::unary(UnaryOp::exp, x))[0], std::exp(xv), tol));
      CHECK(tt::same_value(tt::values(raw::unary(UnaryOp::neg, x))[0], -xv, 0));
      CHECK(tt::same_value(tt::values(raw::binary(BinaryOp::sub, x, y))[0], xv - yv, tol));
      CHECK(tt::same_value(tt::values(raw::binary(BinaryOp::safe_mul, x, y))[0], xv * yv, tol));
      const RawTensor cond = raw::reshape(c.select(0, 1).select(0, 2), x.shape());
      const bool cv = tt::values(cond)[0] != 0;
      CHECK(tt::values(raw::where(cond, x, y))[0] == (cv ? xv : yv));
      CHECK(tt::values(raw::contiguous(x))[0] == xv);
      CHECK(tt::values(raw::cast(x, st::f64))[0] == xv);
      // In place, into a copy of a's storage: only the one element changes.
      const RawTensor base = raw::contiguous(a);
      const RawTensor dst = base.view(x.layout());
      const std::vector<double> before = tt::values(base);
      raw::axpby_(dst, 2, y, -1);
      std::vector<double> want = before;
      const std::size_t at = std::size_t(x.offset());
      want[at] = 2 * before[at] - yv;
      const std::vector<double> got = tt::values(base);
      bool ok = true;
      for (std::size_t i = 0; i < got.size(); ++i) {
        ok = ok && (i == at ? tt::same_value(got[i], want[i], 4 * tol) : got[i] == want[i]);
      }
      CHECK(ok);
      raw::fill_(dst, 0.5);
      CHECK(tt::values(base)[at] == 0.5);
      CHECK(tt::values(base)[(at + 1) % got.size()] == got[(at + 1) % got.size()]);
    }
  }
}
