// SPDX-License-Identifier: MIT
// The batching rule of every primitive (ad/batched.hpp), against its
// definition: a batched op is the op applied to each example on its own.
// Each case draws random f64 operands from fixed seeds, some batched (a
// leading axis of B examples) and some not, runs the primitive once on
// Batched<Tensor> values, and compares example i of the result with the
// plain primitive on example i of every batched operand. Also: the batch
// axis never leaks into shape(), the errors, and jacfwd's one batched pass on
// a function of every primitive, and jacrev's, against one unbatched jvp per
// input element and one vjp per output element.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <strata.hpp>
#include <vector>

namespace st = strata;
using B = st::Batched<st::Tensor>;
using PB = st::Prims<B>;
using PT = st::Prims<st::Tensor>;

namespace {

constexpr int64_t kBatch = 3;

/// An operand: random values, batched ([kBatch, ...shape]) or not.
struct Arg {
  st::Tensor value;
  bool batched;
  B wrap() const { return B(value, batched); }
  st::Tensor example(int64_t i) const { return batched ? value.ix(i) : value; }
};

Arg batched(const st::Shape& shape, uint64_t seed) {
  st::Shape s{kBatch};
  for (int64_t d : shape) s.push_back(d);
  return {st::randn(s, seed, st::f64), true};
}
Arg unbatched(const st::Shape& shape, uint64_t seed) {
  return {st::randn(shape, seed, st::f64), false};
}

/// Checks a batched op against the per-example loop; `batched_op` takes
/// Batched values, `plain_op` the corresponding plain examples.
template <class BatchedOp, class PlainOp>
void check_rule(const std::vector<Arg>& args, BatchedOp batched_op, PlainOp plain_op) {
  std::vector<B> bs;
  for (const Arg& a : args) bs.push_back(a.wrap());
  const B out = batched_op(bs);
  REQUIRE(out.batched());
  REQUIRE(out.batch_size() == kBatch);
  for (int64_t i = 0; i < kBatch; ++i) {
    std::vector<st::Tensor> ex;
    for (const Arg& a : args) ex.push_back(a.example(i));
    const st::Tensor want = plain_op(ex);
    const st::Tensor got = out.value().ix(i);
    INFO("example " << i);
    REQUIRE(out.shape() == want.shape());
    REQUIRE(got.shape() == want.shape());
    REQUIRE(got.dtype() == want.dtype());
    const auto g = got.to_vector<double>(), w = want.to_vector<double>();
    for (std::size_t k = 0; k < w.size(); ++k) REQUIRE(g[k] == Approx(w[k]).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("batching rules: elementwise primitives", "[ad][batched]") {
  SECTION("unary") {
    check_rule(
        {batched({2, 3}, 1)}, [](auto& b) { return PB::unary(st::UnaryOp::sin, b[0]); },
        [](auto& t) { return PT::unary(st::UnaryOp::sin, t[0]); });
  }
  SECTION("binary: batched with batched, with unbatched, and unbatched with batched") {
    for (const auto& args : {std::vector<Arg>{batched({2, 3}, 2), batched({2, 3}, 3)},
                             std::vector<Arg>{batched({2, 3}, 4), unbatched({2, 3}, 5)},
                             std::vector<Arg>{unbatched({2, 3}, 6), batched({2, 3}, 7)}}) {
      check_rule(
          args, [](auto& b) { return PB::binary(st::BinaryOp::sub, b[0], b[1]); },
          [](auto& t) { return PT::binary(st::BinaryOp::sub, t[0], t[1]); });
    }
  }
  SECTION("where with a plain condition") {
    const st::Tensor cond = st::randn({2, 3}, 8, st::f64) > 0.0;
    check_rule(
        {unbatched({2, 3}, 9), batched({2, 3}, 10)},
        [&](auto& b) { return PB::where(cond, b[0], b[1]); },
        [&](auto& t) { return PT::where(cond, t[0], t[1]); });
  }
  SECTION("cast") {
    check_rule(
        {batched({4}, 11)}, [](auto& b) { return PB::cast(b[0], st::f32); },
        [](auto& t) { return PT::cast(t[0], st::f32); });
  }
}

TEST_CASE("batching rules: reductions over per-example axes", "[ad][batched]") {
  for (const bool keep : {false, true}) {
    for (const st::Shape& axes : {st::Shape{0}, st::Shape{-1}, st::Shape{0, 2}, st::Shape{}}) {
      INFO("keepdims " << keep << ", axes " << axes);
      check_rule(
          {batched({2, 3, 4}, 12)}, [&](auto& b) { return PB::sum(b[0], axes, keep); },
          [&](auto& t) { return PT::sum(t[0], axes, keep); });
      check_rule(
          {batched({2, 3, 4}, 13)}, [&](auto& b) { return PB::max(b[0], axes, keep); },
          [&](auto& t) { return PT::max(t[0], axes, keep); });
    }
  }
}

TEST_CASE("batching rules: movement primitives", "[ad][batched]") {
  SECTION("permute") {
    check_rule(
        {batched({2, 3, 4}, 14)},
        [](auto& b) {
          return PB::permute(b[0], {2, -3, 1});
        },
        [](auto& t) {
          return PT::permute(t[0], {2, 0, 1});
        });
  }
  SECTION("expand, with new leading axes") {
    check_rule(
        {batched({3, 1}, 15)},
        [](auto& b) {
          return PB::expand(b[0], {2, 3, 4});
        },
        [](auto& t) {
          return PT::expand(t[0], {2, 3, 4});
        });
  }
  SECTION("reshape, with -1") {
    check_rule(
        {batched({2, 6}, 16)},
        [](auto& b) {
          return PB::reshape(b[0], {3, -1, 2});
        },
        [](auto& t) {
          return PT::reshape(t[0], {3, -1, 2});
        });
  }
  SECTION("slice, negative axis and step") {
    check_rule(
        {batched({4, 5}, 17)}, [](auto& b) { return PB::slice(b[0], -1, 4, 0, -2); },
        [](auto& t) { return PT::slice(t[0], 1, 4, 0, -2); });
  }
  SECTION("pad") {
    const st::Pads pads{{1, 0}, {0, 2}};
    check_rule(
        {batched({2, 3}, 18)}, [&](auto& b) { return PB::pad(b[0], pads); },
        [&](auto& t) { return PT::pad(t[0], pads); });
  }
  SECTION("concat of batched and unbatched values") {
    check_rule(
        {batched({2, 3}, 19), unbatched({2, 1}, 20), batched({2, 2}, 21)},
        [](auto& b) { return PB::concat(b, -1); }, [](auto& t) { return PT::concat(t, 1); });
  }
}

TEST_CASE("batching rules: matmul, every way the batch axis can sit", "[ad][batched]") {
  auto bm = [](auto& b) { return PB::matmul(b[0], b[1]); };
  auto pm = [](auto& t) { return PT::matmul(t[0], t[1]); };
  SECTION("batched a, unbatched matrix b (folded into a's rows)") {
    check_rule({batched({4, 5}, 22), unbatched({5, 2}, 23)}, bm, pm);
    check_rule({batched({2, 4, 5}, 24), unbatched({5, 2}, 25)}, bm, pm);
  }
  SECTION("unbatched matrix a, batched b (folded into b's columns)") {
    check_rule({unbatched({4, 5}, 26), batched({5, 2}, 27)}, bm, pm);
    check_rule({unbatched({4, 5}, 28), batched({5, 1}, 29)}, bm, pm);
    check_rule({unbatched({4, 5}, 30), batched({2, 5, 3}, 31)}, bm, pm);
    // Matrix-vector products: one product with a^T, rows in the batch's order.
    check_rule({unbatched({4, 5}, 60), batched({2, 5, 1}, 61)}, bm, pm);
    check_rule({unbatched({1, 5}, 62), batched({5, 1}, 63)}, bm, pm);
  }
  SECTION("both batched, ranks differing") {
    check_rule({batched({4, 5}, 32), batched({5, 2}, 33)}, bm, pm);
    check_rule({batched({4, 5}, 34), batched({2, 5, 3}, 35)}, bm, pm);
  }
  SECTION("empty operands (no inner dim, no rows)") {
    check_rule({batched({4, 0}, 53), unbatched({0, 2}, 54)}, bm, pm);
    check_rule({unbatched({4, 0}, 55), batched({0, 2}, 56)}, bm, pm);
    check_rule({unbatched({0, 3}, 57), batched({3, 2}, 58)}, bm, pm);
  }
  SECTION("an unbatched operand with batch dims of its own") {
    check_rule({unbatched({2, 4, 5}, 36), batched({5, 3}, 37)}, bm, pm);
    check_rule({batched({4, 5}, 38), unbatched({2, 5, 3}, 39)}, bm, pm);
  }
}

TEST_CASE("batching rules: a product with the identity basis is the other operand, exactly",
          "[ad][batched]") {
  const int64_t k = 5, m = 4;
  const st::Tensor eye = st::eye(k, st::f64);
  // W with an infinite entry: W @ I through a GEMM would put NaNs (inf * 0) in its row.
  std::vector<double> w = st::randn({m, k}, 64, st::f64).to_vector<double>();
  w[7] = std::numeric_limits<double>::infinity();
  const st::Tensor W = st::from_vector(w, {m, k});
  // The basis of a vector x: example j is e_j; W @ x sees it reshaped to [k, 1].
  const B basis = B::identity(eye);
  REQUIRE(basis.is_identity());
  const B column = PB::reshape(basis, {k, 1});
  CHECK(column.is_identity());  // reshape keeps each example's elements in order
  CHECK_FALSE(PB::permute(PB::reshape(basis, {1, k}), {1, 0}).is_identity());
  CHECK_FALSE((basis * 2.0).is_identity());
  const B wx = PB::matmul(B(W), column);
  REQUIRE(wx.batched());
  REQUIRE(wx.shape() == st::Shape{m, 1});
  for (int64_t j = 0; j < k; ++j) {
    const auto got = wx.value().ix(j).to_vector<double>();
    for (int64_t i = 0; i < m; ++i) CHECK(got[std::size_t(i)] == w[std::size_t(i * k + j)]);
  }
  // A row vector x^T: e_j^T @ W2 is row j of W2.
  const st::Tensor W2 = st::randn({k, 3}, 65, st::f64);
  const B xw = PB::matmul(PB::reshape(basis, {1, k}), B(W2));
  REQUIRE(xw.shape() == st::Shape{1, 3});
  for (int64_t j = 0; j < k; ++j) {
    CHECK(xw.value().ix(j).to_vector<double>() == W2.ix(j).to_vector<double>());
  }
  // jacfwd seeds its tangents with the basis, jacrev its cotangents: the Jacobian of
  // x -> W x is W itself, infinite entry included, and NaN-free.
  const st::Tensor x = st::randn({k}, 66, st::f64);
  auto f = [&W](const auto& v) { return st::matmul(W, v); };
  CHECK(st::jacfwd(f, x).to_vector<double>() == w);
  CHECK(st::jacrev(f, x).to_vector<double>() == w);
  // With two arguments each leaf takes some of the basis vectors: the general path, the
  // same values where W is finite (the row of the infinite entry is GEMM arithmetic).
  auto g = [&W](const auto& a, const auto& b) { return st::matmul(W, a) + b; };
  const auto [ja, jb] = st::jacfwd(g, x, st::randn({m}, 67, st::f64));
  // Row 1 of both blocks is NaN: b's basis vectors give a zero tangent for a, and
  // inf * 0 in W @ 0 is NaN, as in PyTorch and JAX.
  const auto ga = ja.to_vector<double>();
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i / std::size_t(k) != 1) CHECK(ga[i] == w[i]);
  }
  const auto gb = jb.to_vector<double>();
  const auto id = st::eye(m, st::f64).to_vector<double>();
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (i / std::size_t(m) == 1) {
      CHECK(std::isnan(gb[i]));
    } else {
      CHECK(gb[i] == id[i]);
    }
  }
}

TEST_CASE("batching rules: indexing primitives", "[ad][batched]") {
  const st::Tensor idx = st::from_vector(std::vector<int64_t>{2, 0, 2, -1}, {4});
  SECTION("index_select") {
    check_rule(
        {batched({2, 3}, 40)}, [&](auto& b) { return PB::index_select(b[0], -1, idx); },
        [&](auto& t) { return PT::index_select(t[0], 1, idx); });
  }
  SECTION("index_add into an unbatched base from a batched source, and both batched") {
    for (const auto& args : {std::vector<Arg>{unbatched({3, 2}, 41), batched({4, 2}, 42)},
                             std::vector<Arg>{batched({3, 2}, 43), batched({4, 2}, 44)},
                             std::vector<Arg>{batched({3, 2}, 45), unbatched({4, 2}, 46)}}) {
      check_rule(
          args, [&](auto& b) { return PB::index_add(b[0], 0, idx, b[1]); },
          [&](auto& t) { return PT::index_add(t[0], 0, idx, t[1]); });
    }
  }
}

TEST_CASE("batched values: shapes, constants and errors", "[ad][batched]") {
  const Arg x = batched({2, 3}, 47);
  const B bx = x.wrap();
  CHECK(bx.shape() == st::Shape{2, 3});
  CHECK(bx.value().shape() == st::Shape{kBatch, 2, 3});
  // A plain tensor mixes in as an unbatched constant, through the composite ops.
  const st::Tensor c = st::randn({3}, 48, st::f64);
  const B y = bx * c + 1.0;
  CHECK(y.batched());
  CHECK(y.shape() == st::Shape{2, 3});
  CHECK_FALSE((B(c) * 2.0).batched());
  // An unbatched value has its plain value; a batched one has none.
  CHECK(st::plain(B(c)).shape() == st::Shape{3});
  CHECK_THROWS_AS(st::plain(bx), st::ValueError);
  // Batch sizes must agree.
  const B other(st::randn({kBatch + 1, 2, 3}, 49, st::f64), true);
  CHECK_THROWS_AS(PB::binary(st::BinaryOp::add, bx, other), st::ShapeError);
  // Per-example axes are validated against the example's rank.
  CHECK_THROWS_AS(PB::sum(bx, {2}, false), st::IndexError);
  CHECK_THROWS_AS(PB::permute(bx, {0, 1, 2}), st::ShapeError);
  CHECK_THROWS_AS(PB::matmul(bx, B(st::randn({4, 2}, 50, st::f64))), st::ShapeError);
  // ... and the message names the per-example shapes, not the physical ones.
  CHECK_THROWS_WITH(PB::matmul(bx, B(st::randn({4, 2}, 59, st::f64))),
                    Catch::Contains("[2, 3] and [4, 2]") && Catch::Contains("inner dims 3 vs 4"));
}

TEST_CASE("jacfwd and jacrev (one batched pass each) equal per-basis-vector jvps and vjps",
          "[ad]") {
  const st::Tensor w = st::randn({3, 4}, 51, st::f64);
  const st::Tensor idx = st::from_vector(std::vector<int64_t>{1, 0, 1}, {3});
  auto f = [&](const auto& x) {            // x: [4, 2], a function of every primitive
    auto h = st::tanh(st::matmul(w, x));   // [3, 2]
    auto g = h.oix(idx) * st::exp(h) + h;  // [3, 2]
    auto p = st::pad(st::transpose(g, 0, 1), {{0, 1}, {1, 0}});  // [3, 4]
    auto m = st::where(p > 0.0, p, p * p) + st::max(p, {1}, true);
    auto r = st::concat(std::vector{st::sum(m, {0}), st::reshape(x.ix(st::slice(1, 3)), {-1})}, 0);
    return st::sin(r) * st::cast(st::cast(r, st::f32), st::f64);  // [8]
  };
  const st::Tensor x = st::randn({4, 2}, 52, st::f64);
  const st::Tensor jf = st::jacfwd(f, x), jr = st::jacrev(f, x);
  REQUIRE(jf.shape() == st::Shape{8, 4, 2});
  REQUIRE(jr.shape() == st::Shape{8, 4, 2});
  // The reference: one unbatched jvp per input element, one vjp per output element.
  std::vector<double> by_jvp(64), by_vjp(64);
  auto [y, pullback] = st::vjp(f, x);
  for (int64_t k = 0; k < 8; ++k) {
    std::vector<double> e(8, 0.0), v(8, 0.0);
    e[std::size_t(k)] = 1.0;
    v[std::size_t(k)] = 1.0;
    const auto col = st::jvp(f, x, st::from_vector(v, {4, 2})).second.to_vector<double>();
    const auto row = pullback(st::from_vector(e, {8})).to_vector<double>();
    for (std::size_t i = 0; i < 8; ++i) {
      by_jvp[i * 8 + std::size_t(k)] = col[i];
      by_vjp[std::size_t(k) * 8 + i] = row[i];
    }
  }
  const auto a = jf.to_vector<double>(), b = jr.to_vector<double>();
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i] == Approx(by_jvp[i]).margin(1e-12));
    REQUIRE(b[i] == Approx(by_vjp[i]).margin(1e-12));
  }
}

TEST_CASE("batched transforms nest: four Hessians of a function of every primitive agree", "[ad]") {
  // g: [3, 2] -> [], through matmul, gather, pad, where, max, concat, slice.
  const st::Tensor w = st::randn({2, 3}, 60, st::f64);
  const st::Tensor idx = st::from_vector(std::vector<int64_t>{1, 1}, {2});
  auto g = [&](const auto& x) {
    auto h = st::sin(st::matmul(w, x));                  // [2, 2]
    auto p = st::pad(h.oix(idx) * h, {{1, 0}, {0, 1}});  // [3, 3]
    auto m = st::where(p > 0.0, p * p, st::exp(p)) - st::max(p, {0}, true);
    auto c =
        st::concat(std::vector{st::reshape(m, {-1}), st::reshape(x.ix(st::slice(0, 2)), {-1})}, 0);
    return st::sum(st::tanh(c) * c);
  };
  const st::Tensor x = st::randn({3, 2}, 61, st::f64);
  const st::Tensor h1 = st::hessian(g, x);
  const st::Tensor h2 = st::jacfwd(st::jacfwd(g), x);
  const st::Tensor h3 = st::jacrev(st::jacrev(g), x);
  const st::Tensor h4 = st::jacrev(st::jacfwd(g), x);
  REQUIRE(h1.shape() == st::Shape{3, 2, 3, 2});
  const auto a = h1.to_vector<double>(), b = h2.to_vector<double>(), c = h3.to_vector<double>(),
             d = h4.to_vector<double>();
  // The reference: central differences (f64) of the unbatched gradient.
  const auto x0 = x.to_vector<double>();
  const double eps = 1e-6;
  for (std::size_t j = 0; j < 6; ++j) {
    auto xp = x0, xm = x0;
    xp[j] += eps;
    xm[j] -= eps;
    const auto gp = st::grad(g, st::from_vector(xp, {3, 2})).to_vector<double>();
    const auto gm = st::grad(g, st::from_vector(xm, {3, 2})).to_vector<double>();
    for (std::size_t i = 0; i < 6; ++i) {
      const double fd = (gp[i] - gm[i]) / (2 * eps);
      INFO("H[" << i << ", " << j << "]");
      REQUIRE(a[i * 6 + j] == Approx(fd).margin(1e-6));
      REQUIRE(a[i * 6 + j] == Approx(a[j * 6 + i]).margin(1e-12));  // symmetric
      REQUIRE(b[i * 6 + j] == Approx(a[i * 6 + j]).margin(1e-12));
      REQUIRE(c[i * 6 + j] == Approx(a[i * 6 + j]).margin(1e-12));
      REQUIRE(d[i * 6 + j] == Approx(a[i * 6 + j]).margin(1e-12));
    }
  }
}

TEST_CASE("jacfwd and jacrev of functions that ignore their input or have no elements", "[ad]") {
  const st::Tensor x = st::randn({2, 3}, 53, st::f64);
  const st::Tensor j = st::jacfwd([](const auto& x) { return st::sum(x) * 0.0 + 1.0; }, x);
  REQUIRE(j.shape() == st::Shape{2, 3});
  const st::Tensor k = st::jacfwd([](const auto&) { return st::ones({4}, st::f64); }, x);
  REQUIRE(k.shape() == st::Shape{4, 2, 3});
  for (double v : k.to_vector<double>()) CHECK(v == 0.0);
  const st::Tensor e =
      st::jacfwd([](const auto& x) { return x * 2.0; }, st::zeros({0, 2}, st::f64));
  REQUIRE(e.shape() == st::Shape{0, 2, 0, 2});
}
