// SPDX-License-Identifier: MIT
// Tests for jit/jit.hpp and jit/plan.hpp: a plan replays f bit for bit (the same kernels on the
// same operands as eager), for every transform wrapped in jit; signatures retrace; captured
// tensors are read at every call; side effects run once; bad uses give clear errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <map>
#include <strata.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "jit/jit.hpp"
#include "support/message_of.hpp"
#include "support/naive.hpp"
#include "support/same_bits.hpp"

namespace st = strata;
using strata::testing::same_bits;

namespace {

/// A smooth scalar function of a vector, several ops deep (elementwise, reductions, matmul).
auto smooth = [](const auto& x) {
  auto m = st::matmul(x.reshape({2, 3}), st::transpose(x.reshape({2, 3}), 0, 1));
  return st::sum(st::tanh(x) * st::exp(x * 0.5)) + st::sum(m * m) * 0.1;
};

/// Restores STRATA_JIT when a test ends.
struct JitEnvGuard {
  ~JitEnvGuard() { unsetenv("STRATA_JIT"); }
};

}  // namespace

TEST_CASE("jit replays a function bit for bit on new inputs", "[jit]") {
  auto f = [](const st::Tensor& x, const st::Tensor& y) { return st::sin(x) * y + st::sum(x * x); };
  auto jf = st::jit(f);
  st::reset_jit_stats();
  const st::Tensor x0 = st::randn({5, 4}, 1, st::f64), y0 = st::randn({5, 4}, 2, st::f64);
  REQUIRE(same_bits(jf(x0, y0), f(x0, y0)));
  for (uint64_t seed = 3; seed < 6; ++seed) {
    const st::Tensor x = st::randn({5, 4}, seed, st::f64),
                     y = st::randn({5, 4}, seed + 10, st::f64);
    REQUIRE(same_bits(jf(x, y), f(x, y)));
  }
  const st::JitStats s = st::jit_stats();
  CHECK(s.traces == 1);
  CHECK(s.hits == 3);
  CHECK(s.steps_run >= 4);
}

TEST_CASE("jit captures grad, value_and_grad, hessian and vmap whole", "[jit]") {
  const st::Tensor x0 = st::randn({6}, 7, st::f64), x1 = st::randn({6}, 8, st::f64);
  SECTION("grad") {
    auto g = st::jit(st::grad(smooth));
    REQUIRE(same_bits(g(x0), st::grad(smooth)(x0)));
    REQUIRE(same_bits(g(x1), st::grad(smooth)(x1)));
  }
  SECTION("value_and_grad") {
    auto vg = st::jit(st::value_and_grad(smooth));
    (void)vg(x0);
    auto [v, g] = vg(x1);
    auto [ve, ge] = st::value_and_grad(smooth)(x1);
    REQUIRE(same_bits(v, ve));
    REQUIRE(same_bits(g, ge));
  }
  SECTION("hessian") {
    auto h = st::jit(st::hessian(smooth));
    (void)h(x0);
    REQUIRE(same_bits(h(x1), st::hessian(smooth)(x1)));
  }
  SECTION("sparse_jacfwd and sparse_hessian on a plan") {
    // A banded Jacobian; the plans (traced patterns, colourings) are captured constants.
    auto band = [](const auto& x) {
      const auto lo = x.ix(st::slice(0, -2)), mid = x.ix(st::slice(1, -1)),
                 hi = x.ix(st::slice(2, st::none));
      return st::pad(lo * mid - st::sin(hi), {{1, 1}}) + x;
    };
    const st::SparsePlan jp = st::sparse_jacfwd_plan(band, x0);
    auto jac =
        st::jit([&](const st::Tensor& x) { return st::sparse_jacfwd(band, x, jp).values(); });
    (void)jac(x0);
    REQUIRE(same_bits(jac(x1), st::sparse_jacfwd(band, x1, jp).values()));
    auto energy = [&](const auto& x) { return st::sum(band(x) * band(x)); };
    const st::SparsePlan hp = st::sparse_hessian_plan(energy, x0);
    auto hes =
        st::jit([&](const st::Tensor& x) { return st::sparse_hessian(energy, x, hp).values(); });
    (void)hes(x0);
    REQUIRE(same_bits(hes(x1), st::sparse_hessian(energy, x1, hp).values()));
  }
  SECTION("vmap of grad") {
    auto per_example = st::jit(st::vmap(st::grad(smooth)));
    const st::Tensor b0 = st::randn({4, 6}, 9, st::f64), b1 = st::randn({4, 6}, 10, st::f64);
    (void)per_example(b0);
    REQUIRE(same_bits(per_example(b1), st::vmap(st::grad(smooth))(b1)));
  }
}

TEST_CASE("grad of a jitted function differentiates f", "[jit]") {
  auto jf = st::jit(smooth);
  const st::Tensor x = st::randn({6}, 11, st::f64);
  REQUIRE(same_bits(st::grad(jf)(x), st::grad(smooth)(x)));
  REQUIRE(same_bits(st::jit(st::grad(jf))(x), st::grad(smooth)(x)));
}

TEST_CASE("jit traces again for a new signature and keeps a bounded cache", "[jit]") {
  auto f = [](const st::Tensor& x, double scale) { return st::exp(x) * scale; };
  auto jf = st::jit(f);
  st::reset_jit_stats();
  (void)jf(st::ones({3}), 2.0);
  (void)jf(st::ones({3}), 2.0);
  (void)jf(st::ones({4}), 2.0);           // a new shape
  (void)jf(st::ones({3}), 3.0);           // a new non-tensor value
  (void)jf(st::ones({3}, st::f64), 2.0);  // a new dtype (ones is f32 by default)
  const st::Tensor wide = st::randn({3, 4}, 12, st::f64);
  const st::Tensor x = st::transpose(wide, 0, 1);  // new strides
  REQUIRE(same_bits(jf(x, 2.0), f(x, 2.0)));
  CHECK(st::jit_stats().traces == 5);
  CHECK(st::jit_stats().hits == 1);
  CHECK(jf.cached() == 5);
  jf.set_cache_size(2);
  CHECK(jf.cached() == 2);
  REQUIRE(same_bits(jf(st::ones({3}), 2.0), f(st::ones({3}), 2.0)));
  CHECK_THROWS_AS(jf.set_cache_size(0), st::ValueError);
}

TEST_CASE("jit keys a floating-point argument by its value, sign of zero and NaN included",
          "[jit]") {
  auto f = [](const st::Tensor& x, double c) { return 1.0 / (x * c); };
  auto jf = st::jit(f);
  const st::Tensor x = st::ones({2}, st::f64);
  st::reset_jit_stats();
  REQUIRE(same_bits(jf(x, 0.0), f(x, 0.0)));
  REQUIRE(same_bits(jf(x, -0.0), f(x, -0.0)));  // -inf, not the +inf of 0.0's plan
  CHECK(jf(x, -0.0).to_vector<double>()[0] == -INFINITY);
  (void)jf(x, NAN);
  (void)jf(x, NAN);  // a NaN finds the plan traced for a NaN
  CHECK(st::jit_stats().traces == 3);
  CHECK(st::jit_stats().hits == 2);
}

TEST_CASE("jit traces again when a captured tensor it read on the host changes", "[jit]") {
  st::Tensor scale = st::full({}, 0.5, st::f64);
  auto f = [&scale](const st::Tensor& x) { return x * scale.item<double>(); };
  auto jf = st::jit(f);
  const st::Tensor x = st::ones({2}, st::f64);
  st::reset_jit_stats();
  REQUIRE(jf(x).to_vector<double>() == std::vector<double>{0.5, 0.5});
  REQUIRE(jf(x).to_vector<double>() == std::vector<double>{0.5, 0.5});
  scale.fill_(2.0);  // the value fixed into the plan is stale now
  REQUIRE(jf(x).to_vector<double>() == std::vector<double>{2, 2});
  scale = st::full({}, 3.0, st::f64);  // a new tensor: the one read is gone
  REQUIRE(jf(x).to_vector<double>() == std::vector<double>{3, 3});
  CHECK(st::jit_stats().traces == 3);
  CHECK(st::jit_stats().hits == 1);
  // Reading a captured tensor and then writing it would replay the first value forever.
  st::Tensor count = st::zeros({}, st::f64);
  auto counting = st::jit([&count](const st::Tensor& y) {
    const double c = count.item<double>();
    count.add_(st::ones({}, st::f64));
    return y + c;
  });
  REQUIRE_THROWS_WITH(counting(x), Catch::Contains("item()") && Catch::Contains("writes"));
}

TEST_CASE("jit reads captured tensors at every call", "[jit]") {
  st::Tensor w = st::randn({4}, 13, st::f64);
  auto f = [&w](const st::Tensor& x) { return st::sum(x * w); };
  auto jf = st::jit(f);
  const st::Tensor x = st::randn({4}, 14, st::f64);
  REQUIRE(same_bits(jf(x), f(x)));
  w.add_(st::ones({4}, st::f64));  // an in-place update, as an optimiser makes
  REQUIRE(same_bits(jf(x), f(x)));
  w = st::zeros({4}, st::f64);  // the variable now names another tensor
  const std::string msg = st::testing::message_of<st::Error>([&] { (void)jf(x); });
  CHECK(msg.find("captured") != std::string::npos);
}

TEST_CASE("jit runs a function's host side once (the purity rule)", "[jit]") {
  int calls = 0;
  auto jf = st::jit([&calls](const st::Tensor& x) {
    ++calls;
    return x * 2.0;
  });
  for (int i = 0; i < 4; ++i) (void)jf(st::ones({2}));
  CHECK(calls == 1);
}

TEST_CASE("jit folds constants and returns them fresh", "[jit]") {
  auto f = [](const st::Tensor& x) {
    const st::Tensor table = st::arange(0, 4, 1, st::f64) * 2.0 + 1.0;  // no input: a constant
    return std::make_pair(x + table, st::zeros({2}, st::f64));
  };
  auto jf = st::jit(f);
  const st::Tensor x = st::randn({4}, 15, st::f64);
  (void)jf(x);
  CHECK(st::jit_stats().steps_folded >= 3);
  auto [y, z] = jf(x);
  REQUIRE(same_bits(y, f(x).first));
  z.add_(st::ones({2}, st::f64));  // the caller's copy, not the plan's
  REQUIRE(same_bits(jf(x).second, st::zeros({2}, st::f64)));
  CHECK(jf.explain(x).find("folded") != std::string::npos);
}

TEST_CASE("jit reads equal small constants from one storage", "[jit]") {
  const st::Tensor x0 = st::randn({3}, 18, st::f64), x1 = st::randn({3}, 19, st::f64);
  // 40 scalars 0.5 and 40 scalars 0.25, folded: two distinct values.
  auto repeated = [](const st::Tensor& x) {
    st::Tensor y = x;
    for (int i = 0; i < 40; ++i) y = y * 0.5 + 0.25;
    return y;
  };
  auto jr = st::jit(repeated);
  st::reset_jit_stats();
  (void)jr(x0);
  CHECK(st::jit_stats().constants_shared == 78);
  REQUIRE(same_bits(jr(x1), repeated(x1)));
  CHECK(jr.explain(x1).find("78 constants read as an equal earlier one") != std::string::npos);
  // Twenty different scalars, and one f32 and one f64 of equal value (other bytes): none shared.
  auto distinct = [](const st::Tensor& x) {
    st::Tensor y = x;
    for (int i = 1; i <= 20; ++i) y = y * (1.0 + 0.125 * i);
    return y + (y.to(st::f32) * 7.0).to(st::f64) * 7.0;
  };
  auto jd = st::jit(distinct);
  st::reset_jit_stats();
  (void)jd(x0);
  CHECK(st::jit_stats().constants_shared == 0);
  REQUIRE(same_bits(jd(x1), distinct(x1)));
}

TEST_CASE("jit merges repeated elementwise steps, never across an in-place write", "[jit]") {
  const st::Tensor x0 = st::randn({3, 5}, 16, st::f64), x1 = st::randn({3, 5}, 17, st::f64);
  SECTION("repeats read the first result") {
    auto f = [](const st::Tensor& x) { return st::sin(x) * st::sin(x) + st::exp(x) * st::exp(x); };
    auto jf = st::jit(f);
    st::reset_jit_stats();
    (void)jf(x0);
    CHECK(st::jit_stats().steps_merged == 2);
    REQUIRE(same_bits(jf(x1), f(x1)));
    CHECK(jf.explain(x1).find("(2 repeats of an earlier step)") != std::string::npos);
  }
  SECTION("an operand written in place between two equal steps") {
    auto f = [](const st::Tensor& x) {
      st::Tensor t = x * 1.0;
      const st::Tensor a = st::exp(t);
      t.add_(st::ones({3, 5}, st::f64));
      return a + st::exp(t);  // exp of the new t: not a repeat
    };
    auto jf = st::jit(f);
    st::reset_jit_stats();
    (void)jf(x0);
    CHECK(st::jit_stats().steps_merged == 0);
    REQUIRE(same_bits(jf(x1), f(x1)));
    CHECK(jf.explain(x1).find("(0 repeats of an earlier step)") != std::string::npos);
  }
  SECTION("returned results stay distinct tensors") {
    auto f = [](const st::Tensor& x) { return std::make_pair(st::cos(x), st::cos(x)); };
    auto jf = st::jit(f);
    (void)jf(x0);
    auto [a, b] = jf(x1);
    CHECK(jf.explain(x1).find("(0 repeats of an earlier step)") != std::string::npos);
    a.add_(st::ones({3, 5}, st::f64));
    REQUIRE(same_bits(b, st::cos(x1)));
  }
}

TEST_CASE("jit rejects reading a traced value", "[jit]") {
  auto branchy =
      st::jit([](const st::Tensor& x) { return x.sum().item<double>() > 0 ? x * 2.0 : x * 3.0; });
  const std::string msg = st::testing::message_of<st::Error>([&] { (void)branchy(st::ones({3})); });
  CHECK(msg.find("traced tensor") != std::string::npos);
  // A captured constant may be read: it is not computed from the inputs.
  const st::Tensor k = st::full({1}, 2.0, st::f64);
  auto reads_capture = st::jit([&k](const st::Tensor& x) { return x * k.item<double>(); });
  REQUIRE(same_bits(reads_capture(st::ones({3}, st::f64)), st::full({3}, 2.0, st::f64)));
}

TEST_CASE("jit: errors of a replayed step name the step", "[jit]") {
  auto pick =
      st::jit([](const st::Tensor& x, const st::Tensor& idx) { return st::take(x, idx, 0); });
  const st::Tensor x = st::randn({5}, 16, st::f64);
  (void)pick(x, st::from_vector(std::vector<int64_t>{0, 4}, {2}));
  const std::string msg = st::testing::message_of<st::Error>([&] {
    (void)pick(x, st::from_vector(std::vector<int64_t>{1, 9}, {2}));
  });
  CHECK(msg.find("jit: step") != std::string::npos);
  CHECK_THROWS_AS(pick(x, st::from_vector(std::vector<int64_t>{1, 9}, {2})), st::IndexError);
}

TEST_CASE("STRATA_JIT=0 runs the function directly", "[jit]") {
  JitEnvGuard guard;
  setenv("STRATA_JIT", "0", 1);
  int calls = 0;
  auto jf = st::jit([&calls](const st::Tensor& x) {
    ++calls;
    return x + 1.0;
  });
  st::reset_jit_stats();
  (void)jf(st::ones({2}));
  (void)jf(st::ones({2}));
  CHECK(calls == 2);
  CHECK(st::jit_stats().eager == 2);
}

TEST_CASE("jit of a whole training step matches eager steps bit for bit", "[jit]") {
  auto make = [] {
    return std::map<std::string, st::Tensor>{{"w", st::randn({3, 4}, 17, st::f64) * 0.3},
                                             {"b", st::zeros({4}, st::f64)}};
  };
  auto eager_params = make(), jit_params = make();
  st::nn::AdamW eager_opt(0.05), jit_opt(0.05);
  auto step = [&](auto& params, auto& opt, const st::Tensor& x, const st::Tensor& y) {
    auto loss = [&](const auto& p) {
      return st::nn::cross_entropy(st::matmul(x, p.at("w")) + p.at("b"), y);
    };
    auto [l, g] = st::value_and_grad(loss)(params);
    opt.step(params, g);
    return l;
  };
  auto jitted = st::jit(
      [&](const st::Tensor& x, const st::Tensor& y) { return step(jit_params, jit_opt, x, y); });
  for (uint64_t i = 0; i < 5; ++i) {
    const st::Tensor x = st::randn({8, 3}, 30 + i, st::f64);
    const st::Tensor y =
        st::from_vector(std::vector<int64_t>{0, 1, 2, 3, 3, 2, 1, int64_t(i % 4)}, {8});
    const st::Tensor le = step(eager_params, eager_opt, x, y);
    const st::Tensor lj = jitted(x, y);
    REQUIRE(same_bits(le, lj));
    REQUIRE(same_bits(eager_params.at("w"), jit_params.at("w")));
    REQUIRE(same_bits(eager_params.at("b"), jit_params.at("b")));
  }
  // A bad label is still caught on replay: the range check is an effect of the plan.
  const st::Tensor bad = st::from_vector(std::vector<int64_t>{0, 1, 2, 3, 3, 2, 1, 7}, {8});
  CHECK_THROWS_AS(jitted(st::randn({8, 3}, 40, st::f64), bad), st::IndexError);
}
