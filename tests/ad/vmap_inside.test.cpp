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
