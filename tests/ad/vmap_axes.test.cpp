// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp): in_axes and out_axes (none, negative, nonzero, one
// int for every argument), trees in and out (maps, vectors, tuples with tree
// prefix specs), and the errors (batch sizes, axes out of range, specs that do
// not fit, nothing mapped, two vmaps' batches mixed, batched indices). The
// references are loops over examples on plain tensors.
#include "support/vmap_preamble.hpp"

TEST_CASE("vmap: in_axes and out_axes", "[ad][vmap]") {
  auto f = [](const auto& x, const auto& w) { return st::tanh(st::matmul(w, x)); };
  const st::Tensor w = normal({2, 3}, 1);
  SECTION("a nonzero in_axes and st::none") {
    const st::Tensor x = normal({3, 5}, 2);  // 5 examples of [3] along axis 1
    std::vector<st::Tensor> ys;
    for (int64_t i = 0; i < 5; ++i) ys.push_back(f(example(x, 1, i), w));
    require_close(st::vmap(f, {1, st::none})(x, w), stacked(ys));
  }
  SECTION("a negative in_axes counts from the end") {
    const st::Tensor x = normal({3, 4}, 3);
    std::vector<st::Tensor> ys;
    for (int64_t i = 0; i < 4; ++i) ys.push_back(f(example(x, -1, i), w));
    require_close(st::vmap(f, {-1, st::none})(x, w), stacked(ys));
  }
  SECTION("out_axes puts the batch axis where it says (also negative)") {
    const st::Tensor x = normal({4, 3}, 4);
    std::vector<st::Tensor> ys;
    auto g = [&](const auto& xi, const auto& wi) {
      return f(xi, wi).unsqueeze(1) * wi.ix(0).unsqueeze(0);  // [2, 3]
    };
    for (int64_t i = 0; i < 4; ++i) ys.push_back(g(example(x, 0, i), w));
    require_close(st::vmap(g, {0, st::none}, 1)(x, w), stacked(ys, 1));
    require_close(st::vmap(g, {0, st::none}, 2)(x, w), stacked(ys, 2));
    require_close(st::vmap(g, {0, st::none}, -1)(x, w), stacked(ys, 2));
  }
  SECTION("an output that does not depend on the examples is broadcast, or kept by st::none") {
    const st::Tensor x = normal({4, 3}, 5);
    auto g = [](const auto& xi, const auto& wi) { return std::make_tuple(xi * 2.0, wi * 3.0); };
    auto [a, b] = st::vmap(g, {0, st::none})(x, w);
    require_close(a, x * 2.0);
    require_close(b, st::stack({w * 3.0, w * 3.0, w * 3.0, w * 3.0}, 0));
    auto [c, d] = st::vmap(g, {0, st::none}, {0, st::none})(x, w);
    require_close(c, x * 2.0);
    require_close(d, w * 3.0);
  }
  SECTION("one int in_axes maps every argument") {
    const st::Tensor a = normal({3, 2}, 6), b = normal({3, 2}, 7);
    require_close(st::vmap([](auto x, auto y) { return st::sum(x * y); }, 0)(a, b),
                  st::sum(a * b, {1}));
  }
}

TEST_CASE("vmap: trees in and out", "[ad][vmap]") {
  using Params = std::map<std::string, st::Tensor>;
  const Params p{{"w", normal({2, 3}, 11)}, {"b", normal({4, 2}, 12)}};  // b: per example
  const std::vector<st::Tensor> xs{normal({4, 3}, 13), normal({3, 4}, 14)};
  auto f = [](const auto& prm, const auto& v) {
    auto h = st::matmul(prm.at("w"), v[0] * v[1]) + prm.at("b");
    return std::make_tuple(st::sum(h * h), std::vector{h, h * 2.0});
  };
  const st::AxisSpec pspec(std::map<std::string, st::AxisSpec>{{"w", st::none}, {"b", 0}});
  auto [s, hs] = st::vmap(f, {pspec, {0, 1}}, {0, {0, -1}})(p, xs);
  for (int64_t i = 0; i < 4; ++i) {
    const Params pi{{"w", p.at("w")}, {"b", example(p.at("b"), 0, i)}};
    const std::vector<st::Tensor> vi{example(xs[0], 0, i), example(xs[1], 1, i)};
    auto [si, hi] = f(pi, vi);
    require_close(s.ix(i), si);
    require_close(hs[0].ix(i), hi[0]);
    require_close(hs[1].ix(st::all, i), hi[1]);
  }
}

TEST_CASE("vmap: errors", "[ad][vmap]") {
  auto f = [](const auto& a, const auto& b) { return a * b; };
  const st::Tensor a = normal({3, 2}, 71), b = normal({4, 2}, 72);
  SECTION("different batch sizes name the arguments and the sizes") {
    REQUIRE_THROWS_AS(st::vmap(f)(a, b), st::ShapeError);
    REQUIRE_THROWS_WITH(st::vmap(f)(a, b),
                        Catch::Contains("argument 0 has 3") && Catch::Contains("argument 1 has 4"));
  }
  SECTION("an axis out of range") {
    REQUIRE_THROWS_AS(st::vmap(f, {2, 0})(a, a), st::IndexError);
    REQUIRE_THROWS_AS(st::vmap(f, {-3, 0})(a, a), st::IndexError);
    REQUIRE_THROWS_WITH(st::vmap(f, {0, 0}, 3)(a, a), Catch::Contains("out_axes axis 3"));
  }
  SECTION("a spec that does not match the tree") {
    const std::vector<st::Tensor> v{a, a};
    auto g = [](const auto& xs, const auto& y) { return xs[0] * y; };
    REQUIRE_THROWS_AS(st::vmap(g, {{0, 0, 0}, 0})(v, a), st::ValueError);  // 3 specs, 2 items
    REQUIRE_THROWS_AS(st::vmap(g, {0, {0}})(v, a), st::ValueError);        // a list for a tensor
    REQUIRE_THROWS_AS(st::vmap(f, {0, 0, 0})(a, a), st::ValueError);       // 3 specs, 2 args
    const std::map<std::string, st::Tensor> m{{"x", a}};
    const st::AxisSpec wrong_key(std::map<std::string, st::AxisSpec>{{"y", 0}});
    REQUIRE_THROWS_AS(st::vmap([](const auto& d) { return d.at("x"); }, {wrong_key})(m),
                      st::ValueError);
  }
  SECTION("nothing mapped, and a batched output with out_axes none") {
    REQUIRE_THROWS_AS(st::vmap(f, st::none)(a, a), st::ValueError);
    REQUIRE_THROWS_AS(st::vmap(f, 0, st::none)(a, a), st::ValueError);
  }
  SECTION("an inner vmap whose function captures an outer vmap's value of the same type") {
    auto outer = [&](const auto& x) {
      return st::vmap([&](const auto& y) { return x * y; })(a);  // x: outer, captured
    };
    REQUIRE_THROWS_AS(st::vmap(outer)(a), st::ValueError);
    // The fix the message gives: pass it as an argument with in_axes st::none.
    auto fixed = [&](const auto& x) {
      return st::vmap([](const auto& y, const auto& xo) { return xo * y; }, {0, st::none})(a, x);
    };
    const st::Tensor got = st::vmap(fixed)(a);  // [3 (outer), 3 (inner), 2]
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 3; ++j) require_close(got.ix(i, j), a.ix(i) * a.ix(j));
    }
  }
  SECTION("an index tensor computed from batched values has no plain value") {
    auto g = [](const auto& x) { return st::argmax(x, 0); };
    REQUIRE_THROWS_AS(st::vmap(g)(a), st::ValueError);
  }
}
