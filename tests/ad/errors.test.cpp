// SPDX-License-Identifier: MIT
// Tests for the errors of the AD layer (DESIGN §5, §6): each misuse throws the
// right st::Error subclass with a message naming the problem and the fix.
#include <catch2/catch.hpp>
#include <cmath>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/message_of.hpp"

namespace st = strata;
using Catch::Matchers::Contains;
using st::testing::f64s;
using st::testing::message_of;

namespace {

using Vec = std::vector<double>;

}  // namespace

TEST_CASE("grad of a function with more than one output element", "[ad]") {
  const st::Tensor x = f64s({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3});
  const std::string msg =
      message_of<st::ShapeError>([&] { st::grad([](const auto& a) { return st::tanh(a); }, x); });
  CHECK_THAT(msg, Contains("[2, 3]") && Contains("jacrev"));
  // value_and_grad and the function-returning form say the same.
  CHECK_THAT(message_of<st::ShapeError>(
                 [&] { st::value_and_grad([](const auto& a) { return st::sum(a, {0}); }, x); }),
             Contains("[3]") && Contains("jacrev"));
  CHECK_THAT(
      message_of<st::ShapeError>([&] { st::grad([](const auto& a) { return a * 2.0; })(x); }),
      Contains("[2, 3]"));
  // One element of any rank is fine.
  const st::Tensor g = st::grad([](const auto& a) { return st::sum(a, {0, 1}, true); }, x);
  CHECK(g.to_vector<double>() == Vec(6, 1.0));
}

TEST_CASE("grad of a function with an integer or bool output", "[ad]") {
  // No derivative flows through an integer or a comparison: an error, not zeros (as JAX).
  const st::Tensor x = f64s({0.5, -1.0, 2.0}, {3});
  CHECK_THAT(message_of<st::DTypeError>(
                 [&] { st::grad([](const auto& a) { return st::argmax(a, 0); }, x); }),
             Contains("grad") && Contains("i64") && Contains("float output"));
  CHECK_THAT(message_of<st::DTypeError>([&] {
               st::value_and_grad([](const auto& a) { return st::sum(a).cast(st::i64); }, x);
             }),
             Contains("i64"));
  CHECK_THROWS_AS(st::grad([](const auto& a) { return st::sum(a) > 0.0; }, x), st::DTypeError);
}

TEST_CASE("values from two different transform calls combined", "[ad]") {
  const st::Tensor x = f64s({0.5, -1.0, 2.0}, {3});
  SECTION("a value leaked out of one grad call used in another") {
    st::Reverse<st::Tensor> leaked;
    st::grad(
        [&](const auto& a) {
          leaked = a * 2.0;
          return st::sum(a);
        },
        x);
    const std::string msg = message_of<st::ValueError>(
        [&] { st::grad([&](const auto& b) { return st::sum(b * leaked); }, x); });
    CHECK_THAT(msg, Contains("constant_like"));
  }
  SECTION("an inner grad on a plain value capturing an outer value") {
    const st::Tensor one = st::full({}, 1.0, st::f64);
    auto f = [&](const auto& a) {
      return st::sum(a) * st::grad([&](const auto& y) { return st::sum(a * y); })(one);
    };
    CHECK_THAT(message_of<st::ValueError>([&] { st::grad(f, x); }), Contains("constant_like"));
  }
  SECTION("a value leaked out of one jvp call used in another") {
    st::Forward<st::Tensor> leaked;
    st::jvp(
        [&](const auto& a) {
          leaked = a * 2.0;
          return st::sum(a);
        },
        x, x);
    const std::string msg = message_of<st::ValueError>(
        [&] { st::jvp([&](const auto& b) { return st::sum(b * leaked); }, x, x); });
    CHECK_THAT(msg, Contains("constant_like"));
  }
}

TEST_CASE("a function returning a value of another transform call", "[ad]") {
  // The result must be a constant (derivative 0) or an error naming the fix;
  // never the old call's derivative read as this call's.
  const st::Tensor x = f64s({0.5, -1.0, 2.0}, {3});
  SECTION("reverse mode") {
    st::Reverse<st::Tensor> leaked;
    st::grad(
        [&](const auto& a) {
          leaked = st::sum(a * a);
          return leaked;
        },
        x);
    try {
      const st::Tensor g = st::grad([&](const auto&) { return leaked; }, x);
      CHECK(g.to_vector<double>() == Vec{0.0, 0.0, 0.0});
    } catch (const st::Error& e) {
      CHECK_THAT(std::string(e.what()), Contains("constant_like"));
    }
    try {
      auto [y, pullback] = st::vjp([&](const auto&) { return leaked; }, x);
      CHECK(pullback(st::full({}, 1.0, st::f64)).to_vector<double>() == Vec{0.0, 0.0, 0.0});
    } catch (const st::Error& e) {
      CHECK_THAT(std::string(e.what()), Contains("constant_like"));
    }
  }
  SECTION("forward mode") {
    st::Forward<st::Tensor> leaked;
    st::jvp(
        [&](const auto& a) {
          leaked = st::sum(a * a);
          return leaked;
        },
        x, x);
    try {
      auto [y, dy] = st::jvp([&](const auto&) { return leaked; }, x, x);
      CHECK(dy.item<double>() == 0.0);
    } catch (const st::Error& e) {
      CHECK_THAT(std::string(e.what()), Contains("constant_like"));
    }
  }
}

TEST_CASE("in-place writes to values a pending backward pass saved", "[ad]") {
  const Vec xv = {0.5, -1.0, 2.0}, wv = {1.5, 0.25, -2.0};
  st::Tensor x = f64s(xv, {3});
  st::Tensor w = f64s(wv, {3});
  // f(a) = sum(exp(a) * W): the pullback of exp saves exp(a), the pullback of * saves W.
  auto f = [&](const auto& a) { return st::sum(st::exp(a) * w); };
  const st::Tensor seed = st::full({}, 1.0, st::f64);

  SECTION("untouched: the pullback works") {
    auto [y, pullback] = st::vjp(f, x);
    Vec expected;
    for (std::size_t i = 0; i < 3; ++i) expected.push_back(std::exp(xv[i]) * wv[i]);
    const Vec g = pullback(seed).to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) CHECK(g[i] == Approx(expected[i]));
  }
  SECTION("W.mul_ after the forward pass") {
    auto [y, pullback] = st::vjp(f, x);
    w.mul_(st::full({}, 2.0, st::f64));
    const std::string msg = message_of<st::ValueError>([&, &pb = pullback] { pb(seed); });
    CHECK_THAT(msg, Contains("in place"));
  }
  SECTION("x.add_ after the forward pass") {
    // exp keeps its output, not x (ad/rules/elementwise.hpp, rules::Unary::keeps): the pullback
    // still computes the gradient at the x it was recorded at.
    auto [y, pullback] = st::vjp(f, x);
    x.add_(st::full({}, 1.0, st::f64));
    const Vec g = pullback(seed).to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) CHECK(g[i] == Approx(std::exp(xv[i]) * wv[i]));
    // sin keeps its input: writing into x then raises.
    auto [y2, pullback2] = st::vjp([&](const auto& a) { return st::sum(st::sin(a) * w); }, x);
    x.add_(st::full({}, 1.0, st::f64));
    CHECK_THAT(message_of<st::ValueError>([&, &pb = pullback2] { pb(seed); }),
               Contains("in place"));
  }
  SECTION("copy_ into a view of x's storage") {
    // sin keeps its input x, so rewriting x through a view must be caught.
    auto [y, pullback] = st::vjp([&](const auto& a) { return st::sum(st::sin(a) * w); }, x);
    st::Tensor view = x.reshape({1, 3});
    view.copy_(f64s({9.0, 8.0, 7.0}, {1, 3}));
    CHECK(x.to_vector<double>() == Vec{9.0, 8.0, 7.0});  // it was a view
    CHECK_THROWS_AS(pullback(seed), st::ValueError);
  }
  SECTION("a write inside the function, before grad runs backward") {
    auto g = [&](const auto& a) {
      auto out = st::sum(st::exp(a) * w);
      w.mul_(st::full({}, 3.0, st::f64));
      return out;
    };
    CHECK_THAT(message_of<st::ValueError>([&] { st::grad(g, x); }), Contains("in place"));
  }
  SECTION("a where condition written in place after the forward pass") {
    // The pullback of where(mask, a, 0) needs the mask: rewriting it would
    // silently move the gradient to other elements.
    st::Tensor mask = st::from_vector(std::vector<bool>{true, false, true}, {3});
    auto [y, pullback] =
        st::vjp([&](const auto& a) { return st::sum(st::where(mask, a, 0.0)); }, x);
    CHECK(pullback(seed).to_vector<double>() == Vec{1.0, 0.0, 1.0});
    mask.copy_(st::from_vector(std::vector<bool>{false, true, false}, {3}));
    CHECK_THROWS_AS(pullback(seed), st::ValueError);
  }
  SECTION("no error when the written tensor was not saved") {
    // sum and reshape save nothing: writing into x afterwards is harmless.
    auto [y, pullback] = st::vjp([](const auto& a) { return st::sum(st::reshape(a, {3, 1})); }, x);
    x.copy_(f64s({4.0, 5.0, 6.0}, {3}));
    CHECK(pullback(seed).to_vector<double>() == Vec{1.0, 1.0, 1.0});
    // W enters only through a plain value computed from it: W itself is not saved.
    auto [y2, pullback2] = st::vjp([&](const auto& a) { return st::sum(a * st::sum(w * w)); }, x);
    double ww = 0;
    for (double v : wv) ww += v * v;
    w.mul_(st::full({}, 2.0, st::f64));
    const Vec g = pullback2(seed).to_vector<double>();
    for (double v : g) CHECK(v == Approx(ww));
    // An unrelated tensor.
    st::Tensor other = f64s({1.0, 2.0}, {2});
    auto [y3, pullback3] = st::vjp(f, f64s(xv, {3}));
    other.mul_(st::full({}, 5.0, st::f64));
    CHECK_NOTHROW(pullback3(seed));
  }
}

TEST_CASE("in-place writes to the output a rule keeps", "[ad]") {
  // exp, sqrt, tanh and expm1 compute their derivative from their output, and so do
  // div and pow for their second operand (ad/rules/elementwise.hpp, keep_out): the
  // output is saved, so writing into it (the y that vjp returns shares its storage)
  // must be reported, not silently used for a wrong gradient.
  const st::Tensor x = f64s({0.5, 1.25, 2.0}, {3}), z = f64s({1.5, 0.75, -0.5}, {3});
  const st::Tensor ct = f64s({1.0, -2.0, 0.5}, {3});
  auto written = [&](auto&& pullback, st::Tensor y) {
    y.mul_(st::full({}, 2.0, st::f64));
    return message_of<st::ValueError>([&] { pullback(ct); });
  };
  SECTION("unary ops") {
    auto [e, pe] = st::vjp([](const auto& a) { return st::exp(a); }, x);
    CHECK_THAT(written(pe, e), Contains("in place"));
    auto [s, ps] = st::vjp([](const auto& a) { return st::sqrt(a); }, x);
    CHECK_THAT(written(ps, s), Contains("in place"));
    auto [t, pt] = st::vjp([](const auto& a) { return st::tanh(a); }, x);
    CHECK_THAT(written(pt, t), Contains("in place"));
    auto [m, pm] = st::vjp([](const auto& a) { return st::expm1(a); }, x);
    CHECK_THAT(written(pm, m), Contains("in place"));
  }
  SECTION("the second operand of div and pow") {
    // The gradient with respect to the exponent or divisor only: a and b themselves are
    // kept too, for the other partial, but the output is what the error must be about.
    auto [q, pq] = st::vjp([&](const auto& b) { return x / b; }, z);
    CHECK_THAT(written(pq, q), Contains("in place"));
    auto [p, pp] = st::vjp([&](const auto& b) { return st::pow(x, b); }, z);
    CHECK_THAT(written(pp, p), Contains("in place"));
  }
  SECTION("untouched, the same pullbacks work") {
    auto [e, pe] = st::vjp([](const auto& a) { return st::exp(a); }, x);
    const Vec g = pe(ct).to_vector<double>();
    const Vec xv = x.to_vector<double>(), cv = ct.to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) CHECK(g[i] == Approx(std::exp(xv[i]) * cv[i]));
  }
}

TEST_CASE("bad arguments to the transforms", "[ad]") {
  const st::Tensor x = f64s({0.5, -1.0, 2.0}, {3});
  auto f = [](const auto& a) { return st::sum(st::sin(a)); };
  SECTION("grad with respect to an integer tensor") {
    const st::Tensor i = st::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
    CHECK_THAT(message_of<st::DTypeError>([&] { st::grad(f, i); }), Contains("i64"));
    CHECK_THROWS_AS(st::jvp(f, i, i), st::DTypeError);
    CHECK_THROWS_AS(st::jacfwd(f, i), st::DTypeError);
    CHECK_THROWS_AS(st::jacrev(f, i), st::DTypeError);
    const st::Tensor b = st::from_vector(std::vector<bool>{true, false}, {2});
    CHECK_THROWS_AS(st::grad(f, b), st::DTypeError);
    // The second argument of several.
    CHECK_THROWS_AS(st::grad([](const auto& a, const auto& c) { return st::sum(a * c); }, x, i),
                    st::DTypeError);
  }
  SECTION("jvp tangent of another shape") {
    const std::string msg = message_of<st::ShapeError>([&] {
      st::jvp(f, x, f64s({1.0, 2.0}, {2}));
    });
    CHECK_THAT(msg, Contains("[2]") && Contains("[3]"));
    CHECK_THROWS_AS(st::jvp(f, x, f64s({1.0, 2.0, 3.0}, {3, 1})), st::ShapeError);
  }
  SECTION("jvp tangent of another dtype") {
    const std::string msg = message_of<st::DTypeError>([&] {
      st::jvp(f, x, st::from_vector(std::vector<float>{1, 2, 3}, {3}));
    });
    CHECK_THAT(msg, Contains("f32") && Contains("f64"));
  }
  SECTION("vjp cotangent of the wrong shape") {
    auto [y, pullback] = st::vjp([](const auto& a) { return st::tanh(a); }, x);
    const std::string msg = message_of<st::ShapeError>([&, &pb = pullback] {
      pb(f64s({1.0, 2.0}, {2}));
    });
    CHECK_THAT(msg, Contains("[2]") && Contains("[3]"));
    CHECK_THROWS_AS(pullback(st::full({}, 1.0, st::f64)), st::ShapeError);
    CHECK_THROWS_AS(pullback(st::from_vector(std::vector<float>{1, 2, 3}, {3})), st::DTypeError);
    // The pullback still works after the failures.
    CHECK(pullback(f64s({1.0, 0.0, 0.0}, {3})).to_vector<double>()[0] ==
          Approx(1.0 - std::tanh(0.5) * std::tanh(0.5)));
  }
  SECTION("errors are st::Error and std::runtime_error") {
    CHECK_THROWS_AS(st::grad([](const auto& a) { return a; }, x), st::Error);
    CHECK_THROWS_AS(st::grad([](const auto& a) { return a; }, x), std::runtime_error);
  }
}
