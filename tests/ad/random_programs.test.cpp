// SPDX-License-Identifier: MIT
// A differential test of every derivative rule: random programs
// (tests/support/random_program.hpp) checked by check_grads against f64
// central differences, at second order through all four compositions of
// forward and reverse mode (fwd-over-fwd, rev-over-fwd, fwd-over-rev,
// rev-over-rev) and at third order through all eight; then pow at exactly 0,
// where the transforms used to disagree (a zero cotangent sent into the
// branch of the derivative's where that was not taken, 0 * inf = NaN).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/check_grads.hpp"
#include "support/random_program.hpp"

namespace st = strata;
using st::testing::check_grads_error;
using st::testing::Modes;
using st::testing::Program;
using st::testing::ProgramFn;

namespace {

/// False when a node of p has an element above 25 in magnitude (a chain of exps
/// or powers): there the derivatives of the following sin, pow, ... are so large
/// that the finite differences' truncation error swamps the comparison, so the
/// program is skipped and counted.
bool well_scaled(const Program& p, const st::Tensor& x, const st::Tensor& y) {
  std::vector<st::Tensor> trace;
  const st::Tensor out = st::testing::run_program(p, x, y, &trace);
  trace.push_back(out);
  for (const st::Tensor& t : trace) {
    for (double v : t.to_vector<double>()) {
      if (!std::isfinite(v) || std::abs(v) > 25) return false;
    }
  }
  return true;
}

struct Ran {
  int programs = 0;  ///< programs checked (the others were skipped for overflow)
  int checks = 0;    ///< comparisons with finite differences and primal values, in all
};

/// Runs check_grads on `count` programs from seeds first, first + 1, ...
Ran check_programs(uint64_t first, int count, int order, const st::testing::ProgramOptions& o) {
  Ran ran;
  for (uint64_t seed = first; seed < first + uint64_t(count); ++seed) {
    const Program p = st::testing::random_program(seed, o);
    const auto [x, y] = st::testing::program_inputs(p, seed * 7919);
    if (!well_scaled(p, x, y)) continue;
    st::testing::GradCheckOptions go;
    go.seed = seed;
    const st::testing::GradCheckResult r =
        check_grads_error(ProgramFn{&p}, {x, y}, order, Modes::both, go);
    INFO(p.str() << "check_grads (order " << order << ", " << r.checks << " checks):\n"
                 << r.report);
    REQUIRE(r.ok());
    ++ran.programs;
    ran.checks += r.checks;
  }
  return ran;
}

}  // namespace

TEST_CASE("random programs: orders 1 and 2, every mode composition, against finite differences",
          "[ad][random]") {
  // 400 programs of 8 ops; each is checked at order 1 (jvp, vjp) and order 2
  // (jvp of jvp, vjp of jvp, jvp of vjp, vjp of vjp): 12 comparisons a program
  // (6 derivatives against finite differences, 6 primal values).
  const Ran ran = check_programs(1000, 400, 2, {.ops = 8, .kinks = true});
  CHECK(ran.programs >= 350);  // 362 of the 400 are well scaled
  CHECK(ran.checks == 12 * ran.programs);
}

TEST_CASE("random programs: order 3, all eight mode compositions", "[ad][random]") {
  // 100 programs of 5 ops, checked at orders 1, 2 and 3 (every nesting of jvp
  // and vjp three deep): 28 comparisons a program.
  const Ran ran = check_programs(5000, 100, 3, {.ops = 5, .kinks = true});
  CHECK(ran.programs >= 90);  // 97 of the 100 are well scaled
  CHECK(ran.checks == 28 * ran.programs);
}

TEST_CASE("the random programs cover every op", "[ad][random]") {
  // The generator is only as good as its reach: the programs above use every op.
  std::vector<int> seen(64, 0);
  for (uint64_t seed = 1000; seed < 1400; ++seed) {
    const Program p = st::testing::random_program(seed, {.ops = 8, .kinks = true});
    for (const auto& n : p.nodes) ++seen[std::size_t(n.op)];
  }
  for (int op = 0; op <= int(st::testing::ProgOp::matmul); ++op) {
    INFO("op " << st::testing::detail_rp::name(st::testing::ProgOp(op)));
    CHECK(seen[std::size_t(op)] > 0);
  }
}

namespace {

/// v with exact zeros at positions 0 and 3, random elsewhere.
st::Tensor with_zeros(uint64_t seed) {
  std::vector<double> v = st::randn({6}, seed, st::f64).to_vector<double>();
  v[0] = 0.0;
  v[3] = 0.0;
  return st::from_vector(v, {6});
}

/// d^order/dv^order of v^k (the convention 0^0 = 1, so d/dv v^1 = 1 at 0).
double pow_derivative(double v, double k, int order) {
  double c = 1;
  for (int i = 0; i < order; ++i) c *= k - i;
  if (c == 0) return 0;
  const double e = k - order;
  return c * (e == 0 ? 1.0 : std::pow(v, e));
}

}  // namespace

TEST_CASE("pow at exactly 0: every transform and order gives the finite derivative",
          "[ad][random]") {
  const st::Tensor v = with_zeros(31);
  const std::vector<double> x = v.to_vector<double>();
  for (double k : {0.0, 1.0, 2.0, 3.0}) {
    INFO("f(v) = sum(pow(v, " << k << ")) at v = " << st::testing::detail_cg::head(x));
    auto f = [k](const auto& t) { return st::sum(st::pow(t, k)); };
    // Against finite differences, all eight compositions to order 3, as the
    // program sum(pow(x, k)) (the random programs' instantiation, y unused).
    using st::testing::ProgNode;
    using st::testing::ProgOp;
    Program p;
    p.nodes = {
        ProgNode{ProgOp::input, -1, -1, 0, 0, {6}}, ProgNode{ProgOp::input, -1, -1, 0, 0, {1}},
        ProgNode{ProgOp::pow_const, 0, -1, 0, k, {6}}, ProgNode{ProgOp::sum_all, 2, -1, 0, 0, {}}};
    const st::Tensor unused = st::randn({1}, 32, st::f64);
    const st::testing::GradCheckResult r = check_grads_error(ProgramFn{&p}, {v, unused}, 3);
    INFO(r.report);
    CHECK(r.ok());

    // Against the exact derivatives k (k - 1) v^(k - 2) (a diagonal Hessian)
    // and k (k - 1) (k - 2) v^(k - 3), through the transforms users call.
    auto g = [&f](const auto& t) { return st::sum(st::grad(f)(t)); };     // rev over rev
    auto gg = [&g](const auto& t) { return st::sum(st::grad(g)(t)); };    // order 3
    const std::vector<double> h = st::hessian(f, v).to_vector<double>();  // fwd over rev
    const std::vector<double> hh = st::grad(g, v).to_vector<double>();
    const std::vector<double> t3 = st::grad(gg, v).to_vector<double>();
    for (std::size_t i = 0; i < 6; ++i) {
      INFO("element " << i << " (v = " << x[i] << ")");
      const double d2 = pow_derivative(x[i], k, 2);
      CHECK(hh[i] == Approx(d2).margin(1e-12));
      CHECK(t3[i] == Approx(pow_derivative(x[i], k, 3)).margin(1e-12));
      for (std::size_t j = 0; j < 6; ++j) {
        const double want = i == j ? d2 : 0.0;
        CHECK(h[i * 6 + j] == Approx(want).margin(1e-12));
      }
    }
  }
}

TEST_CASE("pow at a zero base with a variable exponent has finite derivatives", "[ad][random]") {
  // d/da a^b = b a^(b-1) and d/db a^b = a^b log a at a = 0, b in {0, 2, 3}: the
  // mixed and second partials are finite (0, except d2/da2 0^2 = 2).
  const st::Tensor a = st::zeros({3}, st::f64);
  const st::Tensor b = st::from_vector(std::vector<double>{0.0, 2.0, 3.0}, {3});
  auto f = [](const auto& x, const auto& e) { return st::sum(st::pow(x, e)); };
  auto g = [&f](const auto& x, const auto& e) {
    auto [ga, gb] = st::grad(f)(x, e);
    return st::sum(ga) + st::sum(gb);
  };
  const auto [gaa, gbb] = st::grad(g, a, b);
  // d/da (f_a + f_b) = f_aa + f_ab; d/db (f_a + f_b) = f_ab + f_bb, at a = 0:
  // f_aa = b (b - 1) 0^(b - 2) -> {0, 2, 0}; f_ab = 0 (by convention at b = 0); f_bb = 0.
  const std::vector<double> want_a{0.0, 2.0, 0.0};
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("b = " << b.to_vector<double>()[i]);
    CHECK(gaa.to_vector<double>()[i] == Approx(want_a[i]).margin(1e-12));
    CHECK(gbb.to_vector<double>()[i] == Approx(0.0).margin(1e-12));
  }
}
