// SPDX-License-Identifier: MIT
#pragma once
/// Shared checks of the sparse-derivative tests (tests/ad/sparse_*.test.cpp): patterns read
/// off dense matrices, and the two colouring properties checked by brute force, independently
/// of how ad/sparse/colouring.cpp finds its colourings.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <set>
#include <strata.hpp>
#include <vector>

namespace sparse_checks {

namespace st = strata;

/// A point of n standard normal f64 values from a seed.
inline st::Tensor point(int64_t n, uint64_t seed) { return st::randn({n}, seed, st::f64); }

/// The CSR pattern of the nonzeros of a dense [rows, cols] f64 matrix.
inline st::SparsityPattern pattern_of(const st::Tensor& dense) {
  REQUIRE(dense.ndim() == 2);
  const int64_t rows = dense.shape()[0], cols = dense.shape()[1];
  const std::vector<double> v = dense.to(st::f64).to_vector<double>();
  std::vector<int64_t> crow{0}, col;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (v[std::size_t(i * cols + j)] != 0.0) col.push_back(j);
    }
    crow.push_back(int64_t(col.size()));
  }
  return st::SparsityPattern(rows, cols, crow, col);
}

/// The pattern of every (i, j) with pred(i, j), rows x cols.
template <class Pred>
st::SparsityPattern pattern_where(int64_t rows, int64_t cols, Pred pred) {
  std::vector<int64_t> crow{0}, col;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (pred(i, j)) col.push_back(j);
    }
    crow.push_back(int64_t(col.size()));
  }
  return st::SparsityPattern(rows, cols, crow, col);
}

/// Whether every position of `inner` is in `outer`.
inline bool contains_all(const st::SparsityPattern& outer, const st::SparsityPattern& inner) {
  for (int64_t i = 0; i < inner.rows(); ++i) {
    for (int64_t j : inner.row(i)) {
      if (!outer.contains(i, j)) return false;
    }
  }
  return true;
}

/// A random symmetric pattern n x n with the diagonal and about `degree` off-diagonal entries
/// per row, from a fixed seed.
inline st::SparsityPattern random_symmetric(int64_t n, int64_t degree, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::set<int64_t>> rows(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[std::size_t(i)].insert(i);
  for (int64_t e = 0; e < n * degree / 2; ++e) {
    const int64_t i = int64_t(rng() % uint64_t(n)), j = int64_t(rng() % uint64_t(n));
    rows[std::size_t(i)].insert(j);
    rows[std::size_t(j)].insert(i);
  }
  return pattern_where(n, n, [&](int64_t i, int64_t j) { return rows[std::size_t(i)].count(j); });
}

/// A colouring of the columns of p is valid for a Jacobian when no row has two columns of one
/// colour (so each entry is alone in its colour's compressed column).
inline void require_distance2(const st::SparsityPattern& p, const std::vector<int64_t>& colour) {
  REQUIRE(int64_t(colour.size()) == p.cols());
  for (int64_t i = 0; i < p.rows(); ++i) {
    std::set<int64_t> seen;
    for (int64_t j : p.row(i)) {
      INFO("row " << i << ", column " << j << ", colour " << colour[std::size_t(j)]);
      REQUIRE(seen.insert(colour[std::size_t(j)]).second);
    }
  }
}

/// A star colouring of the graph of the symmetric p (an edge per off-diagonal nonzero):
/// adjacent vertices differ, and no path on four vertices v0 - v1 - v2 - v3 is coloured with
/// two colours alone (c(v0) = c(v2) and c(v1) = c(v3)). Every such path is enumerated.
inline void require_star(const st::SparsityPattern& p, const std::vector<int64_t>& colour) {
  REQUIRE(p.rows() == p.cols());
  REQUIRE(int64_t(colour.size()) == p.rows());
  auto c = [&](int64_t v) { return colour[std::size_t(v)]; };
  for (int64_t v1 = 0; v1 < p.rows(); ++v1) {
    for (int64_t v2 : p.row(v1)) {
      if (v2 == v1) continue;
      INFO("edge " << v1 << " - " << v2);
      REQUIRE(c(v1) != c(v2));
      for (int64_t v0 : p.row(v1)) {
        if (v0 == v1 || v0 == v2 || c(v0) != c(v2)) continue;
        for (int64_t v3 : p.row(v2)) {
          if (v3 == v2 || v3 == v1 || v3 == v0) continue;
          INFO("path " << v0 << " - " << v1 << " - " << v2 << " - " << v3);
          REQUIRE(c(v3) != c(v1));
        }
      }
    }
  }
}

/// The number of distinct colours (-1, no colour, is not one).
inline int64_t colours_used(const std::vector<int64_t>& colour) {
  std::set<int64_t> used(colour.begin(), colour.end());
  used.erase(-1);
  return int64_t(used.size());
}

}  // namespace sparse_checks
