// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp) inside the other transforms: grad and hessian of a
// function that calls vmap, jacfwd and jacrev of vmap(f). References: the
// same functions written as loops over examples, differentiated by central
// finite differences in f64 (tests/support/vmap_ref.hpp).
#include "support/vmap_preamble.hpp"

TEST_CASE("grad of a function that calls vmap", "[ad][vmap]") {
  const st::Tensor X = normal({5, 3}, 31), w0 = normal({3}, 32);
  auto per_example = [](const auto& w, const auto& x) { return st::tanh(st::dot(w, x)) * x.ix(0); };
  auto total = [&](const auto& w) { return st::sum(st::vmap(per_example, {st::none, 0})(w, X)); };
  auto looped = [&](const auto& w) {
    auto s = per_example(w, example(X, 0, 0));
    for (int64_t i = 1; i < 5; ++i) s = s + per_example(w, example(X, 0, i));
    return s;
  };
  require_close(total(w0), looped(w0));
  require_close(st::grad(total, w0), fd_jacobian(looped, w0), 1e-6);
  // Second order: the Hessian through vmap, against finite differences of the gradient.
  require_close(st::hessian(total, w0),
                fd_jacobian([&](const st::Tensor& w) { return st::grad(looped, w); }, w0), 1e-6);
}

TEST_CASE("jacfwd and jacrev of vmap", "[ad][vmap]") {
  auto f = [](const auto& x) { return st::sin(x) * st::sum(x * x); };  // [3] -> [3]
  const st::Tensor x = normal({4, 3}, 41);
  auto looped = [&](const st::Tensor& xs) {
    std::vector<st::Tensor> ys;
    for (int64_t i = 0; i < 4; ++i) ys.push_back(f(example(xs, 0, i)));
    return stacked(ys);
  };
  const st::Tensor want = fd_jacobian(looped, x);  // [4, 3, 4, 3]
  require_close(st::jacfwd(st::vmap(f))(x), want, 1e-6);
  require_close(st::jacrev(st::vmap(f))(x), want, 1e-6);
}

TEST_CASE("grad through vmap of a value of the grad: passed with in_axes st::none", "[ad][vmap]") {
  // JAX users write the per-example function as a closure over w; in strata the closure
  // would combine a st::Reverse value with a st::Batched one, which do not nest (a
  // static_assert: tests/compile_fail/vmap_captures_outer_value.fail.cpp). The spelling it
  // names passes w to vmap as an argument with in_axes st::none.
  const st::Tensor W = normal({2, 3}, 51), X = normal({6, 3}, 52);
  auto f = [](const auto& w, const auto& x) {
    return st::sum(st::tanh(st::matmul(w, x)) * x.ix(1));
  };
  auto loss = [&](const auto& w) {
    return st::sum(
        st::vmap([&](const auto& v, const auto& x) { return f(v, x); }, {st::none, 0})(w, X));
  };
  // The reference: the sum of the per-example gradients, each a plain st::grad of one example.
  st::Tensor want = st::zeros({2, 3}, st::f64);
  for (int64_t i = 0; i < 6; ++i) {
    const st::Tensor xi = example(X, 0, i);
    want = want + st::grad([&](const auto& w) { return f(w, xi); }, W);
  }
  require_close(st::grad(loss, W), want, 1e-12, "grad");
  auto [value, g] = st::value_and_grad(loss, W);
  require_close(g, want, 1e-12, "value_and_grad");
  double total = 0;
  for (int64_t i = 0; i < 6; ++i) total += f(W, example(X, 0, i)).item<double>();
  CHECK(value.item<double>() == Approx(total).epsilon(1e-12));
  // Forward mode over the same spelling: the directional derivative is <grad, V>.
  const st::Tensor V = normal({2, 3}, 53);
  auto [y, dy] = st::jvp(loss, W, V);
  CHECK(dy.item<double>() == Approx(st::sum(want * V).item<double>()).epsilon(1e-10));
}
