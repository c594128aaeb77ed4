// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp) composed with the other transforms, vmap outside:
// vmap(grad) (per-example gradients of a small MLP's loss), vmap(jacrev),
// vmap(jacfwd), vmap(hessian) and vmap(vjp) (vmap(vmap): vmap_nested.test.cpp).
// References: loops of the single-example transform on plain tensors and
// central finite differences in f64 (tests/support/vmap_ref.hpp).
#include "support/vmap_preamble.hpp"

TEST_CASE("vmap(grad): per-example gradients of a small MLP loss", "[ad][vmap]") {
  using Params = std::map<std::string, st::Tensor>;
  const Params W{
      {"w1", normal({5, 4}, 21) * 0.5}, {"b1", normal({5}, 22)}, {"w2", normal({3, 5}, 23) * 0.5}};
  const st::Tensor X = normal({6, 4}, 24);
  const st::Tensor Y =
      st::one_hot(st::from_vector(std::vector<int64_t>{0, 2, 1, 1, 0, 2}, {6}), 3, st::f64);
  auto loss = [](const auto& w, const auto& x, const auto& y) {
    auto h = st::relu(st::matmul(w.at("w1"), x) + w.at("b1"));
    auto logits = st::matmul(w.at("w2"), h);
    return -st::sum(y * st::log_softmax(logits, 0));
  };
  auto [gW, gX, gY] = st::vmap(st::grad(loss), {st::none, 0, 0})(W, X, Y);
  for (int64_t i = 0; i < 6; ++i) {
    auto [wi, xi, yi] = st::grad(loss, W, example(X, 0, i), example(Y, 0, i));
    for (const auto& [k, g] : wi) require_close(gW.at(k).ix(i), g, 1e-10, k);
    require_close(gX.ix(i), xi);
    require_close(gY.ix(i), yi);
  }
  // And against finite differences of example 0's loss in w2.
  auto l0 = [&](const st::Tensor& w2) {
    Params q = W;
    q["w2"] = w2;
    return loss(q, example(X, 0, 0), example(Y, 0, 0));
  };
  require_close(gW.at("w2").ix(0), fd_jacobian(l0, W.at("w2")), 1e-6);
}

TEST_CASE("vmap of jacrev, jacfwd, hessian, vjp", "[ad][vmap]") {
  const st::Tensor W = normal({2, 3}, 51);
  auto f = [&](const auto& x) { return st::tanh(st::matmul(W, x)) * x.ix(1); };  // [3] -> [2]
  auto s = [](const auto& x) { return st::sum(st::exp(x) * st::sin(x)) + st::max(x); };
  const st::Tensor X = normal({4, 3}, 52);
  const st::Tensor jr = st::vmap(st::jacrev(f))(X), jf = st::vmap(st::jacfwd(f))(X);
  const st::Tensor h = st::vmap(st::hessian(s))(X);
  for (int64_t i = 0; i < 4; ++i) {
    const st::Tensor xi = example(X, 0, i);
    const st::Tensor fd = fd_jacobian([&](const st::Tensor& v) { return f(v); }, xi);
    require_close(jr.ix(i), fd, 1e-6, "vmap(jacrev)");
    require_close(jf.ix(i), fd, 1e-6, "vmap(jacfwd)");
    require_close(jr.ix(i), st::jacrev(f, xi), 1e-12, "vmap(jacrev) vs jacrev");
    require_close(h.ix(i), st::hessian(s, xi), 1e-10, "vmap(hessian) vs hessian");
    require_close(h.ix(i), fd_jacobian([&](const st::Tensor& v) { return st::grad(s, v); }, xi),
                  1e-6, "vmap(hessian) vs fd");
  }
  // vjp inside vmap, with a per-example cotangent.
  const st::Tensor U = normal({4, 2}, 53);
  auto vjp_of = [&](const auto& x, const auto& u) { return st::vjp(f, x).second(u); };
  const st::Tensor g = st::vmap(vjp_of)(X, U);
  for (int64_t i = 0; i < 4; ++i) {
    require_close(g.ix(i), st::vjp(f, example(X, 0, i)).second(example(U, 0, i)), 1e-12);
  }
}
