// SPDX-License-Identifier: MIT
// pow at a base of exactly 0, where the transforms used to disagree (a zero
// cotangent sent into the branch of the derivative's where that was not taken,
// 0 * inf = NaN): every transform and order against the exact derivatives
// k (k - 1) ... v^(k - order), and against finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/check_grads.hpp"
#include "support/random_program.hpp"

namespace st = strata;
using st::testing::check_grads_error;
using st::testing::Program;
using st::testing::ProgramFn;

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

TEST_CASE("pow at exactly 0: every transform and order gives the finite derivative", "[ad]") {
  const st::Tensor v = with_zeros(31);
  const std::vector<double> x = v.to_vector<double>();
  for (double k : {0.0, 1.0, 2.0, 3.0}) {
    INFO("f(v) = sum(pow(v, " << k << ")) at v = " << st::testing::detail_cg::head(x));
    auto f = [k](const auto& t) { return st::sum(st::pow(t, k)); };
    // Against finite differences, all eight compositions to order 3, as the
    // program sum(pow(x, k)) (run_program is compiled for every level once, in
    // tests/support/random_program*.cpp; y is unused).
    using st::testing::ProgNode;
    using st::testing::program_op;
    Program p;
    p.nodes = {ProgNode{.shape = {6}}, ProgNode{.shape = {1}},
               ProgNode{.op = program_op("pow(a, k)"), .a = 0, .shape = {6}, .k = k},
               ProgNode{.op = program_op("sum"), .a = 2, .shape = {}}};
    const st::Tensor unused = st::randn({1}, 32, st::f64);
    const st::testing::GradCheckResult r = check_grads_error<3>(ProgramFn{&p}, {v, unused});
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

TEST_CASE("pow at a zero base with a variable exponent has finite derivatives", "[ad]") {
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
