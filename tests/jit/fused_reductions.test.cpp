// SPDX-License-Identifier: MIT
// Tests for the reductions that end a fused chain (jit/fuse.hpp): sums, maxima and minima over
// a chain's trailing axes give eager's bits for every row length (a row inside a block, rows
// as long as a block, rows eager sums piece by piece and chunk by chunk), every dtype that
// fuses, rows whose extreme eager's scalar reducer decides (NaNs, zeros), keepdims or not,
// two reductions of one chain, ops after a reduction that read its rows, and the statistics
// of a layer norm and a softmax; reductions that cannot fuse (other axes, integers, long
// extremes, a transposed operand) run eagerly, and a long row's sum ends its group.
#include <catch2/catch.hpp>
#include <strata.hpp>
#include <string>

#include "jit/jit.hpp"
#include "support/jit_bits.hpp"
#include "support/same_bits.hpp"

namespace st = strata;
using strata::testing::count_steps;
using strata::testing::require_eager_bits;
using strata::testing::same_bits;
using strata::testing::special;

namespace {

/// The chain the reductions end: its values cover every sign, zeros, infinities and a NaN.
st::Tensor chain(const st::Tensor& v) { return st::tanh(v * 0.75) * 3.0 + v * 0.5; }

}  // namespace

TEST_CASE("a chain ending in a sum over its rows gives eager's bits for every row length",
          "[jit]") {
  // Rows inside a block (1, 7, 768), as long as a block or a sum's piece (2048, 4096), just
  // past a piece (4097: two pieces), several pieces (9000) and past a chunk (40000: the
  // pieces of two chunks), each with enough rows for several blocks and threads.
  for (const st::DType dtype : {st::f32, st::f64}) {
    for (const int64_t row : {1, 7, 768, 2048, 2049, 4096, 4097, 9000, 40000}) {
      const int64_t rows = std::max<int64_t>(3, 150000 / row);
      for (const bool keep : {false, true}) {
        INFO(st::dtype_name(dtype) << " row " << row << " keepdims " << keep);
        auto f = [keep](const st::Tensor& v) { return st::sum(chain(v), {-1}, keep); };
        const std::string plan =
            require_eager_bits(f, special(rows * row, dtype, 1).reshape({rows, row}),
                               special(rows * row, dtype, 2).reshape({rows, row}));
        INFO(plan);
        CHECK(count_steps(plan, "reduce").fused == 1);
        CHECK(count_steps(plan, "reduce").alone == 0);
      }
    }
  }
}

TEST_CASE("a chain ending in a sum over several trailing axes or every axis", "[jit]") {
  for (const st::DType dtype : {st::f32, st::f64}) {
    // Two trailing axes (rows of 12000: three pieces), and every axis of 60000 elements (two
    // chunks) and of 700 (one piece).
    auto two = [](const st::Tensor& v) { return st::sum(chain(v), {1, 2}); };
    const std::string p2 =
        require_eager_bits(two, special(5 * 12000, dtype, 3).reshape({5, 40, 300}),
                           special(5 * 12000, dtype, 4).reshape({5, 40, 300}));
    CHECK(count_steps(p2, "reduce").fused == 1);
    for (const int64_t n : {700, 60000}) {
      auto all = [](const st::Tensor& v) { return st::sum(chain(v)); };
      const std::string pa = require_eager_bits(all, special(n, dtype, 5).reshape({n / 100, 100}),
                                                special(n, dtype, 6).reshape({n / 100, 100}));
      CHECK(count_steps(pa, "reduce").fused == 1);
    }
  }
}

TEST_CASE("a chain ending in a max or min over its rows gives eager's bits", "[jit]") {
  // The special values put a NaN, infinities and zeros in row 0; clamping at 0 makes most rows'
  // extreme a zero of either sign. Those are the rows the vector kernel declines and eager's
  // scalar reducer decides.
  for (const st::DType dtype : {st::f32, st::f64}) {
    for (const int64_t row : {1, 5, 100, 2048, 4096}) {
      const int64_t rows = std::max<int64_t>(3, 60000 / row);
      INFO(st::dtype_name(dtype) << " row " << row);
      const st::Tensor x0 = special(rows * row, dtype, 7).reshape({rows, row});
      const st::Tensor x1 = special(rows * row, dtype, 8).reshape({rows, row});
      auto f = [](const st::Tensor& v) {
        const st::Tensor y = chain(v);
        return st::max(y, {1}) + st::min(y, {1});
      };
      CHECK(count_steps(require_eager_bits(f, x0, x1), "reduce").fused >= 1);
      auto clamped = [](const st::Tensor& v) {
        return st::max(st::minimum(chain(v), 0.0), {1}) * st::min(st::maximum(v * -1.0, 0.0), {1});
      };
      require_eager_bits(clamped, x0, x1);
      // st::min is -max(-x); the raw minimum is a primitive of its own.
      auto raw_min = [](const st::Tensor& v) {
        const st::Tensor y = st::maximum(chain(v), 0.0);
        return st::Tensor(st::raw::reduce(st::ReduceOp::min, y.raw(), {1}, false)) * 2.0;
      };
      CHECK(count_steps(require_eager_bits(raw_min, x0, x1), "reduce").fused == 1);
    }
  }
}

TEST_CASE("two reductions of one chain, and a reduction of the chain's input", "[jit]") {
  // sum(y) and sum(y * y) in one pass; sum(v) of the group's input; y also returned.
  auto f = [](const st::Tensor& v) {
    const st::Tensor y = chain(v);
    return std::make_tuple(y, st::sum(y, {-1}), st::sum(y * y, {-1}), st::sum(v, {-1}));
  };
  auto jf = st::jit(f);
  const st::Tensor x0 = special(300 * 500, st::f64, 9).reshape({300, 500});
  const st::Tensor x1 = special(300 * 500, st::f64, 10).reshape({300, 500});
  (void)jf(x0);
  const auto [y, s, s2, sv] = jf(x1);
  const auto [ye, se, s2e, sve] = f(x1);
  CHECK(same_bits(y, ye));
  CHECK(same_bits(s, se));
  CHECK(same_bits(s2, s2e));
  CHECK(same_bits(sv, sve));
  const strata::testing::StepCount r = count_steps(jf.explain(x1), "reduce");
  CHECK(r.fused == 3);
  CHECK(r.alone == 0);
}

TEST_CASE("layer norm and softmax under jit: eager's bits, their statistics fused", "[jit]") {
  for (const st::DType dtype : {st::f32, st::f64}) {
    const st::Tensor x0 = special(64 * 768, dtype, 11).reshape({64, 768});
    const st::Tensor x1 = (st::randn({64, 768}, 12, st::f64) * 4 + 1).to(dtype);
    auto ln = [](const st::Tensor& v) { return st::layer_norm(st::gelu(v), {768}); };
    const std::string pl = require_eager_bits(ln, x0, x1);
    INFO(pl);
    CHECK(count_steps(pl, "reduce").fused == 2);               // the mean's sum and the variance's
    CHECK(pl.find("in 1 fused groups") != std::string::npos);  // one pass
    auto sm = [](const st::Tensor& v) { return st::softmax(v * 0.5, -1); };
    const std::string ps = require_eager_bits(sm, x0, x1);
    INFO(ps);
    CHECK(count_steps(ps, "reduce").fused >= 1);  // the sum of the exponentials
    // The gradient of a layer norm's loss: the backward pass's row sums fuse too.
    auto loss = [](const auto& v) { return st::sum(st::layer_norm(v, {768}) * st::tanh(v)); };
    auto g = st::jit(st::grad(loss));
    (void)g(x0);
    CHECK(same_bits(g(x1), st::grad(loss)(x1)));
  }
}

TEST_CASE("reductions that cannot end a chain run eagerly, with eager's bits", "[jit]") {
  const st::Tensor x0 = special(200 * 300, st::f32, 13).reshape({200, 300});
  const st::Tensor x1 = special(200 * 300, st::f32, 14).reshape({200, 300});
  // Over the leading axis; of integers; the max of rows longer than a piece; of a transpose.
  auto leading = [](const st::Tensor& v) { return st::sum(chain(v), {0}); };
  CHECK(count_steps(require_eager_bits(leading, x0, x1), "reduce").alone == 1);
  auto ints = [](const st::Tensor& v) { return st::sum((chain(v) * 100.0).to(st::i32), {1}); };
  CHECK(count_steps(require_eager_bits(ints, x0, x1), "reduce").alone == 1);
  auto long_max = [](const st::Tensor& v) { return st::max(chain(v).reshape({10, 6000}), {1}); };
  CHECK(count_steps(require_eager_bits(long_max, x0, x1), "reduce").alone == 1);
  auto turned = [](const st::Tensor& v) { return st::sum(st::transpose(chain(v), 0, 1), {1}); };
  CHECK(count_steps(require_eager_bits(turned, x0, x1), "reduce").alone == 1);
  // A long row's sum ends its group: rows cut into pieces are summed only once every block
  // has run, so the step that reads the sum starts another group.
  auto centred = [](const st::Tensor& v) {
    const st::Tensor y = chain(v);
    return st::exp(y - st::sum(y, {1}, true)) * 2.0;
  };
  const std::string pc =
      require_eager_bits(centred, x0.reshape({4, 15000}), x1.reshape({4, 15000}));
  CHECK(count_steps(pc, "reduce").fused == 1);
  CHECK(pc.find("fused:1") != std::string::npos);
}

TEST_CASE("ops after a reduction read its rows in the same pass", "[jit]") {
  // The row values (the sum, the mean from it, a per-row input) read by row ops and, spread
  // along their rows, by ops of the full shape: one group for every row length a block holds.
  for (const st::DType dtype : {st::f32, st::f64}) {
    for (const int64_t row : {2, 5, 768, 2048, 3000, 4096}) {
      const int64_t rows = std::max<int64_t>(3, 50000 / row);
      INFO(st::dtype_name(dtype) << " row " << row);
      const st::Tensor scale = st::randn({rows, 1}, 15, st::f64).to(dtype);
      auto f = [&](const st::Tensor& v) {
        const st::Tensor y = chain(v);
        const st::Tensor mean = st::sum(y, {1}, true) * (1.0 / double(y.shape()[1]));
        // scale: a [rows, 1] input, gathered; the mean both second and first operand.
        const st::Tensor d = (y - mean) * scale + mean * 0.5 / (y * y + 1.0);
        const st::Tensor top = st::max(d, {1});  // keepdims false: [rows], read as [rows, 1]
        return std::make_pair(st::exp(d - top.reshape({rows, 1})), mean * scale + 1.0);
      };
      auto jf = st::jit(f);
      const st::Tensor x0 = special(rows * row, dtype, 16).reshape({rows, row});
      const st::Tensor x1 = special(rows * row, dtype, 17).reshape({rows, row});
      (void)jf(x0);
      const auto [e, m] = jf(x1);
      const auto [ee, me] = f(x1);
      CHECK(same_bits(e, ee));
      CHECK(same_bits(m, me));
      const std::string plan = jf.explain(x1);
      INFO(plan);
      CHECK(plan.find("in 1 fused groups") != std::string::npos);
      CHECK(count_steps(plan, "reduce").fused == 2);
    }
  }
}
