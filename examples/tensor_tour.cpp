// SPDX-License-Identifier: MIT
// A first tour of strata's tensors: creating them, views that share storage
// (transpose, slices with steps, flips, broadcasting), a reduction and a
// matrix product. Runs in a blink; `make demo` shows it.
#include <iostream>
#include <vector>

#include <strata.hpp>

namespace st = strata;
namespace raw = strata::raw;

static void show(const char* title, const st::RawTensor& t) {
  std::cout << "--- " << title << "  strides=" << t.strides() << " offset=" << t.offset()
            << (t.is_contiguous() ? " (contiguous)" : " (a view)") << "\n"
            << t << "\n\n";
}

int main() {
  // 24 numbers arranged as a [2, 3, 4] tensor. reshape of a fresh tensor is a view.
  st::RawTensor x = raw::reshape(raw::arange(0, 24, 1, st::f32), {2, 3, 4});
  show("x = arange(24).reshape(2, 3, 4)", x);

  // Views only rewrite shape, strides and offset; no element is copied.
  show("x.transpose(1, 2)", x.transpose(1, 2));
  show("x[:, 1:3, ::2]  (slice with a step)",
       x.slice(1, 1, 3).slice(2, std::nullopt, std::nullopt, 2));
  show("x[1, :, ::-1]  (select, then a negative step)", x.select(0, 1).flip(1));
  st::RawTensor row = raw::reshape(raw::arange(10, 14, 1, st::f32), {1, 4});
  show("a [1, 4] row broadcast to [3, 4] (zero stride)", row.expand({3, 4}));

  // Views share storage: writing through one is visible in the base tensor.
  st::RawTensor corner = x.select(0, 0).slice(0, 0, 2).slice(1, 0, 2);
  raw::fill_(corner, -1.0);
  show("after filling x[0, :2, :2] with -1", x);

  // Reductions over any axes, keepdims optional.
  show("sum over axis 1", raw::reduce(st::ReduceOp::sum, x, {1}));
  show("argmax over the last axis", raw::reduce(st::ReduceOp::argmax, x, {-1}));

  // matmul reads transposed and sliced operands in place and broadcasts batch dims.
  std::vector<double> a_data{1, 2, 3, 4, 5, 6};
  st::RawTensor a = raw::from_host(a_data.data(), {2, 3}, st::f64);
  show("a", a);
  show("a @ a^T", raw::matmul(a, a.transpose(0, 1)));
  st::RawTensor batch = raw::normal({4, 2, 3}, /*seed=*/7, st::f64);
  show("batch [4, 2, 3] @ a^T [3, 2] -> [4, 2, 2]",
       raw::matmul(batch, a.transpose(0, 1).unsqueeze(0)));

  // Bad input is an exception that says what is wrong.
  try {
    raw::matmul(a, a);
  } catch (const st::Error& e) {
    std::cout << "matmul(a, a) throws st::ShapeError:\n  " << e.what() << "\n";
  }
  return 0;
}
