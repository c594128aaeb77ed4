// SPDX-License-Identifier: MIT
// st::vmap (ad/vmap.hpp) over the movement ops and indexing with constant
// indices (take, oix, vix, ix): each case is
// checked as in vmap.test.cpp (tests/support/vmap_sweep.hpp) against loops over
// examples: vmap(f), vmap(f, {0, st::none}) and vmap(grad(sum(sin(f)))).
#include "support/vmap_preamble.hpp"

TEST_CASE("vmap: movement", "[ad][vmap]") {
  const Operands o{{2, 3}, {3, 2}};
  SECTION("transpose, permute") {
    check(
        "transpose", o, [](auto a, auto b) { return a.transpose(0, 1) * b; }, 410);
  }
  SECTION("reshape, flatten") {
    check(
        "reshape", o,
        [](auto a, auto b) {
          return a.reshape({3, 2}) + st::flatten(b).reshape({3, 2});
        },
        420);
  }
  SECTION("slices with steps, flip") {
    check(
        "slice", {{4, 3}, {3}},
        [](auto a, auto b) { return a.ix(st::slice(3, st::none, -2), st::all) * st::flip(b, 0); },
        430);
  }
  SECTION("pad") {
    check(
        "pad", o,
        [](auto a, auto b) {
          return st::pad(a, {{1, 0}, {0, 2}}) * 2.0 + st::sum(b);
        },
        440);
  }
  SECTION("concat, stack") {
    check(
        "concat", o,
        [](auto a, auto b) {
          return st::concat({a, b.transpose(0, 1)}, 1).reshape({2, 2, 3}) + st::stack({a, a}, 0);
        },
        450);
  }
  SECTION("squeeze, unsqueeze, broadcast") {
    check(
        "unsqueeze", {{3}, {2, 1}},
        [](auto a, auto b) { return a.unsqueeze(0) * b + b.squeeze(1).unsqueeze(1); }, 460);
  }
}

TEST_CASE("vmap: reshape with -1 over a batch of 0 examples", "[ad][vmap]") {
  // The -1 is one example's: [0, 3] examples of [3] become [0, 3, 1], as JAX resolves it.
  auto f = [](const auto& x) { return st::reshape(x, {-1, 1}); };
  CHECK(st::vmap(f)(st::zeros({0, 3}, st::f64)).shape() == st::Shape{0, 3, 1});
  CHECK(st::vmap(f)(st::zeros({2, 3}, st::f64)).shape() == st::Shape{2, 3, 1});
  const st::Tensor w = st::ones({2, 3}, st::f64);
  auto jac = st::jacrev([&](const auto& x) { return st::tanh(st::matmul(w, x)); });
  CHECK(st::vmap(jac)(st::zeros({0, 3}, st::f64)).shape() == st::Shape{0, 2, 3});
}

TEST_CASE("vmap: indexing with constant indices", "[ad][vmap]") {
  const st::Tensor idx = st::testing::i64s({2, 0, 2, 1}, {4});
  SECTION("take (index_select)") {
    check(
        "take", {{3, 2}, {4}},
        [idx](auto a, auto b) { return st::take(a, idx, 0) * b.unsqueeze(1); }, 510);
  }
  SECTION("outer and vectorized indexing") {
    check(
        "oix", {{3, 3}, {4}},
        [idx](auto a, auto b) { return st::sum(a.oix(idx, st::all), {1}) + a.vix(idx, idx) * b; },
        520);
  }
  SECTION("integer and slice indexing, newaxis") {
    check(
        "ix", {{3, 4}, {4}},
        [](auto a, auto b) {
          return a.ix(1, st::slice(0, 4)) * b + a.ix(-1, st::newaxis, st::all).squeeze(0);
        },
        530);
  }
}

TEST_CASE("vmap: an out-of-range index names the example's axis", "[ad][vmap][errors]") {
  // As without vmap: examples [3], the gathered axis 0 (the batched form's axis 1).
  const st::Tensor idx = st::testing::i64s({0, 5}, {2});
  const st::Tensor xs = st::ones({4, 3}, st::f64);
  auto expect = [&](auto f) {
    try {
      (void)f();
      FAIL("no IndexError");
    } catch (const st::IndexError& e) {
      CHECK_THAT(e.what(), Catch::Contains("out of range for axis 0 with size 3"));
    }
  };
  expect([&] { return st::take(xs.ix(0), idx, 0); });
  expect([&] { return st::vmap([&](const auto& x) { return st::take(x, idx, 0); })(xs); });
  expect([&] {
    return st::vmap([&](const auto& x) {
      using L = std::decay_t<decltype(x)>;
      return st::Prims<L>::index_add(x, 0, idx, st::lift<L>(st::ones({2}, st::f64)));
    })(xs);
  });
}
