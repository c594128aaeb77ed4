// SPDX-License-Identifier: MIT
// A tour of strata's four kinds of indexing, on the [4, 3, 2] tensor
// arange(1, 25) of the "From Basic to Fancy Indexing" post:
//
//   x.ix(...)   basic: integers, slices, all, newaxis, ellipsis — always a view
//   x.oix(...)  outer: integer tensors, each replacing its own axis
//   x.vix(...)  vectorized: integer tensors zipped under broadcasting, dims first
//   masks       bool tensors selecting their true positions (oix and vix)
//
// Every line prints the shapes before and after. All of it is differentiable:
// the last section takes a gradient through a gather with repeated indices.
#include <iostream>
#include <string>
#include <vector>

#include <strata.hpp>

namespace st = strata;

namespace {

void show(const std::string& what, const st::Tensor& before, const st::Tensor& after) {
  std::cout << ">>> " << what << "\n"
            << before.shape() << " -> " << after.shape() << "\n"
            << after << "\n\n";
}

st::Tensor ints(const std::vector<int64_t>& v, const st::Shape& shape) {
  return st::from_vector(v, shape);
}

}  // namespace

int main() {
  const st::Tensor t = st::arange(1, 25).reshape({4, 3, 2});
  std::cout << "t = arange(1, 25).reshape({4, 3, 2})\n" << t << "\n\n";

  std::cout << "=== Basic indexing: views that share t's storage ===\n\n";
  show("t.ix(1)", t, t.ix(1));
  show("t.ix(1, 2, 0)", t, t.ix(1, 2, 0));
  show("t.ix(-1)  (negative integers count from the end)", t, t.ix(-1));
  show("t.ix(st::slice(1, 3), st::slice(1, 2), st::all)", t,
       t.ix(st::slice(1, 3), st::slice(1, 2), st::all));
  show("t.ix(st::slice(st::none, st::none, -1), 0, 0)  (a negative step flips)", t,
       t.ix(st::slice(st::none, st::none, -1), 0, 0));
  show("t.ix(st::newaxis, st::ellipsis, 1)", t, t.ix(st::newaxis, st::ellipsis, 1));
  st::Tensor w = t.to(st::f64);  // a copy we may write into
  w.ix(st::all, 0, 0).fill_(0);
  show("w = t.to(f64); w.ix(st::all, 0, 0).fill_(0)  (writes through the view)", t, w);

  std::cout << "=== Outer indexing: each index tensor replaces its own axis ===\n\n";
  const st::Tensor i = ints({3, 0, 2, 1}, {4});
  show("t.oix(i) with i = [3, 0, 2, 1]  (reorders the first axis)", t, t.oix(i));
  show("t.oix(i2) with i2 = [[0, 1], [1, 0]]  (the index's shape replaces the axis)", t,
       t.oix(ints({0, 1, 1, 0}, {2, 2})));
  show("t.oix([3, 0], [2, 0], [1, 0])  (the cartesian product: corners, reversed)", t,
       t.oix(ints({3, 0}, {2}), ints({2, 0}, {2}), ints({1, 0}, {2})));
  show("t.oix(st::all, st::all, [[0, 1], [1, 0]])", t,
       t.oix(st::all, st::all, ints({0, 1, 1, 0}, {2, 2})));

  std::cout << "=== Vectorized indexing: index tensors are zipped, their dims first ===\n\n";
  const st::Tensor m = st::arange(1, 10).reshape({3, 3});
  const st::Tensor corners = ints({0, 2}, {2});
  show("m.oix([0, 2], [0, 2])  (outer: four corners)", m, m.oix(corners, corners));
  show("m.vix([0, 2], [0, 2])  (vectorized: the diagonal corners (0,0), (2,2))", m,
       m.vix(corners, corners));
  show("t.vix([2, 1], [2, 1], 1)", t, t.vix(ints({2, 1}, {2}), ints({2, 1}, {2}), 1));
  show("t.vix([0, 2], st::all, [0, 1])  (the broadcast dims come first)", t,
       t.vix(ints({0, 2}, {2}), st::all, ints({0, 1}, {2})));

  std::cout << "=== Masks: bool tensors select their true positions ===\n\n";
  const st::Tensor row_mask = st::from_vector(std::vector<bool>{false, false, true, false});
  show("t.oix([f, f, t, f])", t, t.oix(row_mask));
  const st::Tensor lower_left =
      st::from_vector(std::vector<bool>{false, false, true, false, true, true}, {3, 2});
  show("t.oix(st::all, mask) with a [3, 2] mask  (two axes become one)", t,
       t.oix(st::all, lower_left));
  show("t.oix(t > 20)", t, t.oix(t > 20));
  show("t.vix(mask, [2, 1], st::slice(1))  (a mask zips like its positions)", t,
       t.vix(row_mask, ints({2, 1}, {2}), st::slice(1)));

  std::cout << "=== Specs built at run time ===\n\n";
  std::vector<st::Index> spec{st::Index(1), st::Index(st::slice(0, 2)), st::Index(i.ix(1))};
  show("t.oix(std::vector<st::Index>{1, st::slice(0, 2), i.ix(1)})  (i.ix(1) is a 0-d tensor: 0)",
       t, t.oix(spec));

  std::cout << "=== Gradients flow through indexing ===\n\n";
  const st::Tensor x = st::arange(0, 5, 1, st::f64);
  const st::Tensor idx = ints({4, 1, 4, 4}, {4});
  const st::Tensor g = st::grad([&](const auto& x) { return st::sum(x.vix(idx) * 2.0); }, x);
  show("grad of sum(2 * x.vix([4, 1, 4, 4])): repeated indices add up", x, g);
  const std::vector<double> gv = g.to_vector<double>();
  if (gv != std::vector<double>{0, 2, 0, 0, 6}) {
    std::cerr << "fancy_indexing: unexpected gradient\n";
    return 1;
  }
  return 0;
}
