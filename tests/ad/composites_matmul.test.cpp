// SPDX-License-Identifier: MIT
// Derivative tests for matmul with 1-D operands and dot (diff/matrix.hpp), and
// the agreement of forward and reverse Jacobians and Hessians of composites.
#include "support/composites_preamble.hpp"

namespace {

/// Elementwise equality of two Jacobians up to rounding.
void require_equal_to_rounding(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  for (std::size_t i = 0; i < av.size(); ++i) {
    INFO("element " << i);
    CHECK(av[i] == Approx(bv[i]).epsilon(1e-12).margin(1e-12));
  }
}

}  // namespace

TEST_CASE("composite derivatives: matmul with 1-D operands and dot", "[ad]") {
  SECTION("vector x matrix, matrix x vector, vector x vector") {
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                   {normal({3}, 161), normal({3, 2}, 162)});
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                   {normal({2, 3}, 163), normal({3}, 164)});
    check_grads<3>([](const auto& a, const auto& b) { return st::sin(st::matmul(a, b)); },
                   {normal({3}, 165), normal({3}, 166)});
    check_grads<2>([](const auto& a, const auto& b) { return st::matmul(a, b); },
                   {normal({2, 2, 3}, 167), normal({3}, 168)});
  }
  SECTION("dot") {
    check_grads<3>([](const auto& a, const auto& b) { return st::dot(a, b) * st::dot(a, a); },
                   {normal({4}, 169), normal({4}, 170)});
    check_grads<2>([](const auto& a, const auto& b) { return a.dot(b); },
                   {normal({2, 3}, 171), normal({3, 2}, 172)});
  }
}

TEST_CASE("jacfwd and jacrev agree", "[ad]") {
  const st::Tensor x = normal({2, 3}, 181);
  const st::Tensor w = normal({3, 4}, 182);
  auto check = [&](auto f, const st::Tensor& at) {
    const st::Tensor jf = st::jacfwd(f, at), jr = st::jacrev(f, at);
    require_equal_to_rounding(jf, jr);
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
    require_equal_to_rounding(h, st::jacrev(st::jacrev(f))(x));
    require_equal_to_rounding(h, st::jacfwd(st::jacfwd(f))(x));
    require_equal_to_rounding(h, st::jacrev(st::grad(f))(x));
    // Symmetric.
    const st::Tensor hm = st::reshape(h, {6, 6});
    require_equal_to_rounding(hm, st::transpose(hm, 0, 1));
  }
}
