// SPDX-License-Identifier: MIT
// The colourings of ad/sparse/colouring.hpp, checked by brute force (tests/support/
// sparse_checks.hpp): distance-2 colourings of Jacobian columns share no row within a colour,
// star colourings of Hessians leave no two-coloured path on four vertices; the numbers of
// colours on the patterns whose optimum is known (a band of width w: w; an arrowhead with a
// tridiagonal band: at most 4); and the errors of the sparse derivatives on bad input.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/message_of.hpp"
#include "support/sparse_checks.hpp"

namespace st = strata;
using Catch::Matchers::Contains;
using sparse_checks::colours_used;
using sparse_checks::pattern_where;
using sparse_checks::random_symmetric;
using sparse_checks::require_distance2;
using sparse_checks::require_star;
using st::testing::message_of;

namespace {

st::SparsityPattern tridiagonal(int64_t n) {
  return pattern_where(n, n, [](int64_t i, int64_t j) { return i - j <= 1 && j - i <= 1; });
}

/// The arrowhead with a tridiagonal band: the Hessian of the bench row.
st::SparsityPattern arrowhead_pattern(int64_t n) {
  // Row by row (n is up to 10^5: no test of all n^2 positions).
  std::vector<int64_t> crow{0}, col;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i == n - 1 ? 0 : std::max<int64_t>(i - 1, 0); j < n; ++j) {
      if (i == n - 1 || j <= i + 1 || j == n - 1) col.push_back(j);
      if (i < n - 1 && j == i + 1) j = std::max(j, n - 2);  // skip to the last column
    }
    crow.push_back(int64_t(col.size()));
  }
  return st::SparsityPattern(n, n, crow, col);
}

/// The 5-point stencil on a g x g grid (the Bratu problem's Jacobian).
st::SparsityPattern grid(int64_t g) {
  return pattern_where(g * g, g * g, [g](int64_t i, int64_t j) {
    const int64_t ri = i / g, ci = i % g, rj = j / g, cj = j % g;
    return (ri == rj && (ci - cj <= 1 && cj - ci <= 1)) ||
           (ci == cj && (ri - rj == 1 || rj - ri == 1));
  });
}

}  // namespace

TEST_CASE("distance-2 colourings: no row has two columns of one colour", "[ad][sparse]") {
  for (int64_t n : {1, 2, 3, 10, 57}) {
    INFO("tridiagonal n = " << n);
    const st::Colouring c = st::colour_columns(tridiagonal(n));
    require_distance2(tridiagonal(n), c.colour);
    CHECK(c.count == std::min<int64_t>(n, 3));
    CHECK(colours_used(c.colour) == c.count);
  }
  // A band of half-width 2 (5 diagonals) needs 5 colours, a diagonal 1.
  const st::SparsityPattern band =
      pattern_where(30, 30, [](int64_t i, int64_t j) { return i - j <= 2 && j - i <= 2; });
  CHECK(st::colour_columns(band).count == 5);
  CHECK(st::colour_columns(pattern_where(9, 9, [](int64_t i, int64_t j) {
          return i == j;
        })).count == 1);
  // Rectangular and random patterns; and rows (jacrev) through the transpose.
  for (uint64_t seed : {1, 2, 3}) {
    const st::SparsityPattern p = random_symmetric(40, 4, seed);
    const st::SparsityPattern rect = pattern_where(
        25, 40, [&](int64_t i, int64_t j) { return p.contains(i, j) || (i + 3 * j) % 17 == 0; });
    require_distance2(rect, st::colour_columns(rect).colour);
    require_distance2(rect.transposed(), st::colour_rows(rect).colour);
  }
  // A dense row forces one colour per column.
  CHECK(st::colour_columns(pattern_where(3, 12, [](int64_t i, int64_t) { return i == 1; })).count ==
        12);
  require_distance2(grid(7), st::colour_columns(grid(7)).colour);
}

TEST_CASE("star colourings: adjacent vertices differ, no two-coloured path on four vertices",
          "[ad][sparse]") {
  for (int64_t n : {2, 3, 4, 11, 64}) {
    INFO("n = " << n);
    const st::Colouring t = st::star_colouring(tridiagonal(n));
    require_star(tridiagonal(n), t.colour);
    CHECK(t.count == (n <= 3 ? 2 : 3));  // a path on 3 vertices is a star: 2 colours
    const st::Colouring a = st::star_colouring(arrowhead_pattern(n));
    require_star(arrowhead_pattern(n), a.colour);
    CHECK(a.count <= 4);
    CHECK(colours_used(a.colour) == a.count);
  }
  CHECK(st::star_colouring(arrowhead_pattern(100000)).count <= 4);
  for (uint64_t seed : {4, 5, 6, 7}) {
    const st::SparsityPattern p = random_symmetric(60, 5, seed);
    const st::Colouring c = st::star_colouring(p);
    require_star(p, c.colour);
  }
  require_star(grid(9), st::star_colouring(grid(9)).colour);
  // A diagonal Hessian: one colour; an empty one: none.
  CHECK(st::star_colouring(pattern_where(5, 5, [](int64_t i, int64_t j) {
          return i == j;
        })).count == 1);
  CHECK(st::star_colouring(pattern_where(5, 5, [](int64_t, int64_t) { return false; })).count == 0);
  CHECK_THAT(message_of<st::ValueError>([] {
               st::star_colouring(pattern_where(3, 4, [](int64_t, int64_t) { return true; }));
             }),
             Contains("not square and symmetric"));
}

TEST_CASE("the sparse derivatives' colour counts on the bench patterns", "[ad][sparse]") {
  const int64_t n = 1000;
  const st::Tensor x = st::randn({n}, 1, st::f64);
  auto tridiag = [](const auto& v) {
    const auto left = v.ix(st::slice(0, -2)), mid = v.ix(st::slice(1, -1)),
               right = v.ix(st::slice(2, st::none));
    return st::pad(left + mid * mid - right, {{1, 1}}) + v;
  };
  const st::SparsePlan jp = st::sparse_jacfwd_plan(tridiag, x);
  // Tridiagonal inside; the first and last rows are x's alone (the padding depends on nothing).
  CHECK(jp.pattern() == pattern_where(n, n, [n](int64_t i, int64_t j) {
          return i == j || (i > 0 && i < n - 1 && (i - j == 1 || j - i == 1));
        }));
  CHECK(jp.colours() == 3);
  auto arrow = [](const auto& v) {
    const auto u = v.ix(st::slice(0, -1)), w = v.ix(st::slice(1, st::none));
    const auto head = v.ix(st::slice(0, -1)), last = v.ix(st::slice(-1, st::none));
    return st::sum(u * u * w * w) + st::sum(head * head * last) + st::sum(st::cos(v));
  };
  const st::SparsePlan hp = st::sparse_hessian_plan(arrow, x);
  CHECK(hp.pattern() == arrowhead_pattern(n));
  CHECK(hp.colours() <= 4);
  require_star(hp.pattern(), hp.colouring().colour);
}

TEST_CASE("sparse derivatives: bad input is a clear error", "[ad][sparse][errors]") {
  const st::Tensor x = st::randn({5}, 1, st::f64);
  auto f = [](const auto& v) { return st::sum(v * v); };
  // Control flow on a value of the traced input cannot be traced.
  auto branchy = [](const auto& v) {
    if (st::plain(st::sum(v)).template item<double>() > 0) return v * v;
    return v;
  };
  const std::string msg = message_of<st::ValueError>([&] { st::jacobian_sparsity(branchy, x); });
  CHECK_THAT(msg, Contains("sparsity tracer") && Contains("control flow") && Contains("st::where"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::sparse_hessian(branchy, x); }),
             Contains("control flow"));
  // item() of a traced value says it is the tracer's, not a vmap batch.
  auto item_branch = [](const auto& v) { return st::item<double>(st::sum(v)) > 0 ? v : -v; };
  CHECK_THAT(message_of<st::ValueError>([&] { st::jacobian_sparsity(item_branch, x); }),
             Contains("sparsity tracer") && !Contains("vmap"));
  // st::linalg::solve and inv check their pivots on values the tracer does not have: it skips
  // the check (the evaluation passes make it), so a matrix made from x traces; A^-1 is dense.
  auto traced_matrix = [](const auto& v) {
    const auto a = st::reshape(v.ix(st::slice(0, 9)), {3, 3}) + 4.0 * st::eye(3, st::f64);
    return st::concat(
        {st::linalg::solve(a, v.ix(st::slice(9, 12))), st::reshape(st::linalg::inv(a), {9})}, 0);
  };
  const st::Tensor x12 = st::randn({12}, 5, st::f64);
  CHECK(st::jacobian_sparsity(traced_matrix, x12).nnz() == 3 * 12 + 9 * 9);
  const st::Tensor dense = st::jacfwd(traced_matrix)(x12);
  CHECK(st::max(st::abs(st::sparse_jacfwd(traced_matrix, x12).to_dense() - dense)).item<double>() <
        1e-12);
  const st::Tensor a = st::randn({3, 3}, 4, st::f64) + 3.0 * st::eye(3, st::f64);
  CHECK(st::jacobian_sparsity([a](const auto& v) { return st::linalg::solve(a, v); },
                              st::randn({3}, 6, st::f64))
            .nnz() == 9);
  // x must be a 1-D float tensor.
  const std::string shape_msg = message_of<st::ShapeError>([&] {
    st::sparse_hessian(f, st::randn({2, 3}, 2, st::f64));
  });
  CHECK_THAT(shape_msg, Contains("sparse_hessian") && Contains("[2, 3]") && Contains("1-D"));
  CHECK_THAT(message_of<st::ShapeError>([&] { st::jacobian_sparsity(f, st::zeros({}, st::f64)); }),
             Contains("1-D"));
  const st::Tensor xi = st::from_vector(std::vector<int64_t>{1, 2, 3});
  CHECK_THAT(message_of<st::DTypeError>([&] { st::sparse_jacfwd(f, xi); }),
             Contains("sparse_jacfwd") && Contains("i64"));
  CHECK_THAT(message_of<st::DTypeError>([&] { st::hessian_sparsity(f, xi); }), Contains("i64"));
  // A Hessian needs one output element.
  CHECK_THAT(message_of<st::ShapeError>(
                 [&] { st::hessian_sparsity([](const auto& v) { return v * v; }, x); }),
             Contains("hessian_sparsity"));
  // A plan of the wrong kind or size.
  const st::SparsePlan jp = st::sparse_jacfwd_plan([](const auto& v) { return v * v; }, x);
  CHECK_THAT(message_of<st::ValueError>([&] { st::sparse_hessian(f, x, jp); }),
             Contains("sparse_hessian_plan"));
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::sparse_jacfwd([](const auto& v) { return v * v; }, st::randn({6}, 3, st::f64),
                                 jp);
             }),
             Contains("the plan is for 5 inputs"));
  CHECK_THAT(message_of<st::ShapeError>(
                 [&] { st::sparse_jacfwd([](const auto& v) { return st::sum(v); }, x, jp); }),
             Contains("f's output has 1 elements"));
  // A pattern that is not symmetric cannot make a Hessian plan.
  CHECK_THAT(
      message_of<st::ValueError>([&] {
        st::SparsePlan::hessian(pattern_where(2, 2, [](int64_t i, int64_t j) { return i <= j; }));
      }),
      Contains("symmetric"));
}
