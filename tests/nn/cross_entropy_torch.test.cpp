// SPDX-License-Identifier: MIT
// nn::cross_entropy with ignore_index over [N, V] and [B, T, V] logits against PyTorch 1.13's
// F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=...) in float64: the loss
// and its gradient, on the random cases of tests/ad/data/transformer_torch.py (some labels
// ignored, the default -100 and class values as ignore_index); vmap against a loop; the
// all-ignored batch; the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/message_of.hpp"
#include "support/torch_cases.hpp"

namespace st = strata;
namespace nn = st::nn;
using Catch::Matchers::Contains;
using st::testing::message_of;
using st::testing::TorchCase;
using st::testing::transformer_torch_file;

namespace {
/// got equal to PyTorch's want within 1e-12 relative, 1e-13 absolute, element by element.
void require_torch_close_tight(const st::Tensor& got, const st::Tensor& want,
                               const std::string& what) {
  INFO(what);
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i)
    CHECK(g[i] == Approx(w[i]).epsilon(1e-12).margin(1e-13));
}
}  // namespace

TEST_CASE("cross_entropy with ignore_index matches PyTorch float64", "[nn][torch]") {
  int count = 0;
  for (const TorchCase& c :
       st::testing::read_torch_cases(transformer_torch_file(), "cross_entropy")) {
    INFO("cross_entropy case at line " << c.line << " of transformer_torch.txt");
    const int64_t ignore = c.integer("ignore_index");
    const st::Tensor labels = c.at("labels").to(st::i64);
    const st::Tensor z = c.at("z");
    auto loss = [&](const auto& x) { return nn::cross_entropy(x, labels, ignore); };
    require_torch_close_tight(loss(z), c.at("out"), "loss");
    // The gradient of cot * loss (cot is a 0-d cotangent).
    require_torch_close_tight(st::grad(loss, z) * c.at("cot"), c.at("g_z"), "gradient");
    // Transposed logits give the same loss.
    require_torch_close_tight(loss(st::testing::in_layout(z, 1)), c.at("out"),
                              "loss, transposed layout");
    ++count;
  }
  CHECK(count == 10);
}

TEST_CASE("cross_entropy: [B, T, V] logits, ignore_index edge cases", "[nn]") {
  const st::Tensor z = st::randn({2, 3, 5}, 77, st::f64);
  const st::Tensor labels = st::from_vector(std::vector<int64_t>{1, 4, 0, 2, 2, 3}, {2, 3});
  // [B, T, V] is the same as its [B * T, V] view.
  CHECK(nn::cross_entropy(z, labels).item<double>() ==
        Approx(nn::cross_entropy(z.reshape({6, 5}), labels.reshape({6})).item<double>())
            .epsilon(1e-15));
  // Ignoring labels equals the loss over the kept rows; an ignore_index that no label has
  // changes nothing.
  const st::Tensor pad = st::from_vector(std::vector<int64_t>{1, -100, 0, -100, 2, 3}, {2, 3});
  const st::Tensor kept = st::from_vector(std::vector<int64_t>{0, 2, 4, 5});
  CHECK(nn::cross_entropy(z, pad, -100).item<double>() ==
        Approx(nn::cross_entropy(st::take(z.reshape({6, 5}), kept, 0),
                                 st::from_vector(std::vector<int64_t>{1, 0, 2, 3}))
                   .item<double>())
            .epsilon(1e-15));
  CHECK(nn::cross_entropy(z, labels, -100).item<double>() ==
        nn::cross_entropy(z, labels).item<double>());
  // Ignored positions get zero gradient.
  const std::vector<double> g =
      st::grad([&](const auto& x) { return nn::cross_entropy(x, pad, -100); }, z)
          .to_vector<double>();
  for (int j = 0; j < 5; ++j) CHECK(g[1 * 5 + j] == 0.0);
  // Under vmap (labels shared by the examples) values and gradients equal a loop.
  const st::Tensor row = st::from_vector(std::vector<int64_t>{1, -100, 4});
  auto per_example = [&](const auto& x) { return nn::cross_entropy(x, row, -100); };
  const st::Tensor mapped = st::vmap(per_example)(z);
  const st::Tensor grads = st::vmap(st::grad(per_example))(z);
  for (int64_t i = 0; i < 2; ++i) {
    const st::Tensor zi = z.ix(i);
    CHECK(st::Tensor(mapped.ix(i)).item<double>() ==
          Approx(per_example(zi).item<double>()).epsilon(1e-14));
    const std::vector<double> gi = st::Tensor(grads.ix(i)).to_vector<double>();
    const std::vector<double> want = st::grad(per_example, zi).to_vector<double>();
    for (std::size_t j = 0; j < gi.size(); ++j) CHECK(gi[j] == Approx(want[j]).margin(1e-14));
  }
  // Every label ignored: NaN, as in PyTorch.
  const st::Tensor none = st::full({2, 3}, -1, st::i64);
  CHECK(std::isnan(nn::cross_entropy(z, none, -1).item<double>()));
  // Without ignore_index, -100 is an out-of-range label; with it, others still are.
  CHECK_THAT(message_of<st::IndexError>([&] { nn::cross_entropy(z, pad); }),
             Contains("label -100 at position 1 is out of range [0, 5)"));
  const st::Tensor bad = st::from_vector(std::vector<int64_t>{1, -100, 7, 0, 0, 0}, {2, 3});
  CHECK_THAT(
      message_of<st::IndexError>([&] { nn::cross_entropy(z, bad, -100); }),
      Contains("label 7 at position 2 is out of range [0, 5) and is not ignore_index = -100"));
  CHECK_THAT(message_of<st::ShapeError>([&] { nn::cross_entropy(z, labels.reshape({6})); }),
             Contains("labels of shape [6] do not match logits of shape [2, 3, 5] (need [2, 3]"));
}
