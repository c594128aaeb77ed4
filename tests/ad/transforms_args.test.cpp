// SPDX-License-Identifier: MIT
// jacfwd, jacrev, hessian, grad and value_and_grad with several arguments,
// trees, st::argnums and tree outputs (ad/jacobian.hpp, ad/argnums.hpp).
// References: central finite differences in f64 of the function with the
// other arguments closed over (tests/support/vmap_ref.hpp), the
// single-argument transforms of those closures, jacfwd == jacrev, Hessian
// symmetry, and the Hessian of the concatenated single-argument function.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <strata.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;
using st::testing::example;
using st::testing::fd_jacobian;
using st::testing::normal;
using st::testing::require_close;

namespace {

// f(x [3], W [2, 3], b [2]) -> [2]: every argument matters, nonlinearly.
auto make_f() {
  return [](const auto& x, const auto& w, const auto& b) {
    return st::tanh(st::matmul(w, x) + b) * st::sum(x * x);
  };
}

// A scalar function of x [3] and y [2] with every Hessian entry distinct.
auto make_scalar() {
  return [](const auto& x, const auto& y) {
    return st::sum(st::sin(x) * st::sum(y * y * y)) + st::sum(st::exp(x * 0.5)) * y.ix(0) +
           st::sum(x * x * x);
  };
}
}  // namespace

TEST_CASE("jacfwd and jacrev of several arguments", "[ad]") {
  auto f = make_f();
  const st::Tensor x = normal({3}, 1), w = normal({2, 3}, 2), b = normal({2}, 3);
  auto [fx, fw, fb] = st::jacfwd(f, x, w, b);
  auto result = st::jacrev(f, x, w, b);
  static_assert(std::is_same_v<decltype(result), std::tuple<st::Tensor, st::Tensor, st::Tensor>>);
  auto [rx, rw, rb] = result;
  CHECK(fx.shape() == st::Shape{2, 3});
  CHECK(fw.shape() == st::Shape{2, 2, 3});
  CHECK(fb.shape() == st::Shape{2, 2});
  // Each block against finite differences of f with the other arguments closed over.
  const st::Tensor dx = fd_jacobian([&](const st::Tensor& v) { return f(v, w, b); }, x);
  const st::Tensor dw = fd_jacobian([&](const st::Tensor& v) { return f(x, v, b); }, w);
  const st::Tensor db = fd_jacobian([&](const st::Tensor& v) { return f(x, w, v); }, b);
  require_close(fx, dx, 1e-6, "jacfwd x");
  require_close(fw, dw, 1e-6, "jacfwd W");
  require_close(fb, db, 1e-6, "jacfwd b");
  require_close(rx, fx, 1e-12, "jacrev x");
  require_close(rw, fw, 1e-12, "jacrev W");
  require_close(rb, fb, 1e-12, "jacrev b");
  // And against the single-argument Jacobian of the closure.
  require_close(fw, st::jacfwd([&](const auto& v) { return f(x, v, b); }, w), 1e-12, "closure");
  require_close(rx, st::jacrev([&](const auto& v) { return f(v, w, b); }, x), 1e-12, "closure");

  SECTION("argnums: one index gives that argument's Jacobian") {
    const st::Tensor jw = st::jacrev(f, st::argnums<1>, x, w, b);
    require_close(jw, fw, 1e-12, "jacrev argnums<1>");
    require_close(st::jacfwd(f, st::argnums<1>, x, w, b), fw, 1e-12, "jacfwd argnums<1>");
  }
  SECTION("argnums: several indices give a tuple in the order given") {
    auto got = st::jacfwd(f, st::argnums<2, 0>, x, w, b);
    static_assert(std::is_same_v<decltype(got), std::tuple<st::Tensor, st::Tensor>>);
    require_close(std::get<0>(got), fb, 1e-12, "b first");
    require_close(std::get<1>(got), fx, 1e-12, "x second");
    auto [jb, jx] = st::jacrev(f, st::argnums<2, 0>, x, w, b);
    require_close(jb, fb, 1e-12);
    require_close(jx, fx, 1e-12);
  }
  SECTION("function-returning forms") {
    auto [gx, gw] = st::jacfwd(f, st::argnums<0, 1>)(x, w, b);
    require_close(gx, fx, 1e-12);
    require_close(gw, fw, 1e-12);
    require_close(st::jacrev(f, st::argnums<2>)(x, w, b), fb, 1e-12);
    auto [hx, hw, hb] = st::jacrev(f)(x, w, b);
    require_close(hx, fx, 1e-12);
    require_close(hw, fw, 1e-12);
    require_close(hb, fb, 1e-12);
  }
  SECTION("an argument not chosen may be an integer tensor") {
    auto g = [](const auto& v, const auto& k) { return v * st::cast(k, st::f64); };
    const st::Tensor k = st::from_vector(std::vector<int64_t>{2, -3, 5}, {3});
    const st::Tensor want =
        st::from_vector(std::vector<double>{2, 0, 0, 0, -3, 0, 0, 0, 5}, {3, 3});
    require_close(st::jacfwd(g, st::argnums<0>, x, k), want, 1e-12);
    require_close(st::jacrev(g, st::argnums<0>, x, k), want, 1e-12);
  }
}

TEST_CASE("jacfwd and jacrev of tree arguments give trees of Jacobians", "[ad]") {
  using Params = std::map<std::string, st::Tensor>;
  const Params p{{"w", normal({2, 3}, 11)}, {"b", normal({2}, 12)}};
  const std::vector<st::Tensor> xs{normal({3}, 13), normal({3}, 14)};
  const st::Tensor s = normal({}, 15);
  // Output [2].
  auto f = [](const auto& q, const auto& v, const auto& c) {
    return st::sin(st::matmul(q.at("w"), v[0] * v[1]) + q.at("b")) * c;
  };
  auto [fp, fv, fc] = st::jacfwd(f, p, xs, s);
  auto [rp, rv, rc] = st::jacrev(f, p, xs, s);
  static_assert(std::is_same_v<decltype(fp), Params>);
  static_assert(std::is_same_v<decltype(rv), std::vector<st::Tensor>>);
  REQUIRE(fp.size() == 2);
  REQUIRE(fv.size() == 2);
  CHECK(fp.at("w").shape() == st::Shape{2, 2, 3});
  CHECK(fp.at("b").shape() == st::Shape{2, 2});
  CHECK(fv[1].shape() == st::Shape{2, 3});
  CHECK(fc.shape() == st::Shape{2});
  for (const std::string k : {"w", "b"}) {
    const st::Tensor fd = fd_jacobian(
        [&](const st::Tensor& t) {
          Params q = p;
          q[k] = t;
          return f(q, xs, s);
        },
        p.at(k));
    require_close(fp.at(k), fd, 1e-6, "jacfwd " + k);
    require_close(rp.at(k), fp.at(k), 1e-12, "jacrev " + k);
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const st::Tensor fd = fd_jacobian(
        [&](const st::Tensor& t) {
          std::vector<st::Tensor> v = xs;
          v[i] = t;
          return f(p, v, s);
        },
        xs[i]);
    require_close(fv[i], fd, 1e-6, "jacfwd xs[i]");
    require_close(rv[i], fv[i], 1e-12, "jacrev xs[i]");
  }
  require_close(fc, fd_jacobian([&](const st::Tensor& t) { return f(p, xs, t); }, s), 1e-6);
  require_close(rc, fc, 1e-12);
  // argnums picks the vector out of the three.
  const std::vector<st::Tensor> only = st::jacrev(f, st::argnums<1>, p, xs, s);
  require_close(only[0], fv[0], 1e-12);
  require_close(only[1], fv[1], 1e-12);
  // A tuple and an array argument.
  auto g = [](const auto& t, const auto& a) {
    return std::get<0>(t) * std::get<1>(t) + st::sum(a[0] * a[1]);
  };
  const auto tup = std::make_tuple(normal({2}, 16), normal({2}, 17));
  const std::array<st::Tensor, 2> arr{normal({2, 2}, 18), normal({2, 2}, 19)};
  auto [ft, fa] = st::jacfwd(g, tup, arr);
  auto [rt, ra] = st::jacrev(g, tup, arr);
  static_assert(std::is_same_v<decltype(fa), std::array<st::Tensor, 2>>);
  require_close(
      std::get<0>(ft),
      st::jacfwd([&](const auto& u) { return g(std::make_tuple(u, std::get<1>(tup)), arr); },
                 std::get<0>(tup)),
      1e-12);
  require_close(std::get<1>(rt), std::get<1>(ft), 1e-12);
  require_close(std::get<0>(rt), std::get<0>(ft), 1e-12);
  require_close(fa[1],
                fd_jacobian(
                    [&](const st::Tensor& v) {
                      return g(tup, std::array<st::Tensor, 2>{arr[0], v});
                    },
                    arr[1]),
                1e-6);
  require_close(ra[0], fa[0], 1e-12);
  require_close(ra[1], fa[1], 1e-12);
}

TEST_CASE("a function returning a tree: output tree outermost", "[ad]") {
  const st::Tensor x = normal({3}, 21), y = normal({2}, 22);
  // (a [2], c []) of (x, y).
  auto f = [](const auto& u, const auto& v) {
    return std::make_tuple(st::exp(v) * st::sum(st::sin(u)), st::sum(u * u) * st::sum(v));
  };
  auto fwd = st::jacfwd(f, x, y);
  auto rev = st::jacrev(f, x, y);
  static_assert(std::is_same_v<decltype(fwd), std::tuple<std::tuple<st::Tensor, st::Tensor>,
                                                         std::tuple<st::Tensor, st::Tensor>>>);
  auto [da, dc] = fwd;
  auto [dadx, dady] = da;
  auto [dcdx, dcdy] = dc;
  CHECK(dadx.shape() == st::Shape{2, 3});
  CHECK(dady.shape() == st::Shape{2, 2});
  CHECK(dcdx.shape() == st::Shape{3});
  CHECK(dcdy.shape() == st::Shape{2});
  auto a = [&](const st::Tensor& u, const st::Tensor& v) { return std::get<0>(f(u, v)); };
  auto c = [&](const st::Tensor& u, const st::Tensor& v) { return std::get<1>(f(u, v)); };
  require_close(dadx, fd_jacobian([&](const st::Tensor& t) { return a(t, y); }, x), 1e-6);
  require_close(dady, fd_jacobian([&](const st::Tensor& t) { return a(x, t); }, y), 1e-6);
  require_close(dcdx, fd_jacobian([&](const st::Tensor& t) { return c(t, y); }, x), 1e-6);
  require_close(dcdy, fd_jacobian([&](const st::Tensor& t) { return c(x, t); }, y), 1e-6);
  require_close(std::get<0>(std::get<0>(rev)), dadx, 1e-12);
  require_close(std::get<1>(std::get<0>(rev)), dady, 1e-12);
  require_close(std::get<0>(std::get<1>(rev)), dcdx, 1e-12);
  require_close(std::get<1>(std::get<1>(rev)), dcdy, 1e-12);
  // One argument: each output leaf holds that argument's Jacobian itself.
  auto one = st::jacrev(f, st::argnums<1>, x, y);
  static_assert(std::is_same_v<decltype(one), std::tuple<st::Tensor, st::Tensor>>);
  require_close(std::get<0>(one), dady, 1e-12);
  require_close(std::get<1>(one), dcdy, 1e-12);
  // A vector of outputs.
  auto g = [](const auto& u) { return std::vector{st::sin(u), st::cos(u.ix(st::slice(0, 2)))}; };
  const std::vector<st::Tensor> jf = st::jacfwd(g, x), jr = st::jacrev(g, x);
  REQUIRE(jf.size() == 2);
  require_close(jf[0], st::jacfwd([](const auto& u) { return st::sin(u); }, x), 1e-12);
  require_close(jf[1], fd_jacobian([&](const st::Tensor& t) { return g(t)[1]; }, x), 1e-6);
  require_close(jr[0], jf[0], 1e-12);
  require_close(jr[1], jf[1], 1e-12);
  // An output leaf that is a captured plain tensor: a constant, its Jacobian zeros.
  const st::Tensor k = normal({4}, 23);
  auto h = [&](const auto& u) { return std::make_tuple(st::sin(u), k); };
  auto [kf0, kf1] = st::jacfwd(h, x);
  auto [kr0, kr1] = st::jacrev(h, x);
  require_close(kf0, jf[0], 1e-12);
  require_close(kr0, jf[0], 1e-12);
  require_close(kf1, st::zeros({4, 3}, st::f64), 0.0);
  require_close(kr1, st::zeros({4, 3}, st::f64), 0.0);
}

TEST_CASE("hessian of several arguments: the blocks", "[ad]") {
  auto f = make_scalar();
  const st::Tensor x = normal({3}, 31), y = normal({2}, 32);
  auto h = st::hessian(f, x, y);
  static_assert(std::is_same_v<decltype(h), std::tuple<std::tuple<st::Tensor, st::Tensor>,
                                                       std::tuple<st::Tensor, st::Tensor>>>);
  auto [hx, hy] = h;
  auto [hxx, hxy] = hx;
  auto [hyx, hyy] = hy;
  CHECK(hxx.shape() == st::Shape{3, 3});
  CHECK(hxy.shape() == st::Shape{3, 2});
  CHECK(hyx.shape() == st::Shape{2, 3});
  CHECK(hyy.shape() == st::Shape{2, 2});
  // Symmetric: H_xy = H_yx^T, and each diagonal block symmetric.
  require_close(hxy, hyx.transpose(0, 1), 1e-12, "Hxy = Hyx^T");
  require_close(hxx, hxx.transpose(0, 1), 1e-12, "Hxx symmetric");
  // The Hessian of the concatenated single-argument function, rearranged.
  auto g = [&](const auto& z) { return f(z.ix(st::slice(0, 3)), z.ix(st::slice(3, 5))); };
  const st::Tensor z = st::concat({x, y}, 0);
  const st::Tensor hz = st::hessian(g, z);
  require_close(hxx, hz.ix(st::slice(0, 3), st::slice(0, 3)), 1e-12, "xx");
  require_close(hxy, hz.ix(st::slice(0, 3), st::slice(3, 5)), 1e-12, "xy");
  require_close(hyx, hz.ix(st::slice(3, 5), st::slice(0, 3)), 1e-12, "yx");
  require_close(hyy, hz.ix(st::slice(3, 5), st::slice(3, 5)), 1e-12, "yy");
  // Against finite differences of the (AD) gradient.
  require_close(hz, fd_jacobian([&](const st::Tensor& t) { return st::grad(g, t); }, z), 1e-6,
                "fd");
  // One argument: the closure's Hessian; several in the order given.
  require_close(st::hessian(f, st::argnums<1>, x, y), hyy, 1e-12, "argnums<1>");
  require_close(st::hessian([&](const auto& v) { return f(x, v); }, y), hyy, 1e-12, "closure");
  auto [h1, h0] = st::hessian(f, st::argnums<1, 0>)(x, y);
  require_close(std::get<0>(h1), hyy, 1e-12);
  require_close(std::get<1>(h1), hyx, 1e-12);
  require_close(std::get<0>(h0), hxy, 1e-12);
  require_close(std::get<1>(h0), hxx, 1e-12);
  SECTION("a tree argument: H[i][j] of shape x_i ++ x_j") {
    const std::vector<st::Tensor> v{x, y};
    auto fv = [&](const auto& t) { return f(t[0], t[1]); };
    const std::vector<std::vector<st::Tensor>> hv = st::hessian(fv, v);
    require_close(hv[0][0], hxx, 1e-12);
    require_close(hv[0][1], hxy, 1e-12);
    require_close(hv[1][0], hyx, 1e-12);
    require_close(hv[1][1], hyy, 1e-12);
  }
}

TEST_CASE("grad and value_and_grad with argnums", "[ad]") {
  auto f = [](const auto& x, const auto& y, const auto& z) {
    return st::sum(st::sin(x) * y) + st::sum(z * z * x);
  };
  const st::Tensor x = normal({3}, 41), y = normal({3}, 42), z = normal({3}, 43);
  auto [gx, gy, gz] = st::grad(f, x, y, z);
  auto [ax, az] = st::grad(f, st::argnums<0, 2>, x, y, z);
  require_close(ax, gx, 1e-12);
  require_close(az, gz, 1e-12);
  const st::Tensor only_y = st::grad(f, st::argnums<1>, x, y, z);
  require_close(only_y, gy, 1e-12);
  require_close(gz, fd_jacobian([&](const st::Tensor& t) { return f(x, y, t); }, z), 1e-6);
  auto [v, g] = st::value_and_grad(f, st::argnums<2>)(x, y, z);
  CHECK(v.item<double>() == Approx(f(x, y, z).item<double>()).epsilon(1e-12));
  require_close(g, gz, 1e-12);
  auto [gz2, gx2] = st::grad(f, st::argnums<2, 0>)(x, y, z);
  require_close(gz2, gz, 1e-12);
  require_close(gx2, gx, 1e-12);
}

TEST_CASE("zero-size arguments and outputs with several arguments", "[ad]") {
  const st::Tensor x = normal({3}, 51), e = st::zeros({0}, st::f64);
  auto f = [](const auto& u, const auto& v) { return st::sin(u) + st::sum(v); };
  auto [fx, fe] = st::jacfwd(f, x, e);
  auto [rx, re] = st::jacrev(f, x, e);
  CHECK(fe.shape() == st::Shape{3, 0});
  CHECK(re.shape() == st::Shape{3, 0});
  require_close(fx, st::jacfwd([](const auto& u) { return st::sin(u); }, x), 1e-12);
  require_close(rx, fx, 1e-12);
  // Every chosen argument empty.
  const st::Tensor je = st::jacfwd(f, st::argnums<1>, x, e);
  CHECK(je.shape() == st::Shape{3, 0});
  // An empty output.
  auto g = [](const auto& u, const auto& v) { return u.ix(st::slice(0, 0)) * st::sum(v); };
  auto [gx, gy] = st::jacrev(g, x, x);
  CHECK(gx.shape() == st::Shape{0, 3});
  auto [hx, hy] = st::jacfwd(g, x, x);
  CHECK(hy.shape() == st::Shape{0, 3});
}

TEST_CASE("errors of the several-argument transforms", "[ad]") {
  const st::Tensor x = normal({3}, 61);
  const st::Tensor i = st::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  auto f = [](const auto& u, const auto& v) { return u * st::sum(v); };
  SECTION("a chosen integer argument") {
    CHECK_THROWS_AS(st::jacfwd(f, x, i), st::DTypeError);
    CHECK_THROWS_AS(st::jacrev(f, x, i), st::DTypeError);
    CHECK_THROWS_AS(st::jacrev(f, st::argnums<1>, x, i), st::DTypeError);
    CHECK_THROWS_AS(
        st::grad([](const auto& u, const auto& v) { return st::sum(u * v); }, st::argnums<1>, x, i),
        st::DTypeError);
    const std::vector<st::Tensor> tree{x, i};
    CHECK_THROWS_AS(st::jacfwd([](const auto& t) { return t[0]; }, tree), st::DTypeError);
  }
}

TEST_CASE("composition: vmap of jacrev with argnums, jacfwd of several arguments in grad",
          "[ad][vmap]") {
  auto f = make_f();
  const st::Tensor w = normal({2, 3}, 71), b = normal({2}, 72), X = normal({4, 3}, 73);
  SECTION("vmap(jacrev(f, argnums<0>)) over examples of x") {
    const st::Tensor j = st::vmap(st::jacrev(f, st::argnums<0>), {0, st::none, st::none})(X, w, b);
    CHECK(j.shape() == st::Shape{4, 2, 3});
    auto [jw, jb] = st::vmap(st::jacfwd(f, st::argnums<1, 2>), {0, st::none, st::none})(X, w, b);
    CHECK(jw.shape() == st::Shape{4, 2, 2, 3});
    for (int64_t n = 0; n < 4; ++n) {
      const st::Tensor xn = example(X, 0, n);
      require_close(j.ix(n), st::jacrev(f, st::argnums<0>, xn, w, b), 1e-12);
      require_close(j.ix(n), fd_jacobian([&](const st::Tensor& t) { return f(t, w, b); }, xn),
                    1e-6);
      require_close(jw.ix(n), fd_jacobian([&](const st::Tensor& t) { return f(xn, t, b); }, w),
                    1e-6);
      require_close(jb.ix(n), st::jacrev(f, st::argnums<2>, xn, w, b), 1e-12);
    }
  }
  SECTION("grad of a loss built from a multi-argument jacfwd (mixed levels)") {
    const st::Tensor x = example(X, 0, 1);
    // b is a plain tensor among Reverse values: lifted to their level.
    auto loss = [&](const auto& v) {
      auto [jx, jw] = st::jacfwd(f, st::argnums<0, 1>, v, w, b);
      return st::sum(jx * jx) + st::sum(st::sin(jw));
    };
    const st::Tensor g = st::grad(loss, x);
    require_close(g, fd_jacobian([&](const st::Tensor& t) { return loss(t); }, x), 1e-6);
    const st::Tensor gr = st::grad(
        [&](const auto& v) {
          auto [jx, jw] = st::jacrev(f, st::argnums<0, 1>, v, w, b);
          return st::sum(jx * jx) + st::sum(st::sin(jw));
        },
        x);
    require_close(gr, g, 1e-10);
  }
}
