// SPDX-License-Identifier: MIT
// st::hessian of functions with more than one output element (ad/jacobian.hpp):
// jacfwd(jacrev(f)), as jax.hessian and torch.func.hessian, f's output dims
// first, then the argument's dims twice. References: the Hessian of each
// output element as a scalar function (computed on its own), central
// second differences in f64 of the plain function, jacfwd(jacfwd(f)) and
// jacrev(jacrev(f)), and the example of JAX's jax.hessian documentation.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <strata.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/transforms_ref.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;
using st::testing::normal;
using st::testing::require_close;

namespace {
using Vec = std::vector<double>;

/// H[i] of an output element i of a plain f: [n] -> out, by central second differences.
template <class F>
st::Tensor fd_hessian_of(F f, const st::Tensor& x, int64_t i) {
  const Vec xv = x.to_vector<double>();
  const int64_t n = x.numel();
  auto element = [&](const Vec& y) {
    return f(st::from_vector(y, x.shape())).reshape({-1}).ix(i).template item<double>();
  };
  return st::from_vector(transforms_ref::fd_hessian(element, xv), {n, n});
}
}  // namespace

TEST_CASE("hessian of a vector-valued function: the output dims first", "[ad]") {
  const st::Tensor A = normal({4, 3}, 1), x = normal({3}, 2);
  // p: [3] -> [4], every output element a different nonlinear function of x.
  auto p = [&](const auto& v) { return st::tanh(st::matmul(A, v)) * st::sum(v * v * v); };
  const st::Tensor H = st::hessian(p, x);
  CHECK(H.shape() == st::Shape{4, 3, 3});  // torch.func.hessian and jax.hessian: [4, 3, 3]
  for (int64_t i = 0; i < 4; ++i) {
    INFO("output element " << i);
    // H[i] is the Hessian of the scalar function x -> p(x)[i].
    const st::Tensor hi = st::hessian([&](const auto& v) { return p(v).ix(i); }, x);
    require_close(H.ix(i), hi, 1e-12, "H[i] vs the scalar hessian");
    require_close(H.ix(i), fd_hessian_of(p, x, i), 1e-5, "H[i] vs finite differences");
    require_close(H.ix(i), H.ix(i).transpose(0, 1), 1e-12, "H[i] symmetric");
  }
  // The other compositions, and the function-returning form.
  require_close(st::jacfwd(st::jacfwd(p))(x), H, 1e-12, "jacfwd(jacfwd)");
  require_close(st::jacrev(st::jacrev(p))(x), H, 1e-12, "jacrev(jacrev)");
  require_close(st::hessian(p)(x), H, 1e-12, "hessian(p)(x)");
}

TEST_CASE("hessian of a matrix-valued function: out ++ in ++ in", "[ad]") {
  const st::Tensor x = normal({2, 3}, 11);
  // q: [2, 3] -> [3, 3]: x^T sin(x).
  auto q = [](const auto& v) { return st::matmul(st::transpose(v, 0, 1), st::sin(v)); };
  const st::Tensor H = st::hessian(q, x);
  REQUIRE(H.shape() == st::Shape{3, 3, 2, 3, 2, 3});
  const st::Tensor flat = H.reshape({9, 6, 6});
  for (int64_t i = 0; i < 9; ++i) {
    INFO("output element " << i);
    require_close(flat.ix(i), fd_hessian_of(q, x, i), 1e-5);
  }
  require_close(H, st::jacrev(st::jacrev(q))(x), 1e-12);
}

TEST_CASE("hessian of a vector output with several arguments and argnums: the blocks", "[ad]") {
  const st::Tensor x = normal({3}, 21), y = normal({2}, 22);
  // f: ([3], [2]) -> [5].
  auto f = [](const auto& u, const auto& v) {
    return st::concat({st::sin(u) * st::sum(v * v), st::exp(v * 0.5) * st::sum(u * u * v.ix(0))},
                      0) +
           st::sum(u * u * u);
  };
  auto h = st::hessian(f, x, y);
  static_assert(std::is_same_v<decltype(h), std::tuple<std::tuple<st::Tensor, st::Tensor>,
                                                       std::tuple<st::Tensor, st::Tensor>>>);
  auto [hx, hy] = h;
  auto [hxx, hxy] = hx;
  auto [hyx, hyy] = hy;
  CHECK(hxx.shape() == st::Shape{5, 3, 3});
  CHECK(hxy.shape() == st::Shape{5, 3, 2});
  CHECK(hyx.shape() == st::Shape{5, 2, 3});
  CHECK(hyy.shape() == st::Shape{5, 2, 2});
  for (int64_t i = 0; i < 5; ++i) {
    INFO("output element " << i);
    // Each output element's blocks, from the scalar function of two arguments.
    auto [sx, sy] = st::hessian([&](const auto& u, const auto& v) { return f(u, v).ix(i); }, x, y);
    require_close(hxx.ix(i), std::get<0>(sx), 1e-12, "xx");
    require_close(hxy.ix(i), std::get<1>(sx), 1e-12, "xy");
    require_close(hyx.ix(i), std::get<0>(sy), 1e-12, "yx");
    require_close(hyy.ix(i), std::get<1>(sy), 1e-12, "yy");
    require_close(hxy.ix(i), hyx.ix(i).transpose(0, 1), 1e-12, "Hxy = Hyx^T");
    // Against finite differences of each argument's closure.
    require_close(hxx.ix(i), fd_hessian_of([&](const st::Tensor& u) { return f(u, y); }, x, i),
                  1e-5, "xx fd");
    require_close(hyy.ix(i), fd_hessian_of([&](const st::Tensor& v) { return f(x, v); }, y, i),
                  1e-5, "yy fd");
  }
  // One index: that block alone; several in the order given.
  require_close(st::hessian(f, st::argnums<1>, x, y), hyy, 1e-12, "argnums<1>");
  auto [h1, h0] = st::hessian(f, st::argnums<1, 0>)(x, y);
  require_close(std::get<0>(h1), hyy, 1e-12);
  require_close(std::get<1>(h1), hyx, 1e-12);
  require_close(std::get<0>(h0), hxy, 1e-12);
  require_close(std::get<1>(h0), hxx, 1e-12);
}

TEST_CASE("hessian of tree outputs and tree arguments: JAX's documented example", "[ad]") {
  // From the jax.hessian documentation (docs.jax.dev, jax.hessian): for
  //   f = lambda dct: {"c": jnp.power(dct["a"], dct["b"])}
  // at {"a": [1., 2.], "b": [2., 3.]}, jax.hessian(f) is {"c": {"a": {"a": ., "b": .},
  // "b": {"a": ., "b": .}}}, every leaf of shape [2, 2, 2] (out ++ in ++ in), zero off the
  // diagonal. Its nonzero entries, in closed form for c = a^b (the values the page prints):
  //   d2c/da2 = b (b - 1) a^(b - 2):   2, 12
  //   d2c/da db = a^(b - 1) (1 + b ln a): 1, 4 (1 + 3 ln 2) = 12.317766...
  //   d2c/db2 = a^b (ln a)^2:          0, 8 (ln 2)^2 = 3.843624...
  using Tree = std::map<std::string, st::Tensor>;
  auto f = [](const auto& d) {
    using T = std::remove_cvref_t<decltype(d.at("a"))>;
    return std::map<std::string, T>{{"c", st::pow(d.at("a"), d.at("b"))}};
  };
  const Tree x{{"a", st::from_vector(Vec{1, 2}, {2})}, {"b", st::from_vector(Vec{2, 3}, {2})}};
  const auto H = st::hessian(f, x);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(H)>,
                               std::map<std::string, std::map<std::string, Tree>>>);
  REQUIRE(H.size() == 1);
  const auto& hc = H.at("c");
  const double ln2 = std::log(2.0);
  auto diagonal = [](double d0, double d1) {
    return st::from_vector(Vec{d0, 0, 0, 0, 0, 0, 0, d1}, {2, 2, 2});
  };
  require_close(hc.at("a").at("a"), diagonal(2, 12), 1e-12, "aa");
  require_close(hc.at("a").at("b"), diagonal(1, 4 * (1 + 3 * ln2)), 1e-12, "ab");
  require_close(hc.at("b").at("a"), diagonal(1, 4 * (1 + 3 * ln2)), 1e-12, "ba");
  require_close(hc.at("b").at("b"), diagonal(0, 8 * ln2 * ln2), 1e-12, "bb");
  // The page's printed values, to its f32 precision.
  CHECK(hc.at("a").at("b").ix(1, 1, 1).item<double>() == Approx(12.317766).epsilon(1e-7));
  CHECK(hc.at("b").at("b").ix(1, 1, 1).item<double>() == Approx(3.843624).epsilon(1e-7));
}

TEST_CASE("hessian of a tuple output: a scalar and a vector", "[ad]") {
  const st::Tensor x = normal({3}, 31);
  auto f = [](const auto& v) { return std::make_tuple(st::sum(st::sin(v) * v), st::exp(v) * v); };
  auto [hs, hv] = st::hessian(f, x);
  CHECK(hs.shape() == st::Shape{3, 3});
  CHECK(hv.shape() == st::Shape{3, 3, 3});
  require_close(hs, st::hessian([](const auto& v) { return st::sum(st::sin(v) * v); }, x), 1e-12);
  // exp(v_i) v_i depends on v_i alone: H[i] is zero but for (i, i), (2 + v_i) exp(v_i).
  const Vec xv = x.to_vector<double>();
  Vec want(27, 0.0);
  for (std::size_t i = 0; i < 3; ++i) want[i * 9 + i * 3 + i] = (2 + xv[i]) * std::exp(xv[i]);
  require_close(hv, st::from_vector(want, {3, 3, 3}), 1e-12);
}
