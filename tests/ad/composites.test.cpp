// SPDX-License-Identifier: MIT
// Derivative tests for the composite ops of diff/ops.hpp (written once over
// Diffable, differentiable because they lower to primitives): check_grads
// against central finite differences in f64, forward and reverse mode, up to
// order 3; and the agreement of forward and reverse Jacobians.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;

namespace {

st::Tensor normal(const st::Shape& s, uint64_t seed) { return st::randn(s, seed, st::f64); }
/// Values in [0.5, 1.5).
st::Tensor positive(const st::Shape& s, uint64_t seed) { return st::rand(s, seed, st::f64) + 0.5; }
/// Normal values pushed at least 0.3 away from 0 (kinks of relu, abs; division).
st::Tensor nonzero(const st::Shape& s, uint64_t seed) {
  const st::Tensor t = normal(s, seed);
  return t + st::sign(t) * 0.3;
}
st::Tensor f64s(const std::vector<double>& v, const st::Shape& s) { return st::from_vector(v, s); }

/// Elementwise equality of two Jacobians up to rounding.
void require_close(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  for (std::size_t i = 0; i < av.size(); ++i) {
    INFO("element " << i);
    CHECK(av[i] == Approx(bv[i]).epsilon(1e-12).margin(1e-12));
  }
}

}  // namespace

TEST_CASE("composite derivatives: broadcasting arithmetic", "[ad]") {
  const st::Tensor a = normal({3, 1}, 101), b = normal({4}, 102);
  SECTION("[3,1] with [4]") {
    check_grads([](const auto& a, const auto& b) { return st::sin(a + b); }, {a, b}, 3);
    check_grads([](const auto& a, const auto& b) { return st::sin(a - b); }, {a, b}, 3);
    check_grads([](const auto& a, const auto& b) { return a * b; }, {a, b}, 3);
    check_grads([](const auto& a, const auto& b) { return a / b; }, {a, nonzero({4}, 103)}, 3);
    check_grads([](const auto& a, const auto& b) { return st::pow(a, b); },
                {positive({3, 1}, 104), b}, 3);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::maximum(a, b)); }, {a, b}, 2);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::minimum(b, a)); }, {a, b}, 2);
    // A rank-0 operand.
    check_grads([](const auto& a, const auto& s) { return st::sin(a * s); }, {a, normal({}, 105)},
                3);
  }
  SECTION("C++ scalars on either side") {
    const st::Tensor x = nonzero({2, 3}, 106);
    check_grads([](const auto& x) { return st::sin(x + 1.5) * (2.5 + x); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(x - 1.5) * (0.5 - x); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(x * 2.0) * (3.0 * x); }, {x}, 3);
    check_grads([](const auto& x) { return (x / 4.0) * (3.0 / x); }, {x}, 3);
    check_grads([](const auto& x) { return 3.0 / x; }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(x * 2) + 3 * x - 1; }, {x}, 3);  // int scalars
    check_grads([](const auto& x) { return st::pow(x, 2.5); }, {positive({2, 3}, 107)}, 3);
    check_grads([](const auto& x) { return st::pow(2.0, x); }, {x}, 3);
    check_grads([](const auto& x) { return st::pow(x, 3); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::maximum(x, 0.1) + st::minimum(0.2, x)); },
                {x}, 2);
  }
  SECTION("captured tensors are constants") {
    const st::Tensor w = normal({3}, 108), x = normal({2, 3}, 109);
    check_grads([w](const auto& x) { return st::sin(x * w) - w / (x * x + 1.0); }, {x}, 3);
    check_grads([w](const auto& x) { return st::matmul(x, w); }, {x}, 2);
  }
  SECTION("where with broadcasting condition and operands") {
    const st::Tensor cond = st::from_vector(std::vector<bool>{true, false, true, true}, {1, 4});
    check_grads([cond](const auto& a) { return st::sin(st::where(cond, a, 0.5)); }, {a}, 3);
    check_grads([cond](const auto& a, const auto& b) { return st::sin(st::where(cond, b, a * a)); },
                {a, b}, 3);
  }
  SECTION("unary minus") {
    check_grads([](const auto& x) { return -(x * st::sin(x)); }, {normal({2, 3}, 110)}, 3);
    check_grads([](const auto& a, const auto& b) { return -a * b; }, {a, b}, 2);
  }
}

TEST_CASE("composite derivatives: reductions and statistics", "[ad]") {
  const st::Tensor x = normal({2, 3}, 121);
  SECTION("mean") {
    check_grads([](const auto& x) { return st::sin(st::mean(x)); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::mean(x, {1})); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::mean(x, {0}, true)); }, {x}, 2);
  }
  SECTION("var") {
    check_grads([](const auto& x) { return st::var(x); }, {x}, 3);
    check_grads([](const auto& x) { return st::var(x, {1}); }, {x}, 3);
    check_grads([](const auto& x) { return st::var(x, {0}, true); }, {x}, 2);
  }
  SECTION("std") {
    check_grads([](const auto& x) { return st::std(x); }, {x}, 3);
    check_grads([](const auto& x) { return st::std(x, {1}, true); }, {x}, 3);
  }
  SECTION("norm") {
    check_grads([](const auto& x) { return st::norm(x); }, {x}, 3);
  }
  SECTION("logsumexp, with and without keepdims") {
    check_grads([](const auto& x) { return st::logsumexp(x); }, {x}, 3);
    check_grads([](const auto& x) { return st::logsumexp(x, {1}); }, {x}, 3);
    check_grads([](const auto& x) { return st::logsumexp(x, {1}, true); }, {x}, 3);
    check_grads([](const auto& x) { return st::logsumexp(x, {0}, true) * x; }, {x}, 2);
    // Large values (exp overflows without the shift by the max): the derivative
    // stays finite and right. Steeper function, smaller step.
    st::testing::GradCheckOptions o;
    o.eps = 1e-7;
    check_grads([](const auto& x) { return st::logsumexp(x * 1000.0, {1}); }, {x}, 2,
                st::testing::Modes::both, o);
  }
  SECTION("min") {
    check_grads([](const auto& x) { return st::sin(st::min(x, {1})); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::min(x, {0}, true)); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::min(x)); }, {x}, 3);
  }
}

TEST_CASE("composite derivatives: activations", "[ad]") {
  const st::Tensor x = normal({2, 3}, 131);
  SECTION("softmax") {
    check_grads([](const auto& x) { return st::softmax(x, 1); }, {x}, 3);
    check_grads([](const auto& x) { return st::softmax(x, 0); }, {x}, 2);
    check_grads([](const auto& x) { return st::softmax(x, -1); }, {normal({4}, 132)}, 3);
  }
  SECTION("log_softmax") {
    check_grads([](const auto& x) { return st::log_softmax(x, 1); }, {x}, 3);
    check_grads([](const auto& x) { return st::log_softmax(x, 0); }, {x}, 2);
  }
  SECTION("sigmoid") {
    check_grads([](const auto& x) { return st::sigmoid(x); }, {x}, 3);
  }
  SECTION("relu (away from 0)") {
    check_grads([](const auto& x) { return st::relu(x) * x; }, {nonzero({2, 3}, 133)}, 3);
  }
  SECTION("gelu") {
    check_grads([](const auto& x) { return st::gelu(x); }, {x}, 3);
  }
  SECTION("silu") {
    check_grads([](const auto& x) { return st::silu(x); }, {x}, 3);
  }
  SECTION("softplus") {
    check_grads([](const auto& x) { return st::softplus(x); }, {x}, 3);
    check_grads([](const auto& x) { return st::softplus(x); }, {nonzero({2, 3}, 134) * 20.0}, 2);
  }
  SECTION("clamp (away from the bounds)") {
    const st::Tensor c = f64s({-1.3, -0.2, 0.3, 0.9, 0.05, -0.7}, {2, 3});
    check_grads([](const auto& x) { return st::clamp(x, -0.5, 0.5) * x; }, {c}, 3);
  }
  SECTION("the same ops as methods") {
    check_grads([](const auto& x) { return x.tanh().exp().sum({1}) + x.sigmoid().mean({1}); }, {x},
                2);
  }
}

TEST_CASE("composite derivatives: movement", "[ad]") {
  SECTION("squeeze, unsqueeze, flatten, transpose") {
    check_grads([](const auto& x) { return st::sin(st::squeeze(x, 1)); }, {normal({2, 1, 3}, 141)},
                3);
    check_grads([](const auto& x) { return st::sin(st::unsqueeze(x, 0)) * st::unsqueeze(x, 1); },
                {normal({2, 3}, 142)}, 3);
    check_grads([](const auto& x) { return st::sin(st::flatten(st::transpose(x, 0, 1))); },
                {normal({2, 3}, 143)}, 3);
    check_grads([](const auto& x) { return st::sin(st::transpose(x, 0, 2)); },
                {normal({2, 1, 3}, 144)}, 3);
  }
  SECTION("stack") {
    const st::Tensor a = normal({2, 3}, 145), b = normal({2, 3}, 146);
    check_grads(
        [](const auto& a, const auto& b) {
          return st::sin(st::stack({a, b}, 1));
        },
        {a, b}, 3);
    check_grads(
        [](const auto& a, const auto& b) {
          return st::sin(st::stack({b, a, b}, -1));
        },
        {a, b}, 2);
  }
  SECTION("split") {
    check_grads(
        [](const auto& x) {
          const auto p = st::split(x, {1, 2}, 1);
          return st::concat({st::sin(p[1]), p[0] * p[0]}, 1);
        },
        {normal({2, 3}, 147)}, 3);
    check_grads(
        [](const auto& x) {
          const auto p = st::split(x, {2, 0, 1}, 0);
          return st::sin(p[0]) * p[2];
        },
        {normal({3, 2}, 148)}, 3);
  }
  SECTION("pad with a value") {
    check_grads(
        [](const auto& x) {
          return st::sin(st::pad(x, {{1, 1}, {0, 1}}, 2.5));
        },
        {normal({2, 3}, 149)}, 3);
  }
  SECTION("tril and triu") {
    const st::Tensor x = normal({3, 3}, 150);
    check_grads([](const auto& x) { return st::sin(st::tril(x)); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::tril(x, -1)); }, {x}, 2);
    check_grads([](const auto& x) { return st::sin(st::triu(x)); }, {x}, 3);
    check_grads([](const auto& x) { return st::sin(st::triu(x, 1)) * x; }, {normal({2, 3}, 151)},
                2);
  }
}

TEST_CASE("composite derivatives: matmul with 1-D operands and dot", "[ad]") {
  SECTION("vector x matrix, matrix x vector, vector x vector") {
    check_grads([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                {normal({3}, 161), normal({3, 2}, 162)}, 3);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                {normal({2, 3}, 163), normal({3}, 164)}, 3);
    check_grads([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                {normal({3}, 165), normal({3}, 166)}, 3);
    check_grads([](const auto& a, const auto& b) { return st::matmul(a, b); },
                {normal({2, 2, 3}, 167), normal({3}, 168)}, 2);
  }
  SECTION("dot") {
    check_grads([](const auto& a, const auto& b) { return st::dot(a, b) * st::dot(a, a); },
                {normal({4}, 169), normal({4}, 170)}, 3);
    check_grads([](const auto& a, const auto& b) { return a.dot(b); },
                {normal({2, 3}, 171), normal({3, 2}, 172)}, 2);
  }
}

TEST_CASE("jacfwd and jacrev agree", "[ad]") {
  const st::Tensor x = normal({2, 3}, 181);
  const st::Tensor w = normal({3, 4}, 182);
  auto check = [&](auto f, const st::Tensor& at) {
    const st::Tensor jf = st::jacfwd(f, at), jr = st::jacrev(f, at);
    require_close(jf, jr);
  };
  SECTION("softmax, log_softmax, logsumexp") {
    check([](const auto& x) { return st::softmax(x, 1); }, x);
    check([](const auto& x) { return st::log_softmax(x, 0); }, x);
    check([](const auto& x) { return st::logsumexp(x, {1}, true); }, x);
  }
  SECTION("a small network layer") {
    check(
        [w](const auto& x) {
          return st::gelu(st::matmul(x, w)) + st::sigmoid(st::sum(x, {1}, true));
        },
        x);
    check([w](const auto& x) { return st::var(st::matmul(x, w), {0}); }, x);
  }
  SECTION("movement and stacking") {
    check(
        [](const auto& x) {
          return st::stack({st::sin(x), st::transpose(x, 0, 1) * 1.0}, 0);
        },
        normal({3, 3}, 183));
    check([](const auto& x) { return st::tril(x) * st::flatten(x).sum() + st::norm(x); }, x);
  }
  SECTION("a scalar output and a scalar input") {
    check([](const auto& x) { return st::std(x); }, x);
    check(
        [](const auto& s) {
          return st::stack({st::sin(s), s * s, st::exp(s)}, 0);
        },
        normal({}, 184));
  }
  SECTION("Hessians by every mix of modes agree") {
    auto f = [](const auto& x) { return st::sum(st::softplus(x) * st::tanh(x)) + st::norm(x); };
    const st::Tensor h = st::hessian(f, x);
    CHECK(h.shape() == st::Shape{2, 3, 2, 3});
    require_close(h, st::jacrev(st::jacrev(f))(x));
    require_close(h, st::jacfwd(st::jacfwd(f))(x));
    require_close(h, st::jacrev(st::grad(f))(x));
    // Symmetric.
    const st::Tensor hm = st::reshape(h, {6, 6});
    require_close(hm, st::transpose(hm, 0, 1));
  }
}

TEST_CASE("relu at NaN: NaN value, and the cotangent passes (PyTorch's threshold_backward)",
          "[ad]") {
  // relu(x) = where(x <= 0, 0, x), PyTorch's threshold(x, 0, 0): a NaN input
  // selects x, so the value is NaN and d relu / dx there is 1, in both modes.
  const double nan = std::nan("");
  const st::Tensor x = st::from_vector(std::vector<double>{-1.5, nan, 0.0, 2.0}, {4});
  const std::vector<double> want{0.0, 1.0, 0.0, 1.0};
  const st::Tensor y = st::relu(x);
  CHECK(std::isnan(y.to_vector<double>()[1]));
  const std::vector<double> g =
      st::grad([](const auto& t) { return st::sum(st::relu(t)); }, x).to_vector<double>();
  const std::vector<double> j =
      st::jvp([](const auto& t) { return st::relu(t); }, x, st::ones({4}, st::f64))
          .second.to_vector<double>();
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("element " << i);
    CHECK(g[i] == want[i]);
    CHECK(j[i] == want[i]);
  }
}
