// SPDX-License-Identifier: MIT
// Derivative tests for the activations of diff/activations.hpp (softmax, sigmoid,
// relu, gelu, ...), and relu at NaN: check_grads against central finite differences in f64, forward
// and reverse mode, up to order 3; softmax, log_softmax and logsumexp at infinities against
// PyTorch's gradients.
#include <limits>

#include "support/composites_preamble.hpp"

TEST_CASE("composite derivatives: activations", "[ad]") {
  const st::Tensor x = normal({2, 3}, 131);
  SECTION("softmax") {
    check_grads<3>([](const auto& x) { return st::softmax(x, 1); }, {x});
    check_grads<2>([](const auto& x) { return st::softmax(x, 0); }, {x});
    check_grads<3>([](const auto& x) { return st::softmax(x, -1); }, {normal({4}, 132)});
  }
  SECTION("log_softmax") {
    check_grads<3>([](const auto& x) { return st::log_softmax(x, 1); }, {x});
    check_grads<2>([](const auto& x) { return st::log_softmax(x, 0); }, {x});
  }
  SECTION("sigmoid") {
    check_grads<3>([](const auto& x) { return st::sigmoid(x); }, {x});
  }
  SECTION("relu (away from 0)") {
    check_grads<3>([](const auto& x) { return st::relu(x) * x; }, {nonzero({2, 3}, 133)});
  }
  SECTION("gelu") {
    check_grads<3>([](const auto& x) { return st::gelu(x); }, {x});
  }
  SECTION("silu") {
    check_grads<3>([](const auto& x) { return st::silu(x); }, {x});
  }
  SECTION("softplus") {
    check_grads<3>([](const auto& x) { return st::softplus(x); }, {x});
    check_grads<2>([](const auto& x) { return st::softplus(x); }, {nonzero({2, 3}, 134) * 20.0});
  }
  SECTION("clamp (away from the bounds)") {
    const st::Tensor c = f64s({-1.3, -0.2, 0.3, 0.9, 0.05, -0.7}, {2, 3});
    check_grads<3>([](const auto& x) { return st::clamp(x, -0.5, 0.5) * x; }, {c});
  }
  SECTION("the same ops as methods") {
    check_grads<2>([](const auto& x) { return x.tanh().exp().sum({1}) + x.sigmoid().mean({1}); },
                   {x});
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

TEST_CASE("softmax, log_softmax and logsumexp at infinities: gradients", "[ad]") {
  const double inf = std::numeric_limits<double>::infinity();
  auto require_values = [](const st::Tensor& got, const std::vector<double>& want) {
    const std::vector<double> g = got.to_vector<double>();
    REQUIRE(g.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
      CHECK(std::abs(g[i] - want[i]) <= 1e-12 * (1 + std::abs(want[i])));
    }
  };
  SECTION("a -inf beside finite values: finite gradients, PyTorch's") {
    // torch.autograd.grad in float64 (PyTorch 1.13.1) of softmax(x)[-1], log_softmax(x)[-1]
    // and logsumexp(x) at x = [-inf, 1, 2].
    const st::Tensor x = st::from_vector(std::vector<double>{-inf, 1.0, 2.0}, {3});
    require_values(st::grad([](const auto& t) { return st::softmax(t, 0).ix(2); }, x),
                   {0.0, -0.19661193324148188, 0.19661193324148185});
    require_values(st::grad([](const auto& t) { return st::log_softmax(t, 0).ix(2); }, x),
                   {0.0, -0.2689414213699951, 0.2689414213699951});
    require_values(st::grad([](const auto& t) { return st::logsumexp(t); }, x),
                   {0.0, 0.26894142136999505, 0.7310585786300048});
    // Forward mode agrees: the Jacobian's last row, by jacfwd.
    require_values(st::jacfwd([](const auto& t) { return st::log_softmax(t, 0); }, x).ix(2),
                   {0.0, -0.2689414213699951, 0.2689414213699951});
  }
  SECTION("NaN slices do not poison the gradient of the others (a zero cotangent is zero)") {
    // Rows 0 (only -inf) and 1 (holding +inf) are NaN; the loss reads row 2 only. Row 2's
    // gradient is PyTorch's; rows 0 and 1 get a zero cotangent, which contributes zero
    // through their NaN local derivatives (strata's rule: PyTorch gives NaN there).
    const st::Tensor X = st::from_vector(
        std::vector<double>{-inf, -inf, -inf, inf, 1.0, 0.0, 0.5, -1.0, 3.0}, {3, 3});
    const st::Tensor w = st::from_vector(std::vector<double>{0.3, -1.2, 2.0}, {3});
    auto zeros_then = [](std::vector<double> row) {
      std::vector<double> v(6, 0.0);
      v.insert(v.end(), row.begin(), row.end());
      return v;
    };
    require_values(st::grad([&](const auto& t) { return st::sum(st::softmax(t, 1).ix(2) * w); }, X),
                   zeros_then({-0.11337965913585347, -0.050265199414465896, 0.16364485855031935}));
    require_values(
        st::grad([&](const auto& t) { return st::sum(st::log_softmax(t, 1).ix(2) * w); }, X),
        zeros_then({0.21794488715456412, -1.2183089704701995, 1.0003640833156353}));
    require_values(
        st::grad([&](const auto& t) { return st::logsumexp(t, {1}).ix(2) * w.ix(0); }, X),
        zeros_then({0.022378667139664327, 0.004993355582781704, 0.27262797727755395}));
  }
}
