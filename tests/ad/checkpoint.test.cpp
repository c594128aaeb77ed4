// SPDX-License-Identifier: MIT
// st::checkpoint (ad/custom.hpp): the same values and derivatives as the
// function itself, bit for bit, under every transform; under reverse mode the
// tape keeps only the checkpointed function's inputs, and the memory a deep
// network's gradient needs falls accordingly.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/device.hpp"
#include "support/vmap_ref.hpp"

namespace st = strata;
using st::testing::example;
using st::testing::normal;
using st::testing::require_close;

namespace {

std::vector<double> f64_values(const st::Tensor& t) { return t.to(st::f64).to_vector<double>(); }

// A tanh network: layers [from, to) of the weights ws.
struct Net {
  std::vector<st::Tensor> ws;
  auto layers(int64_t from, int64_t to) const {
    return [this, from, to](const auto& h0) {
      auto h = h0;
      for (int64_t l = from; l < to; ++l) h = st::tanh(st::matmul(h, ws[std::size_t(l)]));
      return h;
    };
  }
  // The whole network with blocks of `block` layers checkpointed (0: none).
  auto loss(int64_t block) const {
    return [this, block](const auto& h0) {
      const int64_t n = int64_t(ws.size());
      if (block == 0) return st::sum(layers(0, n)(h0));
      auto h = h0;
      for (int64_t b = 0; b < n; b += block)
        h = st::checkpoint(layers(b, std::min(n, b + block)))(h);
      return st::sum(h);
    };
  }
};

// Layers [from, to) checkpointed recursively: four checkpointed quarters, each in turn
// four checkpointed quarters, down to at most four plain layers (64 layers: three levels).
struct Nested {
  const Net* net;
  int64_t from, to;
  template <class H>
  H operator()(const H& h0) const {
    if (to - from <= 4) return net->layers(from, to)(h0);
    H h = h0;
    const int64_t step = (to - from) / 4;
    for (int64_t b = from; b < to; b += step) h = st::checkpoint(Nested{net, b, b + step})(h);
    return h;
  }
};

Net make_net(int64_t layers, int64_t width, st::DType dtype) {
  Net net;
  for (int64_t l = 0; l < layers; ++l) {
    net.ws.push_back(st::randn({width, width}, 500 + uint64_t(l), dtype) *
                     (1.0 / std::sqrt(double(width))));
  }
  return net;
}

// The most bytes in use while `run` runs, beyond those in use before it.
template <class Run>
std::size_t peak_bytes(Run run) {
  st::CachingAllocator& a = st::testing::test_allocator();
  const std::size_t before = a.stats().bytes_in_use;
  a.reset_peak();
  run();
  return a.stats().peak_bytes_in_use - before;
}

}  // namespace

TEST_CASE("checkpoint: the same derivatives, bit for bit, under every transform",
          "[ad][checkpoint]") {
  const Net net = make_net(6, 5, st::f64);
  const st::Tensor x = normal({3, 5}, 41);
  const auto plain = net.loss(0);
  for (const int64_t block : {1, 2, 4}) {
    INFO("blocks of " << block);
    const auto ckpt = net.loss(block);
    require_close(ckpt(x), plain(x), 0, "value");
    require_close(st::grad(ckpt, x), st::grad(plain, x), 0, "grad");
    const st::Tensor v = normal({3, 5}, 42);
    require_close(st::jvp(ckpt, x, v).second, st::jvp(plain, x, v).second, 0, "jvp");
    require_close(st::jacrev(ckpt, x), st::jacrev(plain, x), 0, "jacrev");
    require_close(st::jacfwd(ckpt, x), st::jacfwd(plain, x), 0, "jacfwd");
    // Second order: the backward pass of the recomputation is differentiated in turn.
    require_close(st::hessian(ckpt, x), st::hessian(plain, x), 1e-12, "hessian");
    require_close(st::grad([&](const auto& y) { return st::sum(st::grad(ckpt, y) * y); }, x),
                  st::grad([&](const auto& y) { return st::sum(st::grad(plain, y) * y); }, x),
                  1e-12, "grad of grad");
  }
  SECTION("with respect to the checkpointed function's captured weights, as arguments") {
    const st::Tensor w0 = net.ws[0], w1 = net.ws[1];
    auto two = [](const auto& h, const auto& a, const auto& b) {
      return st::tanh(st::matmul(st::tanh(st::matmul(h, a)), b));
    };
    auto plain2 = [&](const auto& h, const auto& a, const auto& b) {
      return st::sum(two(h, a, b));
    };
    auto ckpt2 = [&](const auto& h, const auto& a, const auto& b) {
      return st::sum(st::checkpoint(two)(h, a, b));
    };
    const auto [gx, ga, gb] = st::grad(plain2, x, w0, w1);
    const auto [cx, ca, cb] = st::grad(ckpt2, x, w0, w1);
    require_close(cx, gx, 0, "dx");
    require_close(ca, ga, 0, "dw0");
    require_close(cb, gb, 0, "dw1");
  }
  SECTION("per-example gradients and grad of a vmap") {
    const st::Tensor xs = normal({4, 2, 5}, 43);
    const auto ckpt = net.loss(2);
    const st::Tensor per = st::vmap(st::grad(ckpt))(xs);
    // The same bits as without the checkpoint; the batched products round
    // differently from one example's (FMA GEMM vs GEMV), so the loop is close.
    require_close(per, st::vmap(st::grad(plain))(xs), 0, "vmap(grad)");
    for (int64_t i = 0; i < 4; ++i) {
      require_close(example(per, 0, i), st::grad(plain, example(xs, 0, i)), 1e-13,
                    "vmap(grad) vs grad");
    }
    auto mapped = [&](const auto& v) {
      return st::sum(st::vmap(st::checkpoint(net.layers(0, 3)))(v));
    };
    auto mapped_plain = [&](const auto& v) { return st::sum(st::vmap(net.layers(0, 3))(v)); };
    require_close(st::grad(mapped, xs), st::grad(mapped_plain, xs), 1e-14, "grad(vmap)");
  }
}

TEST_CASE("checkpoint: a deep network's gradient keeps one block at a time", "[ad][checkpoint]") {
  // The network of issue 13 scaled down 4x in width and batch (the bench row
  // checkpoint_tanh_mlp_64x512_b256 measures the full size).
  const Net net = make_net(64, 128, st::f32);
  const st::Tensor x = st::randn({64, 128}, 44);
  st::Tensor g0, g1, g8, gn;
  const std::size_t plain = peak_bytes([&] { g0 = st::grad(net.loss(0), x); });
  const std::size_t per_layer = peak_bytes([&] { g1 = st::grad(net.loss(1), x); });
  const std::size_t blocks = peak_bytes([&] { g8 = st::grad(net.loss(8), x); });
  const std::size_t nested = peak_bytes([&] {
    gn = st::grad([&](const auto& h) { return st::sum(Nested{&net, 0, 64}(h)); }, x);
  });
  INFO("peak bytes: plain " << plain << ", per layer " << per_layer << ", blocks of 8 " << blocks
                            << ", nested 4 x 4 x 4 " << nested);
  CHECK(f64_values(g1) == f64_values(g0));
  CHECK(f64_values(g8) == f64_values(g0));
  CHECK(f64_values(gn) == f64_values(g0));
  // The plain tape keeps one activation per layer (tanh's output, which is the next
  // matmul's input): 64 x 32 KiB. A checkpointed block keeps its input only, and its
  // backward pass recomputes one block: about 8 + 8 activations instead of 64. Nested
  // checkpoints recompute more (each level once more) to keep less.
  const std::size_t activation = 64 * 128 * sizeof(float);
  CHECK(plain >= 64 * activation);
  CHECK(per_layer <= plain + 4 * activation);
  CHECK(double(blocks) <= 0.35 * double(plain));
  // Three levels keep 3 + 3 + 3 activations and the transients of one layer.
  CHECK(double(nested) <= 0.25 * double(plain));
}
