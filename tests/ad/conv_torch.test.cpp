// SPDX-License-Identifier: MIT
// conv, conv_transpose, max_pool, avg_pool and adaptive_avg_pool against PyTorch 1.13 in
// float64: values and the gradients of sum(out * cot) with respect to every input, on the 92
// random configurations tests/ad/data/conv_torch.py wrote (1-D, 2-D and 3-D; strides,
// paddings, dilations, groups, bias, output_padding, ceil_mode, count_include_pad,
// divisor_override, odd sizes); each input in turn contiguous, transposed and as a strided
// slice (tests/support/torch_cases.hpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/torch_cases.hpp"

namespace st = strata;
using st::testing::require_torch_close;
using st::testing::TorchCase;

namespace {

std::vector<TorchCase> conv_torch_cases(const std::string& op) {
  return st::testing::read_torch_cases(
      (st::testing::tests_dir() / "ad/data/conv_torch.txt").string(), op);
}

/// Runs f (a generic function of the input map) through st::vjp, each input in layout `kind`,
/// and compares the output and every gradient with PyTorch's.
template <class F>
void conv_check_case(const TorchCase& c, const std::vector<std::string>& names, int kind, F f) {
  INFO(c.op << " case at line " << c.line << " of conv_torch.txt, layout " << kind);
  std::map<std::string, st::Tensor> in;
  for (const std::string& n : names) {
    if (c.has(n)) in[n] = st::testing::in_layout(c.at(n), kind);
  }
  auto [y, pullback] = st::vjp(f, in);
  require_torch_close(y, c.at("out"), "out");
  const auto grads = pullback(c.at("cot"));
  for (const auto& [name, g] : grads)
    require_torch_close(g, c.at("g_" + name), "gradient of " + name);
}

/// The case's ConvOptions.
st::ConvOptions conv_options(const TorchCase& c) {
  st::ConvOptions o{.stride = c.shape("stride"),
                    .padding = c.shape("padding"),
                    .dilation = c.shape("dilation"),
                    .groups = c.integer("groups")};
  if (c.params.count("output_padding")) o.output_padding = c.shape("output_padding");
  return o;
}

/// The case's PoolOptions ("default" stride: none given, so the kernel).
st::PoolOptions pool_options(const TorchCase& c) {
  st::PoolOptions o;
  if (c.params.at("stride") != "default") o.stride = c.shape("stride");
  o.padding = c.shape("padding");
  if (c.params.count("dilation")) o.dilation = c.shape("dilation");
  o.ceil_mode = c.flag("ceil_mode");
  if (c.params.count("count_include_pad")) o.count_include_pad = c.flag("count_include_pad");
  if (c.params.count("divisor_override") && c.integer("divisor_override") != 0) {
    o.divisor_override = c.integer("divisor_override");
  }
  return o;
}

}  // namespace

TEST_CASE("conv and conv_transpose match PyTorch float64", "[ad][conv][torch]") {
  int kind = 0, count = 0;
  for (const TorchCase& c : conv_torch_cases("conv")) {
    const st::ConvOptions o = conv_options(c);
    conv_check_case(c, {"x", "w", "b"}, kind++ % 3, [&](const auto& m) {
      return c.flag("bias") ? st::conv(m.at("x"), m.at("w"), m.at("b"), o)
                            : st::conv(m.at("x"), m.at("w"), o);
    });
    ++count;
  }
  for (const TorchCase& c : conv_torch_cases("conv_transpose")) {
    const st::ConvOptions o = conv_options(c);
    conv_check_case(c, {"x", "w", "b"}, kind++ % 3, [&](const auto& m) {
      return c.flag("bias") ? st::conv_transpose(m.at("x"), m.at("w"), m.at("b"), o)
                            : st::conv_transpose(m.at("x"), m.at("w"), o);
    });
    ++count;
  }
  CHECK(count == 60);
}

TEST_CASE("max_pool, avg_pool and adaptive_avg_pool match PyTorch float64", "[ad][conv][torch]") {
  int kind = 0, count = 0;
  for (const TorchCase& c : conv_torch_cases("max_pool")) {
    const st::PoolOptions o = pool_options(c);
    const st::Shape kernel = c.shape("kernel");
    conv_check_case(c, {"x"}, kind++ % 3,
                    [&](const auto& m) { return st::max_pool(m.at("x"), kernel, o); });
    ++count;
  }
  for (const TorchCase& c : conv_torch_cases("avg_pool")) {
    const st::PoolOptions o = pool_options(c);
    const st::Shape kernel = c.shape("kernel");
    conv_check_case(c, {"x"}, kind++ % 3,
                    [&](const auto& m) { return st::avg_pool(m.at("x"), kernel, o); });
    ++count;
  }
  for (const TorchCase& c : conv_torch_cases("adaptive_avg_pool")) {
    const st::Shape out = c.shape("output_size");
    conv_check_case(c, {"x"}, kind++ % 3,
                    [&](const auto& m) { return st::adaptive_avg_pool(m.at("x"), out); });
    ++count;
  }
  CHECK(count == 32);
}

TEST_CASE("conv and the pools on unbatched inputs equal the batched ones", "[ad][conv]") {
  const st::Tensor x = st::randn({3, 6, 5}, 3931, st::f64),
                   w = st::randn({4, 3, 2, 2}, 3932, st::f64);
  const st::Tensor b = st::randn({4}, 3933, st::f64);
  const st::ConvOptions o{.stride = {2, 1}, .padding = {1}};
  st::testing::require_torch_close(st::conv(x, w, b, o),
                                   st::squeeze(st::conv(st::unsqueeze(x, 0), w, b, o), 0),
                                   "conv [C, H, W]", 0);
  const st::Tensor wt = st::randn({3, 2, 3, 1}, 3934, st::f64);
  st::testing::require_torch_close(
      st::conv_transpose(x, wt, {.stride = {2}}),
      st::squeeze(st::conv_transpose(st::unsqueeze(x, 0), wt, {.stride = {2}}), 0),
      "conv_transpose [C, H, W]", 0);
}
