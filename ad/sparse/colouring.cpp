// SPDX-License-Identifier: MIT
// The greedy distance-2 and star colourings (ad/sparse/colouring.hpp).
#include "ad/sparse/colouring.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "core/error.hpp"

namespace strata {
namespace {

/// The smallest colour whose stamp in `forbidden` is not `stamp` (growing it by one).
int64_t first_free(std::vector<int64_t>& forbidden, int64_t stamp) {
  int64_t c = 0;
  while (c < int64_t(forbidden.size()) && forbidden[std::size_t(c)] == stamp) ++c;
  if (c == int64_t(forbidden.size())) forbidden.push_back(-1);
  return c;
}

/// Adds c to the small set s (kept without repeats).
void insert(std::vector<int64_t>& s, int64_t c) {
  if (std::find(s.begin(), s.end(), c) == s.end()) s.push_back(c);
}

}  // namespace

Colouring colour_columns(const SparsityPattern& p) {
  const SparsityPattern by_column = p.transposed();
  Colouring out{std::vector<int64_t>(std::size_t(p.cols()), -1), 0};
  std::vector<int64_t> forbidden;
  for (int64_t j = 0; j < p.cols(); ++j) {
    if (by_column.row(j).empty()) continue;  // no entry: no direction needed (colour -1)
    for (int64_t i : by_column.row(j)) {
      for (int64_t other : p.row(i)) {
        const int64_t c = out.colour[std::size_t(other)];
        if (c >= 0) forbidden[std::size_t(c)] = j;
      }
    }
    const int64_t c = first_free(forbidden, j);
    out.colour[std::size_t(j)] = c;
    out.count = std::max(out.count, c + 1);
  }
  return out;
}

Colouring colour_rows(const SparsityPattern& p) { return colour_columns(p.transposed()); }

Colouring star_colouring(const SparsityPattern& p) {
  if (!p.symmetric()) {
    detail::fail<ValueError>("star_colouring", "the pattern (", p.rows(), " x ", p.cols(),
                             ") is not square and symmetric: a Hessian's is");
  }
  const int64_t n = p.rows();
  // Neighbours: the off-diagonal nonzeros of each row.
  auto neighbours = [&](int64_t v, auto&& visit) {
    for (int64_t w : p.row(v)) {
      if (w != v) visit(w);
    }
  };
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return p.row(a).size() > p.row(b).size(); });

  // For a vertex x and a colour c: how many of x's coloured neighbours have colour c, and
  // the first of them.
  struct Count {
    int64_t count = 0, first = -1;
  };
  std::unordered_map<int64_t, Count> counts;
  counts.reserve(std::size_t(p.nnz()));
  auto count = [&](int64_t x, int64_t c) -> Count& { return counts[x * (n + 1) + c]; };
  // near[x]: the colours of x's coloured neighbours. star[w], for a coloured w: the colours
  // c(x) of w's coloured neighbours x that have another neighbour of w's colour. A vertex v
  // next to w must avoid them: v - w - x - y with c(v) = c(x), c(w) = c(y) would be a path
  // on four vertices in two colours.
  std::vector<std::vector<int64_t>> near(static_cast<std::size_t>(n)), star(near.size());
  Colouring out{std::vector<int64_t>(std::size_t(n), -1), 0};
  std::vector<int64_t> forbidden;
  auto& colour = out.colour;
  for (int64_t v : order) {
    if (p.row(v).empty()) continue;  // no entry in its row or column: colour -1
    neighbours(v, [&](int64_t w) {
      const int64_t cw = colour[std::size_t(w)];
      if (cw >= 0) {
        forbidden[std::size_t(cw)] = v;
        for (int64_t c : star[std::size_t(w)]) forbidden[std::size_t(c)] = v;
      } else {
        // w is coloured after v and x: v and x, two apart through w, must differ.
        for (int64_t c : near[std::size_t(w)]) forbidden[std::size_t(c)] = v;
      }
    });
    const int64_t c = first_free(forbidden, v);
    colour[std::size_t(v)] = c;
    out.count = std::max(out.count, c + 1);
    // Keep near, the counts and star up to date with v's colour.
    neighbours(v, [&](int64_t x) {
      Count& e = count(x, c);
      if (++e.count == 1) {
        e.first = v;
        near[std::size_t(x)].push_back(c);
      }
      const int64_t cx = colour[std::size_t(x)];
      if (cx < 0 || e.count < 2) return;
      // x now has two or more neighbours of colour c: v and the first one.
      if (e.count == 2) insert(star[std::size_t(e.first)], cx);
      insert(star[std::size_t(v)], cx);
    });
    neighbours(v, [&](int64_t w) {
      const int64_t cw = colour[std::size_t(w)];
      if (cw >= 0 && w != v && count(v, cw).count >= 2) insert(star[std::size_t(w)], c);
    });
  }
  return out;
}

}  // namespace strata
