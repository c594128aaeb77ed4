// SPDX-License-Identifier: MIT
// layer_norm, rms_norm, group_norm and batch_norm against PyTorch 1.13 in float64: values,
// running statistics and the gradients of sum(out * cot) with respect to every input, on
// the random configurations tests/ad/data/transformer_torch.py wrote; each input in turn
// contiguous, transposed and as a strided slice (tests/support/torch_cases.hpp).
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/torch_cases.hpp"

namespace st = strata;
using st::testing::require_torch_close;
using st::testing::TorchCase;
using st::testing::transformer_torch_file;

namespace {

/// The case's differentiable inputs (every tensor but the outputs, the cotangent and the
/// constants), each in layout `kind` (0, 1, 2 in turn over the cases).
std::map<std::string, st::Tensor> inputs(const TorchCase& c, const std::vector<std::string>& names,
                                         int kind) {
  std::map<std::string, st::Tensor> m;
  for (const std::string& n : names) {
    if (c.has(n)) m[n] = st::testing::in_layout(c.at(n), kind);
  }
  return m;
}

/// Runs f (a generic function of the input map) through st::vjp and compares the output and
/// every gradient with PyTorch's.
template <class F>
void check_case(const TorchCase& c, const std::vector<std::string>& names, int kind, F f) {
  INFO(c.op << " case at line " << c.line << " of transformer_torch.txt, layout " << kind);
  const auto in = inputs(c, names, kind);
  auto [y, pullback] = st::vjp(f, in);
  require_torch_close(y, c.at("out"), "out");
  const auto grads = pullback(c.at("cot"));
  for (const auto& [name, g] : grads)
    require_torch_close(g, c.at("g_" + name), "gradient of " + name);
}

}  // namespace

TEST_CASE("layer_norm and rms_norm match PyTorch float64", "[ad][norms][torch]") {
  int kind = 0, count = 0;
  for (const TorchCase& c : st::testing::read_torch_cases(transformer_torch_file(), "layer_norm")) {
    const st::Shape ns = c.shape("nshape");
    const double eps = c.num("eps");
    check_case(c, {"x", "w", "b"}, kind++ % 3, [&](const auto& m) {
      return c.flag("affine") ? st::layer_norm(m.at("x"), ns, m.at("w"), m.at("b"), eps)
                              : st::layer_norm(m.at("x"), ns, eps);
    });
    ++count;
  }
  for (const TorchCase& c : st::testing::read_torch_cases(transformer_torch_file(), "rms_norm")) {
    const st::Shape ns = c.shape("nshape");
    std::optional<double> eps;
    if (c.params.at("eps") != "default") eps = c.num("eps");
    check_case(c, {"x", "w"}, kind++ % 3, [&](const auto& m) {
      return c.flag("affine") ? st::rms_norm(m.at("x"), ns, m.at("w"), eps)
                              : st::rms_norm(m.at("x"), ns, eps);
    });
    ++count;
  }
  CHECK(count == 25);
}

TEST_CASE("group_norm and batch_norm match PyTorch float64", "[ad][norms][torch]") {
  int kind = 0, count = 0;
  for (const TorchCase& c : st::testing::read_torch_cases(transformer_torch_file(), "group_norm")) {
    const int64_t groups = c.integer("groups");
    const double eps = c.num("eps");
    check_case(c, {"x", "w", "b"}, kind++ % 3, [&](const auto& m) {
      return c.flag("affine") ? st::group_norm(m.at("x"), groups, m.at("w"), m.at("b"), eps)
                              : st::group_norm(m.at("x"), groups, eps);
    });
    ++count;
  }
  for (const TorchCase& c : st::testing::read_torch_cases(transformer_torch_file(), "batch_norm")) {
    const bool training = c.flag("training"), affine = c.flag("affine");
    const double momentum = c.num("momentum"), eps = c.num("eps");
    // The running statistics are plain tensors beside differentiated inputs (mixed levels).
    const st::Tensor rm = c.at("rm"), rv = c.at("rv");
    auto bn = [&](const auto& m) {
      return affine
                 ? st::batch_norm(m.at("x"), rm, rv, m.at("w"), m.at("b"), training, momentum, eps)
                 : st::batch_norm(m.at("x"), rm, rv, training, momentum, eps);
    };
    check_case(c, {"x", "w", "b"}, kind++ % 3, [&](const auto& m) { return bn(m).out; });
    // The statistics come back as values; the inputs are unchanged.
    const std::vector<double> rm_before = rm.to_vector<double>(),
                              rv_before = rv.to_vector<double>();
    const auto r = bn(inputs(c, {"x", "w", "b"}, 0));
    INFO("batch_norm case at line " << c.line);
    require_torch_close(r.running_mean, c.at("out1"), "running_mean");
    require_torch_close(r.running_var, c.at("out2"), "running_var");
    CHECK(rm.to_vector<double>() == rm_before);
    CHECK(rv.to_vector<double>() == rv_before);
    ++count;
  }
  CHECK(count == 22);
}
