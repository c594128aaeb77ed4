// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp) nested: vmap(vmap(f)) with a shared argument, and
// per-example gradients of a vmapped function, vmap(grad(vmap(f))), against
// double loops over examples and central finite differences in f64.
#include "support/vmap_preamble.hpp"

TEST_CASE("vmap of vmap", "[ad][vmap]") {
  auto f = [](const auto& a, const auto& b) { return st::sum(st::relu(a - b) * a); };
  const st::Tensor A = normal({3, 4, 2}, 61), Bm = normal({4, 2}, 62);
  // Inner over A's axis 1 (and B's axis 0), outer over A's axis 0 (B shared).
  const st::Tensor got = st::vmap(st::vmap(f, {0, 0}), {0, st::none})(A, Bm);
  REQUIRE(got.shape() == st::Shape{3, 4});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      require_close(got.ix(i, j), f(A.ix(i, j), Bm.ix(j)));
    }
  }
  // Per-example gradients of a vmapped function: vmap(grad(vmap)).
  auto g = st::vmap(st::grad([&](const auto& a) { return st::sum(st::vmap(f, {0, 0})(a, Bm)); }));
  const st::Tensor ga = g(A);
  for (int64_t i = 0; i < 3; ++i) {
    auto li = [&](const st::Tensor& a) {
      st::Tensor t = st::zeros({}, st::f64);
      for (int64_t j = 0; j < 4; ++j) t = t + f(a.ix(j), Bm.ix(j));
      return t;
    };
    require_close(ga.ix(i), fd_jacobian(li, A.ix(i)), 1e-6);
  }
}
