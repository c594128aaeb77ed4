// SPDX-License-Identifier: MIT
// Derivative tests for the activations of diff/activations.hpp (softmax, sigmoid,
// relu, gelu, ...), and relu at NaN: check_grads against central finite differences in f64, forward
// and reverse mode, up to order 3.
#include "support/composites_preamble.hpp"

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
