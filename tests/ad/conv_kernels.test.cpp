// SPDX-License-Identifier: MIT
// The convolution primitives' accelerated kernels (raw/conv.hpp: oneDNN's direct
// convolutions, f32 on the CPU) against diff/conv.hpp's composites (pad, windows, im2col,
// matmul; themselves checked against PyTorch in conv_torch.test.cpp) computed in f64: the
// forward pass and both gradients on 60 random geometries (1-3 spatial axes, strides,
// padding, dilation, groups, odd sizes, batches cut into uneven pieces); every layout; the
// same bits for any thread count; derivatives through the kernels to third order in forward
// and reverse mode, and under vmap, against f64; jit replay bits; the raw ops' errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <strata.hpp>
#include <vector>

#include "support/same_bits.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;

namespace {

/// A convolution's shapes and options.
struct Case {
  st::Shape x, w;
  st::ConvOptions o;
};

/// Case i of the random geometries drawn from one fixed seed: k spatial axes, groups 1-3,
/// kernel 1-4, stride 1-3, dilation 1-2, padding 0-2 and spatial sizes the kernel fits.
std::vector<Case> random_cases(int count) {
  std::mt19937 rng(20261207);
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i) {
    const int k = 1 + i % 3, g = draw(1, 3);
    Case c;
    c.x = {draw(1, 5), g * draw(1, 3)};
    c.w = {g * draw(1, 3), c.x[1] / g};
    for (int a = 0; a < k; ++a) {
      const int kern = draw(1, k == 3 ? 3 : 4), stride = draw(1, 3), dil = draw(1, 2);
      const int pad = draw(0, 2), extent = dil * (kern - 1) + 1;
      c.x.push_back(std::max(1, extent - 2 * pad + draw(0, k == 3 ? 3 : 6)));
      c.w.push_back(kern);
      c.o.stride.push_back(stride);
      c.o.dilation.push_back(dil);
      c.o.padding.push_back(pad);
    }
    c.o.groups = g;
    cases.push_back(c);
  }
  return cases;
}

/// The tensor cast to f64.
st::Tensor f64(const st::Tensor& t) { return t.to(st::f64); }

/// |got - want| <= tol (1 + max |want|) everywhere, got in f32 and want in f64.
void require_near(const st::Tensor& got, const st::Tensor& want, double tol,
                  const std::string& what) {
  INFO(what << ": got " << got.shape() << ", want " << want.shape());
  REQUIRE(got.shape() == want.shape());
  const double scale = 1 + st::max(st::abs(want)).item<double>();
  const double err = st::max(st::abs(f64(got) - want)).item<double>();
  INFO("max error " << err << ", scale " << scale);
  REQUIRE(err <= tol * scale);
}

/// The kernels exist in this build (oneDNN found): otherwise the f32 path is the composite,
/// which the other suites check, and these tests say so.
bool kernels_here() {
  const bool here =
      st::raw::has_conv_kernels(st::randn({1, 1, 2}, 1).raw(), st::randn({1, 1, 1}, 2).raw());
  if (!here) WARN("no oneDNN in this build: the convolution kernels are not tested");
  return here;
}

}  // namespace

TEST_CASE("conv kernels equal the f64 composite on 60 random geometries", "[ad][conv]") {
  if (!kernels_here()) return;
  int n = 0;
  for (const Case& c : random_cases(60)) {
    INFO("case " << n++ << ": x " << c.x << ", w " << c.w << ", stride " << c.o.stride
                 << ", padding " << c.o.padding << ", dilation " << c.o.dilation << ", groups "
                 << c.o.groups);
    const st::Tensor x = st::randn(c.x, 100 + n), w = st::randn(c.w, 200 + n);
    const st::Tensor y = st::conv(x, w, c.o);
    const st::Tensor y64 =
        st::detail::conv_composite(f64(x), f64(w), st::detail::conv_plan(c.x, c.w, c.o));
    require_near(y, y64, 1e-5, "forward");
    const st::Tensor gy = st::randn(y.shape(), 300 + n);
    const st::ConvGeometry g = st::detail::conv_geometry(c.o, c.x.ndim() - 2);
    // The gradients through the kernels (st::grad's pullbacks) and through the composites.
    auto loss = [&](const auto& a, const auto& b) {
      return st::sum(st::conv(a, b, c.o) * gy.to(a.dtype()));
    };
    const auto [gx, gw] = st::grad(loss, x, w);
    st::ConvOptions ot = c.o;
    ot.output_padding = st::detail::input_grad_output_padding(c.x, y.shape(), c.w, g);
    const st::Tensor gx64 = st::detail::conv_transpose_composite(
        f64(gy), f64(w), st::detail::conv_transpose_plan(y.shape(), c.w, ot));
    const st::Tensor gw64 = st::detail::conv_weight_grad_composite(f64(x), f64(gy), c.w, g);
    require_near(gx, gx64, 1e-5, "input gradient");
    require_near(gw, gw64, 1e-5, "weight gradient");
    // conv_transpose is the input gradient's primitive.
    require_near(st::conv_transpose(gy, w, ot), gx64, 1e-5, "conv_transpose");
  }
}

TEST_CASE("conv kernels cut large batches into pieces whose sums keep their order", "[ad][conv]") {
  if (!kernels_here()) return;
  // 295 KB of input and output per example: 7 examples are three pieces (3, 3 and 1), whose
  // weight gradients are summed in order, and the same bits for 1, 2 and 3 threads.
  const st::Tensor x = st::randn({7, 16, 48, 48}, 401), w = st::randn({16, 16, 3, 3}, 402);
  const st::ConvOptions o{.padding = {1}};
  const st::Tensor gy = st::randn({7, 16, 48, 48}, 403);
  auto run = [&] {
    auto loss = [&](const auto& a, const auto& b) { return st::sum(st::conv(a, b, o) * gy); };
    const auto [gx, gw] = st::grad(loss, x, w);
    return std::vector<st::Tensor>{st::conv(x, w, o), gx, gw};
  };
  const int threads = st::num_threads();
  st::set_num_threads(1);
  const std::vector<st::Tensor> one = run();
  st::set_num_threads(2);
  const std::vector<st::Tensor> two = run();
  st::set_num_threads(3);
  const std::vector<st::Tensor> three = run();
  st::set_num_threads(threads);
  for (std::size_t i = 0; i < one.size(); ++i) {
    INFO("result " << i << " (forward, input gradient, weight gradient)");
    CHECK(st::testing::same_bits(one[i], two[i]));
    CHECK(st::testing::same_bits(one[i], three[i]));
  }
  const st::ConvGeometry g = st::detail::conv_geometry(o, 2);
  require_near(one[2], st::detail::conv_weight_grad_composite(f64(x), f64(gy), w.shape(), g), 1e-5,
               "weight gradient over three pieces");
}

TEST_CASE("conv kernels read transposed, sliced and broadcast operands", "[ad][conv]") {
  if (!kernels_here()) return;
  const st::ConvOptions o{.stride = {2, 1}, .padding = {1}, .groups = 2};
  const st::Tensor x = st::randn({3, 4, 9, 8}, 411), w = st::randn({6, 2, 3, 2}, 412);
  const st::Tensor want = st::conv(x, w, o);
  // The kernels copy their operands contiguous first: the same bits from every layout.
  const st::Tensor xt = st::permute(st::permute(x, {0, 1, 3, 2}) + 0.0f, {0, 1, 3, 2});
  const st::Tensor big = st::randn({3, 4, 18, 8}, 413);
  const st::Tensor xs = st::slice(big, 2, 0, 18, 2);
  CHECK(st::testing::same_bits(st::conv(xt, w, o), want));
  CHECK(st::testing::same_bits(st::conv(xs, w, o), st::conv(xs + 0.0f, w, o)));
  const st::Tensor w1 = st::randn({1, 2, 3, 2}, 414);
  CHECK(st::testing::same_bits(st::conv(x, st::expand(w1, {6, 2, 3, 2}), o),
                               st::conv(x, st::expand(w1, {6, 2, 3, 2}) + 0.0f, o)));
  require_near(
      st::conv(xs, w, o),
      st::detail::conv_composite(f64(xs), f64(w), st::detail::conv_plan(xs.shape(), w.shape(), o)),
      1e-5, "sliced input");
}

TEST_CASE("f32 convolutions differentiate through the kernels to third order", "[ad][conv]") {
  if (!kernels_here()) return;
  const st::ConvOptions o{.stride = {2}, .padding = {1}, .dilation = {1, 2}, .groups = 2};
  const st::Tensor x = st::randn({2, 4, 7, 8}, 421) * 0.5f, w = st::randn({4, 2, 3, 2}, 422) * 0.5f;
  const st::Tensor c = st::randn(st::conv(x, w, o).shape(), 423);
  const st::Tensor v = st::randn(x.shape(), 424), u = st::randn(w.shape(), 425);
  // A scalar function of x and w, its derivatives in f32 (kernels at the bottom of every
  // nesting) and in f64 (composites).
  auto f = [&](const auto& x, const auto& w) {
    return st::sum(st::sin(st::conv(x, w, o)) * c.to(x.dtype()));
  };
  auto each_dtype = [&](st::DType t) {
    const st::Tensor xt = x.to(t), wt = w.to(t), vt = v.to(t), ut = u.to(t);
    // First order: reverse, and forward along (v, u).
    const auto [gx, gw] = st::grad(f, xt, wt);
    const st::Tensor d1 = st::jvp([&](const auto& s) { return f(xt + s * vt, wt + s * ut); },
                                  st::zeros({}, t), st::ones({}, t))
                              .second;
    // Second order: forward over reverse (the x-gradient along (v, u)) and reverse over
    // reverse (the w-gradient of <grad_x f, v>).
    const st::Tensor hv =
        st::jvp(
            [&](const auto& s) { return st::grad(f, st::argnums<0>, xt + s * vt, wt + s * ut); },
            st::zeros({}, t), st::ones({}, t))
            .second;
    const st::Tensor rr = st::grad(
        [&](const auto& w2) { return st::sum(st::grad(f, st::argnums<0>, xt, w2) * vt); }, wt);
    // Third order: the third derivative along (v, u), forward over forward over reverse.
    auto d1_at = [&](const auto& s) {
      const auto [ga, gb] = st::grad(f, xt + s * vt, wt + s * ut);
      return st::sum(ga * vt) + st::sum(gb * ut);
    };
    auto d2_at = [&](const auto& s) { return st::jvp(d1_at, s, st::ones({}, t)).second; };
    const st::Tensor d3 = st::jvp(d2_at, st::zeros({}, t), st::ones({}, t)).second;
    return std::vector<st::Tensor>{gx, gw, d1, hv, rr, d3};
  };
  const std::vector<st::Tensor> got = each_dtype(st::f32), want = each_dtype(st::f64);
  const char* names[] = {
      "grad x", "grad w", "jvp", "forward over reverse", "reverse over reverse", "third order"};
  for (std::size_t i = 0; i < got.size(); ++i) require_near(got[i], want[i], 2e-4, names[i]);
  // The reverse and forward first derivatives agree: <grad, (v, u)> = jvp.
  require_near(st::sum(got[0] * v) + st::sum(got[1] * u), want[2], 2e-4, "<grad, t> = jvp");
}

TEST_CASE("vmap of f32 convolutions through the kernels equals a loop", "[ad][conv][vmap]") {
  if (!kernels_here()) return;
  const st::Tensor xs = st::randn({3, 2, 4, 6, 5}, 431), w = st::randn({4, 2, 3, 2}, 432);
  const st::Tensor ws = st::randn({3, 4, 2, 3, 2}, 433);
  const st::ConvOptions o{.stride = {1, 2}, .padding = {1}, .groups = 2};
  auto f = [&](const auto& w, const auto& x) { return st::conv(x, w, o); };
  auto loss = [&](const auto& w, const auto& x) { return st::sum(st::tanh(st::conv(x, w, o))); };
  std::vector<st::Tensor> shared, mapped, grads;
  for (int64_t i = 0; i < 3; ++i) {
    const st::Tensor x = st::testing::example(xs, 0, i), wi = st::testing::example(ws, 0, i);
    shared.push_back(f64(f(w, x)));
    mapped.push_back(f64(f(wi, x)));
    grads.push_back(
        f64(st::grad(loss, st::argnums<0>)(w, x)));  // the gradient of the shared weight
  }
  // One weight for the batch (folded into the examples), one weight per example (the
  // composite on the batch), and per-example gradients of the shared weight.
  require_near(st::vmap(f, {st::none, 0})(w, xs), st::testing::stacked(shared), 1e-5, "shared");
  require_near(st::vmap(f)(ws, xs), st::testing::stacked(mapped), 1e-5, "mapped weights");
  require_near(st::vmap(st::grad(loss, st::argnums<0>), {st::none, 0})(w, xs),
               st::testing::stacked(grads), 1e-5, "per-example gradients");
}

TEST_CASE("jit replays the conv kernels with eager's bits", "[ad][conv][jit]") {
  if (!kernels_here()) return;
  const st::Tensor x = st::randn({4, 3, 12, 12}, 441), w = st::randn({8, 3, 3, 3}, 442);
  auto loss = [&](const st::Tensor& w) {
    return st::value_and_grad(
        [&](const auto& w) {
          return st::sum(st::relu(st::conv(x, w, {.stride = {2}, .padding = {1}})));
        },
        w);
  };
  const auto eager = loss(w);
  auto jitted = st::jit(loss);
  (void)jitted(w);
  const auto replay = jitted(w);
  CHECK(st::testing::same_bits(replay.first, eager.first));
  CHECK(st::testing::same_bits(replay.second, eager.second));
}

TEST_CASE("raw conv kernels reject operands they cannot run", "[ad][conv][errors]") {
  if (!kernels_here()) return;
  const st::ConvGeometry g{1, {1}, {0}, {1}};
  const st::Tensor x = st::randn({2, 3, 8}, 451), w = st::randn({4, 3, 3}, 452);
  CHECK_THROWS_WITH(st::raw::conv_forward(x.to(st::f64).raw(), w.to(st::f64).raw(), g),
                    Catch::Contains("conv_forward") && Catch::Contains("has_conv_kernels"));
  CHECK_THROWS_AS(st::raw::conv_input_grad(st::randn({2, 4, 5}, 453).raw(), w.raw(), x.shape(), g),
                  st::ShapeError);
  CHECK_THROWS_WITH(
      st::raw::conv_weight_grad(x.raw(), st::randn({2, 4, 6}, 454).raw(), {4, 2, 3}, g),
      Catch::Contains("conv_weight_grad") && Catch::Contains("[4, 2, 3]"));
}
