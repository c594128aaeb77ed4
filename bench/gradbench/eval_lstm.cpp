// SPDX-License-Identifier: MIT
// GradBench's `lstm` (ADBench's LSTM, whose weight matrices are diagonal: each gate is an
// elementwise product): the loss of predicting each character's bits from the ones before,
// and its gradient with respect to main_params and extra_params. The recurrence runs one
// character and one layer at a time; the predictions' normalisation and the loss are
// computed for every character at once.
#include <memory>
#include <vector>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

struct Lstm {
  int64_t layers, chars, bits;
  st::Tensor main, extra;  // [2 layers, 4 bits], [3, bits]: the parameters
  st::Tensor state;        // [2 layers, bits]: each layer's hidden and cell state
  st::Tensor sequence;     // [chars, bits]
};

template <class T>
T loss(const Lstm& s, const T& main, const T& extra) {
  const int64_t b = s.bits, steps = s.chars - 1;
  // Row 2 i of main holds layer i's weights, row 2 i + 1 its biases, each as the gates
  // forget, input, output and change, b values each.
  // Each gate's weights and biases, sliced once: a slice inside the loop below would add a
  // node per character, and its pullback a pass over all of main.
  std::vector<std::vector<T>> weight(std::size_t(s.layers)), bias(std::size_t(s.layers));
  for (int64_t i = 0; i < s.layers; ++i) {
    for (int64_t g = 0; g < 4; ++g) {
      weight[std::size_t(i)].push_back(main.ix(2 * i, st::slice(g * b, (g + 1) * b)));
      bias[std::size_t(i)].push_back(main.ix(2 * i + 1, st::slice(g * b, (g + 1) * b)));
    }
  }
  auto gate = [&](int64_t layer, int64_t row, int64_t g) -> const T& {
    return (row == 0 ? weight : bias)[std::size_t(layer)][std::size_t(g)];
  };
  const T in_weight = extra.ix(0), out_weight = extra.ix(1), out_bias = extra.ix(2);

  std::vector<T> hidden, cell;
  for (int64_t i = 0; i < s.layers; ++i) {
    hidden.push_back(st::lift<T>(s.state.ix(2 * i)));
    cell.push_back(st::lift<T>(s.state.ix(2 * i + 1)));
  }
  std::vector<T> ys;
  for (int64_t t = 0; t < steps; ++t) {
    // The input row is a slice of a constant: a row of a traced [steps, b] tensor instead
    // would pull back into all of it at every step, quadratic in the sequence's length.
    T input = s.sequence.ix(t) * in_weight;
    for (int64_t i = 0; i < s.layers; ++i) {
      const T forget = st::sigmoid(input * gate(i, 0, 0) + gate(i, 1, 0));
      const T ingate = st::sigmoid(hidden[i] * gate(i, 0, 1) + gate(i, 1, 1));
      const T outgate = st::sigmoid(input * gate(i, 0, 2) + gate(i, 1, 2));
      const T change = st::tanh(hidden[i] * gate(i, 0, 3) + gate(i, 1, 3));
      cell[i] = cell[i] * forget + ingate * change;
      hidden[i] = outgate * st::tanh(cell[i]);
      input = hidden[i];
    }
    ys.push_back(input);
  }
  const T pred = st::stack(ys) * out_weight + out_bias;          // [steps, b]
  const T lse = st::log(st::sum(st::exp(pred), 1, true) + 2.0);  // ADBench's "+ 2"
  const T total = st::sum(s.sequence.ix(st::slice(1, st::none)) * (pred - lse));
  return -total / double(steps * b);
}

std::shared_ptr<Lstm> parse(const Json& in) {
  auto s = std::make_shared<Lstm>();
  s->main = mat(in.at("main_params"));
  s->extra = mat(in.at("extra_params"));
  s->state = mat(in.at("state"));
  s->sequence = mat(in.at("sequence"));
  s->layers = s->main.shape()[0] / 2;
  s->bits = s->main.shape()[1] / 4;
  s->chars = s->sequence.shape()[0];
  return s;
}

}  // namespace

void register_lstm(Registry& r) {
  // Both functions under st::jit, traced while preparing (timed as "prepare", as a JAX tool's
  // compilation), then replayed as a plan whose elementwise chains run fused.
  r["lstm"]["objective"] = [](const Json& input) {
    auto s = parse(input);
    auto out = std::make_shared<st::Tensor>();
    auto f = st::jit(
        [s](const st::Tensor& main, const st::Tensor& extra) { return loss(*s, main, extra); });
    warm(f, s->main, s->extra);
    return Prepared{[=] { *out = f(s->main, s->extra); }, [=] { return Json(number(*out)); }};
  };
  r["lstm"]["jacobian"] = [](const Json& input) {
    auto s = parse(input);
    auto out = std::make_shared<std::tuple<st::Tensor, st::Tensor>>();
    auto f = [s](const auto& main, const auto& extra) { return loss(*s, main, extra); };
    auto g = st::jit(
        [f](const st::Tensor& main, const st::Tensor& extra) { return st::grad(f, main, extra); });
    warm(g, s->main, s->extra);
    return Prepared{[=] { *out = g(s->main, s->extra); },
                    [=] {
                      const auto& [main, extra] = *out;
                      return to_json(st::concat({main.flatten(), extra.flatten()}));
                    }};
  };
}

}  // namespace gradbench
