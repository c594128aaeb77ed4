// SPDX-License-Identifier: MIT
#pragma once
/// The graph colourings that compress a sparse Jacobian or Hessian into a few dense
/// directions (Gebremedhin, Manne and Pothen, "What color is your Jacobian? Graph coloring
/// for computing derivatives", SIAM Review 47(4), 2005): columns of one colour are seeded
/// together, and each entry is read back from the compressed product directly.
#include <cstdint>
#include <vector>

#include "ad/sparse/pattern.hpp"

namespace strata {

/// A colour for each column (or row, or vertex) of a pattern, from 0 to count - 1; -1 for one
/// with no nonzero, which needs no direction.
struct Colouring {
  std::vector<int64_t> colour;  ///< each column's (row's, vertex's) colour, or -1
  int64_t count = 0;            ///< the number of colours
};

/// A greedy distance-2 colouring of p's columns, in their natural order: two columns with a
/// nonzero in the same row get different colours, so J times the colour's indicator vector
/// holds each of their entries alone (st::sparse_jacfwd). A banded pattern of bandwidth w
/// gets w colours (tridiagonal: 3); a dense row forces one colour per column.
Colouring colour_columns(const SparsityPattern& p);

/// The distance-2 colouring of p's rows (two rows with a nonzero in the same column differ):
/// the columns of p's transpose, for the compressed vector-Jacobian products of
/// st::sparse_jacrev.
Colouring colour_rows(const SparsityPattern& p);

/// A star colouring of the symmetric pattern p's adjacency graph (an edge per off-diagonal
/// nonzero): adjacent vertices differ, and every path on four vertices uses at least three
/// colours, so each entry of the symmetric matrix is recovered directly from H times the
/// colours' indicators (st::sparse_hessian); it needs about half the colours of a
/// distance-2 colouring. GMP's greedy algorithm (their Algorithm 4.1), vertices in
/// largest-degree-first order, with the colours each vertex forbids kept up to date as
/// vertices are coloured, so a dense row and column (an arrowhead: 4 colours with a
/// tridiagonal band) costs no quadratic time. ValueError unless p is square and symmetric.
Colouring star_colouring(const SparsityPattern& p);

}  // namespace strata
