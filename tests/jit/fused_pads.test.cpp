// SPDX-License-Identifier: MIT
// Tests for pads read by fused chains (jit/fuse.hpp): a pad joins the chain that reads it and
// gives eager's bits for every padded axis, operand layout, dtype and pad value, across block
// boundaries; a reverse pass under st::jit sums a tensor's slices' cotangents in one fused
// pass (the pads and their sums moved next to the last add, jit/fuse.hpp's pads_to_readers)
// with eager's bits; pads that must stay where they are (their operand written in place,
// their result returned or read twice) still give eager's results.
#include <catch2/catch.hpp>
#include <set>
#include <sstream>
#include <strata.hpp>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "support/jit_bits.hpp"
#include "support/same_bits.hpp"

namespace st = strata;
using strata::testing::count_steps;
using strata::testing::require_eager_bits;
using strata::testing::same_bits;
using strata::testing::special;

namespace {

/// A view of x's shape as `layout` names it: x itself (dense), x's elements under reversed axes
/// (transposed), x as every second element of a wider tensor (strided), or x's first row
/// broadcast along the first axis.
st::Tensor view_of(const st::Tensor& x, const std::string& layout) {
  if (layout == "transposed") {
    st::Shape axes, reversed;
    for (int64_t d = x.ndim() - 1; d >= 0; --d) {
      axes.push_back(d);
      reversed.push_back(x.shape()[std::size_t(d)]);
    }
    return x.reshape(reversed).permute(axes);
  }
  if (layout == "strided") {
    st::Shape wide = x.shape();
    wide[std::size_t(x.ndim() - 1)] *= 2;
    return st::stack({x, x}, -1).reshape(wide).ix(st::ellipsis, st::slice(0, st::none, 2));
  }
  if (layout == "broadcast") return x.ix(st::slice(0, 1)).expand(x.shape());
  return x;
}

}  // namespace

TEST_CASE("a pad read by a chain gives eager's bits for every padded axis and layout", "[jit]") {
  // Shapes whose padded blocks end mid-row; paddings of the last axis only (rows copied one
  // by one), of the first or a middle axis, of every axis, one-sided, none.
  struct Case {
    st::Shape shape;
    st::Pads pads;
  };
  const std::vector<Case> cases = {
      {{3001}, {{2, 5}}},
      {{37, 41}, {{0, 0}, {3, 1}}},
      {{37, 41}, {{4, 0}, {0, 0}}},
      {{37, 41}, {{1, 2}, {0, 7}}},
      {{5, 7, 9, 11}, {{0, 0}, {0, 0}, {0, 0}, {6, 0}}},
      {{5, 7, 9, 11}, {{0, 0}, {2, 3}, {0, 0}, {0, 0}}},
      {{5, 7, 9, 11}, {{1, 1}, {0, 2}, {3, 0}, {1, 4}}},
      {{301, 2, 1}, {{0, 0}, {0, 0}, {9, 5}}},
  };
  for (const st::DType dtype : {st::f32, st::f64}) {
    for (const Case& c : cases) {
      for (const std::string layout : {"dense", "transposed", "strided", "broadcast"}) {
        INFO(st::dtype_name(dtype) << " " << c.shape << " " << layout);
        const int64_t n = st::Layout::contiguous(c.shape).numel();
        auto f = [&](const st::Tensor& x) {
          const st::Tensor p = st::pad(view_of(x, layout), c.pads);
          return st::exp(p * 0.5) + p;
        };
        const std::string plan = require_eager_bits(f, special(n, dtype, 1).reshape(c.shape),
                                                    special(n, dtype, 2).reshape(c.shape));
        INFO(plan);
        CHECK(count_steps(plan, "pad").fused == 1);
        CHECK(count_steps(plan, "pad").alone == 0);
      }
    }
  }
}

TEST_CASE("a fused pad fills with the pad's value in every dtype", "[jit]") {
  // raw::pad takes any value (st::pad adds a nonzero one as a constant border); the fill is the
  // value converted to the operand's dtype: NaN, a negative zero, a fraction of an integer.
  const st::Pads pads = {{2, 1}, {0, 3}};
  for (const double value : {0.0, -0.0, 2.5, -7.0, std::nan("")}) {
    for (const st::DType dtype : {st::f32, st::f64, st::i32, st::i64}) {
      INFO(st::dtype_name(dtype) << " value " << value);
      auto f = [&](const st::Tensor& x) {
        const st::Tensor p(st::raw::pad(x.raw(), pads, value));
        return p + p;
      };
      const st::Tensor x0 = (special(60 * 50, st::f64, 3) * 100.0).reshape({60, 50}).to(dtype);
      const st::Tensor x1 = (special(60 * 50, st::f64, 4) * 100.0).reshape({60, 50}).to(dtype);
      const std::string plan = require_eager_bits(f, x0, x1);
      CHECK(count_steps(plan, "pad").fused == 1);
    }
  }
  // Booleans padded with true, read by a where.
  auto choose = [](const st::Tensor& c, const st::Tensor& v) {
    const st::Tensor p(st::raw::pad(c.raw(), {{1, 2}}, 1.0));
    return st::where(p, st::pad(v, {{1, 2}}), st::pad(v, {{1, 2}}) * -1.0);
  };
  const st::Tensor v = st::randn({4000}, 5, st::f64);
  auto jc = st::jit(choose);
  (void)jc(v > 0.0, v);
  const st::Tensor c = v > 0.5;
  CHECK(same_bits(jc(c, v), choose(c, v)));
  // The condition's pad and v's (its two equal pads merged into one).
  CHECK(count_steps(jc.explain(c, v), "pad").fused == 2);
}

TEST_CASE("pads of a scalar and of an empty tensor in a chain", "[jit]") {
  auto scalar = [](const st::Tensor& x) {
    const st::Tensor p(st::raw::pad(x.raw(), {}, 0.0));
    return p * 2.0 + 1.0;
  };
  const st::Tensor three = st::full({}, 3.25, st::f64);
  CHECK(same_bits(st::jit(scalar)(three), scalar(three)));
  auto empty = [](const st::Tensor& x) {
    const st::Tensor p(st::raw::pad(x.raw(), {{2, 1}, {0, 0}}, 4.0));
    return p * 2.0 + 1.0;
  };
  const st::Tensor e = st::zeros({0, 3}, st::f64);
  const st::Tensor got = st::jit(empty)(e);
  CHECK(same_bits(got, empty(e)));
  CHECK(got.to_vector<double>() == std::vector<double>(9, 9.0));
}

TEST_CASE("the gradient of a function of slices sums their cotangents in one fused pass", "[jit]") {
  // ba's reprojection pattern: every slice's cotangent is a pad of its own, added to z's as
  // the reverse pass reaches the slice, with other pullbacks in between (the slices are taken
  // at different depths); under st::jit the pads and adds move next to the last add and run in
  // one group, with eager's bits.
  auto f = [](const auto& z) {
    const auto a = z.ix(st::ellipsis, st::slice(0, 3));
    const auto u = st::sin(a) * 1.5;
    const auto b = z.ix(st::ellipsis, st::slice(3, 6));
    const auto v = st::cross(u, b, -1) + u * b;
    const auto c = z.ix(st::ellipsis, 9).unsqueeze(-1);
    const auto w = st::tanh(v * c) + st::exp(v);
    const auto d = z.ix(st::ellipsis, st::slice(7, 9));
    return st::sum(w * w) + st::sum(st::exp(d) * c);
  };
  for (const st::DType dtype : {st::f32, st::f64}) {
    INFO(st::dtype_name(dtype));
    auto g = [&](const st::Tensor& z) { return st::grad(f)(z); };
    const std::string plan = require_eager_bits(g, special(3000 * 12, dtype, 6).reshape({3000, 12}),
                                                special(3000 * 12, dtype, 7).reshape({3000, 12}));
    INFO(plan);
    CHECK(count_steps(plan, "pad").alone == 0);
    // z's four pads (its cotangent's shape) all in one group, and no add of that shape alone.
    const std::string padded = " -> " + std::string(st::dtype_name(dtype)) + "[3000, 12]";
    std::set<std::string> groups;
    int pads = 0, adds_alone = 0;
    std::istringstream lines(plan);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(padded) == std::string::npos || line.find(" run") == std::string::npos) {
        continue;
      }
      const std::size_t at = line.find("fused:");
      if (line.find(" pad(") != std::string::npos) {
        ++pads;
        groups.insert(at == std::string::npos ? "alone" : line.substr(at, line.find(' ', at) - at));
      }
      adds_alone += line.find(" add(") != std::string::npos && at == std::string::npos;
    }
    CHECK(pads == 4);
    CHECK(groups.size() == 1);
    CHECK(adds_alone == 0);
  }
  // The per-example Jacobian blocks, as GradBench's ba takes them.
  auto blocks = [&](const st::Tensor& z) {
    return st::vmap([&](const auto& zi) { return st::jacrev(f, st::argnums<0>, zi); })(z);
  };
  require_eager_bits(blocks, st::randn({700, 12}, 8, st::f64), st::randn({700, 12}, 9, st::f64));
}

TEST_CASE("pads that must not move or fuse still give eager's results", "[jit]") {
  const st::Tensor x0 = st::randn({300, 20}, 10, st::f64), x1 = st::randn({300, 20}, 11, st::f64);
  // Its operand written in place between the pad and its reader: the pad reads the old value.
  auto written = [](const st::Tensor& x) {
    st::Tensor y = x * 2.0;
    const st::Tensor p = st::pad(y, {{0, 0}, {1, 1}});
    const st::Tensor q = st::exp(x);
    y.add_(q);
    return p * 3.0 + 1.0;
  };
  require_eager_bits(written, x0, x1);
  // Returned as well as read; read twice, by steps far apart.
  auto returned = [](const st::Tensor& x) {
    const st::Tensor p = st::pad(x * 2.0, {{1, 0}, {0, 2}});
    return std::make_tuple(p, st::tanh(p) + 1.0);
  };
  auto jr = st::jit(returned);
  (void)jr(x0);
  const auto [p, t] = jr(x1);
  const auto [p_eager, t_eager] = returned(x1);
  CHECK(same_bits(p, p_eager));
  CHECK(same_bits(t, t_eager));
  auto twice = [](const st::Tensor& x) {
    const st::Tensor p = st::pad(x * 2.0, {{1, 0}, {0, 2}});
    const st::Tensor m = st::matmul(st::transpose(x, 0, 1), x);
    return st::sum(st::tanh(p)) + st::sum(m) + st::sum(p * 0.5);
  };
  require_eager_bits(twice, x0, x1);
}
