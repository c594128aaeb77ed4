// SPDX-License-Identifier: MIT
// scaled_dot_product_attention against PyTorch 1.13 in float64 (the math of
// torch.nn.functional.scaled_dot_product_attention with PyTorch >= 2.5's safe softmax, written
// out in tests/ad/data/transformer_torch.py): outputs and the gradients of sum(out * cot) with
// respect to q, k and v, over random batch dims, lengths, widths, causal and bool or float
// masks (a fully masked row, causal with more queries than keys), each input contiguous,
// transposed or a strided slice.
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/torch_cases.hpp"

namespace st = strata;
using st::testing::require_torch_close;
using st::testing::TorchCase;
using st::testing::transformer_torch_file;

TEST_CASE("scaled_dot_product_attention matches PyTorch float64", "[ad][attention][torch]") {
  int kind = 0, count = 0;
  for (const TorchCase& c : st::testing::read_torch_cases(transformer_torch_file(), "sdpa")) {
    INFO("sdpa case at line " << c.line << " of transformer_torch.txt, layout " << kind % 3);
    const bool causal = c.flag("causal");
    std::optional<double> scale;
    if (c.params.at("scale") != "default") scale = c.num("scale");
    st::Tensor mask;
    if (c.params.at("mask") == "bool") mask = c.at("mask") != 0.0;
    if (c.params.at("mask") == "float") mask = c.at("mask");
    std::map<std::string, st::Tensor> in;
    for (const char* n : {"q", "k", "v"}) in[n] = st::testing::in_layout(c.at(n), kind % 3);
    ++kind;
    auto f = [&](const auto& m) {
      return st::scaled_dot_product_attention(m.at("q"), m.at("k"), m.at("v"), causal, mask, scale);
    };
    auto [y, pullback] = st::vjp(f, in);
    require_torch_close(y, c.at("out"), "out");
    for (const auto& [name, g] : pullback(c.at("cot"))) {
      require_torch_close(g, c.at("g_" + name), "gradient of " + name);
    }
    ++count;
  }
  CHECK(count == 15);
}
