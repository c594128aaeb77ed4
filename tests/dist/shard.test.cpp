// SPDX-License-Identifier: MIT
// st::dist::vmap, jacrev and hessian (dist/shard.hpp) equal their one-process st::
// counterparts, for batch sizes that do not divide among the ranks and for fewer examples
// than ranks.
#include <catch2/catch.hpp>
#include <dist/dist.hpp>
#include <map>
#include <strata.hpp>
#include <string>

namespace st = strata;

namespace {

void require_close(const st::Tensor& got, const st::Tensor& want, double tol = 1e-12) {
  REQUIRE(got.shape() == want.shape());
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": " << g[i] << " vs " << w[i]);
    REQUIRE(std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i])));
  }
}

// A function from R^5 to R^[2, 3] that mixes every input into every output.
auto f = [](const auto& x) {
  const st::Tensor A = st::randn({6, 5}, 21, st::f64);
  return st::reshape(st::sin(st::matmul(A, x)) * st::sum(x * x), {2, 3});
};

}  // namespace

TEST_CASE("dist::jacrev equals st::jacrev, its rows spread over the ranks", "[dist][shard]") {
  const st::Tensor x = st::randn({5}, 22, st::f64);
  const st::Tensor J = st::dist::jacrev(f, x);
  REQUIRE(J.shape() == st::Shape{2, 3, 5});
  require_close(J, st::jacrev(f, x));
  // One output row: fewer rows than ranks.
  auto g = [](const auto& v) { return st::sum(st::exp(v) * v); };
  require_close(st::dist::jacrev(g, x), st::jacrev(g, x));
  // No output: an empty Jacobian, no communication needed.
  auto none = [](const auto& v) { return st::reshape(v, {5, 1}).ix(st::all, st::slice(0, 0)); };
  REQUIRE(st::dist::jacrev(none, x).shape() == st::Shape{5, 0, 5});
}

TEST_CASE("dist::hessian equals st::hessian", "[dist][shard]") {
  auto h = [](const auto& v) { return st::sum(st::sin(v) * st::sum(v * v)) + st::sum(st::exp(v)); };
  const st::Tensor x = st::randn({7}, 23, st::f64);
  require_close(st::dist::hessian(h, x), st::hessian(h, x), 1e-10);
}

TEST_CASE("dist::vmap equals st::vmap: per-example gradients", "[dist][shard]") {
  using Params = std::map<std::string, st::Tensor>;
  auto loss = [](const auto& p, const auto& x, const auto& y) {
    auto h = st::tanh(st::matmul(p.at("w1"), x) + p.at("b1"));
    return st::sum(st::pow(st::matmul(p.at("w2"), h) - y, 2.0));
  };
  const Params p{{"w1", st::randn({4, 3}, 24, st::f64)},
                 {"b1", st::randn({4}, 25, st::f64)},
                 {"w2", st::randn({2, 4}, 26, st::f64)}};
  for (int64_t n : {7, 3, 1, 8}) {
    INFO(n << " examples");
    const st::Tensor X = st::randn({n, 3}, 27, st::f64), Y = st::randn({n, 2}, 28, st::f64);
    auto [g, gx, gy] = st::dist::vmap(st::grad(loss), {st::none, 0, 0})(p, X, Y);
    auto [g_ref, gx_ref, gy_ref] = st::vmap(st::grad(loss), {st::none, 0, 0})(p, X, Y);
    for (const auto& [name, t] : g_ref) require_close(g.at(name), t);
    require_close(gx, gx_ref);
    require_close(gy, gy_ref);
  }
}

TEST_CASE("dist::vmap: axes other than 0, unmapped outputs, st::vmap's errors", "[dist][shard]") {
  const st::Tensor X = st::randn({3, 5}, 29, st::f64);  // examples along axis 1
  const st::Tensor c = st::ones({2}, st::f64);
  auto two = [&c](const auto& x) { return std::tuple{st::exp(x), c}; };  // c: one for all
  auto [a, b] = st::dist::vmap(two, 1, {1, st::none})(X);
  auto [a_ref, b_ref] = st::vmap(two, 1, {1, st::none})(X);
  require_close(a, a_ref);
  require_close(b, b_ref);
  auto mapped = [](const auto& x) { return std::tuple{st::exp(x), st::sum(x)}; };
  REQUIRE_THROWS_AS(st::dist::vmap(mapped, 1, {1, st::none})(X), st::ValueError);
  REQUIRE_THROWS_AS(st::dist::vmap(two, 2)(X), st::IndexError);
  auto pair = [](const auto& u, const auto& v) { return u + v; };
  REQUIRE_THROWS_AS(st::dist::vmap(pair)(X, st::randn({4, 5}, 30, st::f64)), st::ShapeError);
}
