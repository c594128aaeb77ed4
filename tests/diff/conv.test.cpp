// SPDX-License-Identifier: MIT
// st::windows, st::fold, st::conv, st::conv_transpose and the poolings on plain tensors:
// conv2d against a direct loop (the definition, with no windows or matmul), the options'
// spellings (one entry for every axis, none for the default), f32 and integer inputs, and
// every bad input, whose message names the op, the shapes and the fix.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <strata.hpp>

#include "support/message_of.hpp"

namespace st = strata;
using Catch::Contains;
using st::testing::message_of;

namespace {

/// conv2d by its definition: out[n, o, i, j] = sum over c, a, b of
/// x[n, g c_in + c, i s - p + a d, j s - p + b d] w[o, c, a, b] (zero outside x).
std::vector<double> conv_direct(const st::Tensor& x, const st::Tensor& w, int64_t s, int64_t p,
                                int64_t d, int64_t groups, st::Shape& out_shape) {
  const auto xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  const int64_t co = w.shape()[0], ci = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t oh = (h + 2 * p - d * (kh - 1) - 1) / s + 1,
                ow = (wd + 2 * p - d * (kw - 1) - 1) / s + 1;
  out_shape = {n, co, oh, ow};
  std::vector<double> out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < co; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t g = o / (co / groups);
          double acc = 0;
          for (int64_t q = 0; q < ci; ++q)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t r = i * s - p + a * d, t = j * s - p + e * d;
                if (r < 0 || r >= h || t < 0 || t >= wd) continue;
                acc += xv[std::size_t(((b * c + g * ci + q) * h + r) * wd + t)] *
                       wv[std::size_t(((o * ci + q) * kh + a) * kw + e)];
              }
          out.push_back(acc);
        }
  (void)c;
  return out;
}

}  // namespace

TEST_CASE("conv2d equals its definition", "[diff][conv]") {
  const st::Tensor x = st::randn({2, 4, 7, 6}, 3961, st::f64);
  for (const int64_t groups : {1, 2, 4}) {
    const st::Tensor w = st::randn({4, 4 / groups, 3, 2}, 3962, st::f64);
    for (const auto& [s, p, d] : {std::tuple{1, 0, 1}, std::tuple{2, 1, 1}, std::tuple{3, 2, 2}}) {
      st::Shape shape;
      const std::vector<double> want = conv_direct(x, w, s, p, d, groups, shape);
      const st::Tensor got =
          st::conv(x, w, {.stride = {s}, .padding = {p}, .dilation = {d}, .groups = groups});
      INFO("groups " << groups << " stride " << s << " padding " << p << " dilation " << d);
      REQUIRE(got.shape() == shape);
      const auto g = got.to_vector<double>();
      for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(want[i]).margin(1e-12));
    }
  }
  // f32 and integer inputs (dtypes promote; integers stay integers, exactly).
  const st::Tensor xi = st::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {1, 1, 6});
  const st::Tensor wi = st::from_vector(std::vector<int64_t>{1, -1}, {1, 1, 2});
  CHECK(st::conv(xi, wi).to_vector<int64_t>() == std::vector<int64_t>{-1, -1, -1, -1, -1});
  CHECK(st::conv(xi, wi.to(st::f32)).dtype() == st::f32);
}

TEST_CASE("windows and fold on plain tensors", "[diff][conv]") {
  const st::Tensor x = st::arange(0, 10, 1, st::f64).reshape({2, 5});
  const st::Tensor w = st::windows(x, {2}, {2});  // [2, 2, 2]
  CHECK(w.shape() == st::Shape{2, 2, 2});
  CHECK(w.to_vector<double>() == std::vector<double>{0, 1, 2, 3, 5, 6, 7, 8});
  // fold adds the overlaps: windows of 3 at stride 1 over 5 cover the middle three times.
  const st::Tensor ones = st::ones({5}, st::f64);
  CHECK(st::fold(st::windows(ones, {3}), {5}).to_vector<double>() ==
        std::vector<double>{1, 2, 3, 2, 1});
  // One entry applies to every axis.
  CHECK(st::windows(st::ones({4, 6}), {2, 3}, {2}).shape() == st::Shape{2, 2, 2, 3});
  CHECK(st::fold(st::ones({2, 2, 2, 3}), {4, 6}, {2}).shape() == st::Shape{4, 6});
  CHECK_THROWS_AS(st::windows(x, {2}, {1, 1}), st::ShapeError);
  CHECK_THAT(message_of<st::ShapeError>([&] { (void)st::fold(x, {2, 2}); }), Contains("fold"));
}

TEST_CASE("conv, conv_transpose and the pools: bad input names the op, the shapes and the fix",
          "[diff][conv]") {
  const st::Tensor x = st::zeros({2, 4, 5, 5}), w = st::zeros({6, 2, 3, 3});
  const auto big = message_of<st::ShapeError>([&] { (void)st::conv(x, st::zeros({6, 4, 7, 3})); });
  CHECK_THAT(big, Contains("conv") && Contains("[2, 4, 5, 5]") && Contains("more padding"));
  CHECK_THAT(message_of<st::ShapeError>([&] { (void)st::conv(x, w); }),
             Contains("4 channels") && Contains("groups = 1"));
  CHECK(st::conv(x, w, {.groups = 2}).shape() == st::Shape{2, 6, 3, 3});
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)st::conv(x, st::zeros({6, 3, 3}));
             }),
             Contains("rank k + 2"));
  CHECK_THAT(
      message_of<st::ValueError>([&] { (void)st::conv(x, w, {.stride = {0}, .groups = 2}); }),
      Contains("stride"));
  CHECK_THROWS_AS(st::conv(x, w, {.padding = {-1}, .groups = 2}), st::ValueError);
  CHECK_THROWS_AS(st::conv(x, w, {.groups = 0}), st::ValueError);
  CHECK_THROWS_AS(st::conv(x, w, {.groups = 3}), st::ShapeError);
  CHECK_THROWS_AS(st::conv(x, w, {.stride = {1, 1, 1}, .groups = 2}), st::ShapeError);
  CHECK_THROWS_AS(st::conv(x, w, {.groups = 2, .output_padding = {1}}), st::ValueError);
  CHECK_THAT(
      message_of<st::ShapeError>([&] { (void)st::conv(x, w, st::zeros({5}), {.groups = 2}); }),
      Contains("bias of shape [5]"));
  // conv_transpose: the weight is [C_in, C_out / groups, *K].
  const st::Tensor wt = st::zeros({4, 3, 3, 3});
  CHECK(st::conv_transpose(x, wt, {.stride = {2}, .padding = {1}, .output_padding = {1}}).shape() ==
        st::Shape{2, 3, 10, 10});
  CHECK_THAT(message_of<st::ValueError>(
                 [&] { (void)st::conv_transpose(x, wt, {.stride = {2}, .output_padding = {2}}); }),
             Contains("output_padding") && Contains("smaller than the stride"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)st::conv_transpose(st::zeros({1, 4, 1, 1}), wt, {.padding = {2}});
             }),
             Contains("use less padding"));
  CHECK_THROWS_AS(st::conv_transpose(x, st::zeros({3, 3, 3, 3})), st::ShapeError);
  // Pools.
  CHECK_THAT(message_of<st::ValueError>([&] {
               (void)st::max_pool(x, {2, 2}, {.padding = {2}});
             }),
             Contains("half the kernel"));
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)st::max_pool(x, {6, 2});
             }),
             Contains("max_pool") && Contains("output size"));
  CHECK_THROWS_AS(st::max_pool(st::zeros({5, 5}), {2, 2}), st::ShapeError);
  CHECK_THROWS_AS(st::avg_pool(x, {2, 2}, {.dilation = {2}}), st::ValueError);
  CHECK_THROWS_AS(st::avg_pool(x, {2, 2}, {.divisor_override = 0}), st::ValueError);
  CHECK_THROWS_AS(st::adaptive_avg_pool(x, {0, 2}), st::ValueError);
  CHECK_THROWS_AS(st::adaptive_avg_pool(st::zeros({4}), {2}), st::ShapeError);
  // Output sizes as PyTorch's: floor, ceil_mode, and the last window starting inside.
  CHECK(st::max_pool(x, {2, 2}).shape() == st::Shape{2, 4, 2, 2});
  CHECK(st::max_pool(x, {2, 2}, {.ceil_mode = true}).shape() == st::Shape{2, 4, 3, 3});
  CHECK(st::avg_pool(st::zeros({1, 1, 6}), {2}, {.stride = {4}, .ceil_mode = true}).shape() ==
        st::Shape{1, 1, 2});
  CHECK(st::avg_pool(st::zeros({1, 1, 5}), {2}, {.stride = {4}, .padding = {1}, .ceil_mode = true})
            .shape() == st::Shape{1, 1, 2});
}
