// SPDX-License-Identifier: MIT
// Derivatives of the window primitives, windows and fold: check_grads against f64 finite
// differences to order 3 in every forward/reverse nesting (each wrapped in sin, so that
// the higher derivatives of these linear maps are not trivially zero), on contiguous,
// transposed and sliced inputs; st::vmap against a loop over examples, for a batch axis in
// front of the windowed axes and for one inside them (moved in front by vmap); and the
// sparsity tracer's pattern of each (which input elements an output element reads).
#include <catch2/catch.hpp>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::normal;

TEST_CASE("primitive derivatives: windows and fold", "[ad]") {
  SECTION("windows") {
    const st::Tensor x = normal({2, 5, 6}, 3911);
    check_grads<3>(
        [](const auto& x) {
          return st::sin(st::windows(x, {2, 3}, {2, 1}, {1, 2}));
        },
        {x});
    // Overlapping windows of a transposed input, one axis.
    check_grads<3>([](const auto& x) { return st::sin(st::windows(x, {3})); },
                   {st::transpose(normal({7, 3}, 3912), 0, 1)});
  }
  SECTION("fold") {
    // [2, O 3 x 2, K 2 x 3] over [6, 6] with stride (2, 1), dilation (1, 2): overlaps on axis 2.
    const st::Tensor y = normal({2, 3, 2, 2, 3}, 3913);
    check_grads<3>([](const auto& y) { return st::sin(st::fold(y, {6, 6}, {2, 1}, {1, 2})); }, {y});
    // A sliced input, and positions no window covers (stride 3 > kernel 2).
    const st::Tensor big = normal({4, 6}, 3914);
    check_grads<3>([](const auto& y) { return st::sin(st::fold(y, {6}, {3})); },
                   {big.ix(st::slice(0, st::none, 2), st::slice(1, st::none, 3))});
  }
  SECTION("windows and fold composed, the product of two differentiated values") {
    const st::Tensor x = normal({3, 7}, 3915), y = normal({3, 5, 3}, 3916);
    check_grads<3>(
        [](const auto& x, const auto& y) {
          return st::fold(st::windows(x, {3}) * y, {7}) * st::tanh(x);
        },
        {x, y});
  }
}

TEST_CASE("vmap of windows and fold equals a loop over examples", "[ad][vmap]") {
  const st::Tensor xs = normal({4, 3, 6, 5}, 3917);
  auto f = [](const auto& x) {
    return st::fold(st::windows(x, {2, 3}, {2, 1}) * 2.0, {6, 5}, {2, 1});
  };
  std::vector<st::Tensor> loop;
  for (int64_t i = 0; i < 4; ++i) loop.push_back(f(st::testing::example(xs, 0, i)));
  st::testing::require_close(st::vmap(f)(xs), st::testing::stacked(loop), 1e-14, "axis 0");
  // The batch axis among the windowed axes: vmap moves it in front.
  auto g = [](const auto& x) { return st::sin(st::windows(x, {3}, {2})); };
  const st::Tensor ys = normal({6, 4, 7}, 3918);
  std::vector<st::Tensor> loop3;
  for (int64_t i = 0; i < 4; ++i) loop3.push_back(g(st::testing::example(ys, 1, i)));
  st::testing::require_close(st::vmap(g, 1)(ys), st::testing::stacked(loop3), 1e-14, "axis 1");
  // Per-example gradients through both primitives.
  auto loss = [](const auto& w, const auto& x) {
    return st::sum(st::fold(st::windows(x, {3}) * w, {8}) * x);
  };
  const st::Tensor w = normal({6, 3}, 3919), x8 = normal({5, 8}, 3920);
  const auto [per_w, per_x] = st::vmap(st::grad(loss), {st::none, 0})(w, x8);
  std::vector<st::Tensor> gw, gx;
  for (int64_t i = 0; i < 5; ++i) {
    const auto [a, b] = st::grad(loss)(w, st::testing::example(x8, 0, i));
    gw.push_back(a);
    gx.push_back(b);
  }
  st::testing::require_close(per_w, st::testing::stacked(gw), 1e-13, "per-example gradients");
  st::testing::require_close(per_x, st::testing::stacked(gx), 1e-13, "input gradients");
  // An example of too few axes is the raw primitive's error, on the example's shape.
  CHECK_THROWS_AS(st::vmap([](const auto& x) {
                    return st::windows(x, {2, 2});
                  })(normal({3, 4}, 1)),
                  st::ShapeError);
}

TEST_CASE("the sparsity patterns of windows and fold", "[ad][sparse]") {
  // Output element (o, k) of windows reads x[o s + k d]; fold's output p sums the windows at p.
  auto f = [](const auto& x) { return st::windows(x, {2}, {2}); };
  const st::Tensor pw = st::jacobian_sparsity(f, st::zeros({5}, st::f64)).to_dense();
  // windows of [5] with kernel 2, stride 2: [[x0, x1], [x2, x3]] -> rows 0..3 read 0, 1, 2, 3.
  const std::vector<double> want{1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0};
  CHECK(pw.to(st::f64).to_vector<double>() == want);
  // [3, 2] -> [4] (the sparse derivatives take a 1-D x, so y comes flat).
  auto g = [](const auto& y) { return st::fold(st::reshape(y, {3, 2}), {4}); };
  const st::Tensor pf = st::jacobian_sparsity(g, st::zeros({6}, st::f64)).to_dense();
  // out0 = y00; out1 = y01 + y10; out2 = y11 + y20; out3 = y21.
  const std::vector<double> wantf{1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0,
                                  0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1};
  CHECK(pf.to(st::f64).to_vector<double>() == wantf);
}
