// SPDX-License-Identifier: MIT
// SparsePlan (ad/sparse/plan.hpp): colourings and the recovery positions.
#include "ad/sparse/plan.hpp"

#include "diff/ops.hpp"

namespace strata {

using detail::fail;

SparsePlan SparsePlan::jacfwd(SparsityPattern p) {
  Colouring c = colour_columns(p);
  return SparsePlan(Mode::jacfwd, std::move(p), std::move(c));
}

SparsePlan SparsePlan::jacrev(SparsityPattern p) {
  Colouring c = colour_rows(p);
  return SparsePlan(Mode::jacrev, std::move(p), std::move(c));
}

SparsePlan SparsePlan::hessian(SparsityPattern p) {
  if (!p.symmetric()) {
    fail<ValueError>("sparse_hessian", "the pattern (", p.rows(), " x ", p.cols(),
                     ") is not square and symmetric, as a Hessian's is");
  }
  Colouring c = star_colouring(p);
  return SparsePlan(Mode::hessian, std::move(p), std::move(c));
}

SparsePlan::SparsePlan(Mode mode, SparsityPattern p, Colouring c)
    : mode_(mode),
      pattern_(std::make_shared<const SparsityPattern>(std::move(p))),
      colouring_(std::move(c)) {
  const SparsityPattern& pat = *pattern_;
  const std::vector<int64_t>& colour = colouring_.colour;
  recovery_.reserve(std::size_t(pat.nnz()));
  // The compressed product C is [colours, other]: jacfwd's C[k, i] sums J[i, j] over the
  // columns j of colour k; jacrev's C[k, j] sums J[i, j] over the rows i of colour k; the
  // Hessian's C[k, i] sums H[i, j] over the columns j of colour k.
  std::vector<int64_t> seen(static_cast<std::size_t>(colouring_.count), -1),
      times(static_cast<std::size_t>(colouring_.count));
  // How many columns of colour k row i holds (valid while seen[k] == i).
  auto colour_count = [&](int64_t i, int64_t k) {
    return seen[std::size_t(k)] == i ? times[std::size_t(k)] : 0;
  };
  auto count_row = [&](int64_t i) {
    for (int64_t j : pat.row(i)) {
      const int64_t k = colour[std::size_t(j)];
      if (seen[std::size_t(k)] != i) seen[std::size_t(k)] = i, times[std::size_t(k)] = 0;
      ++times[std::size_t(k)];
    }
  };
  for (int64_t i = 0; i < pat.rows(); ++i) {
    if (mode_ == Mode::hessian) count_row(i);
    for (int64_t j : pat.row(i)) {
      switch (mode_) {
        case Mode::jacfwd:
          recovery_.push_back(colour[std::size_t(j)] * pat.rows() + i);
          break;
        case Mode::jacrev:
          recovery_.push_back(colour[std::size_t(i)] * pat.cols() + j);
          break;
        case Mode::hessian: {
          // Star colouring: j is alone of its colour in row i, or i alone of its colour in
          // row j (then H[i, j] = H[j, i] is read from row j's sum).
          const int64_t n = pat.cols();
          if (colour_count(i, colour[std::size_t(j)]) == 1) {
            recovery_.push_back(colour[std::size_t(j)] * n + i);
            break;
          }
          int64_t alone = 0;
          for (int64_t other : pat.row(j))
            alone += colour[std::size_t(other)] == colour[std::size_t(i)];
          if (alone != 1) {
            fail<ValueError>("sparse_hessian", "entry (", i, ", ", j,
                             ") cannot be recovered: the colouring is not a star colouring");
          }
          recovery_.push_back(colour[std::size_t(i)] * n + j);
          break;
        }
      }
    }
  }
  recovery_positions_ = from_vector(recovery_, {int64_t(recovery_.size())});
  const int64_t len = int64_t(colour.size());
  std::vector<double> s(static_cast<std::size_t>(colouring_.count * len), 0.0);
  for (int64_t j = 0; j < len; ++j) {
    if (colour[std::size_t(j)] >= 0) s[std::size_t(colour[std::size_t(j)] * len + j)] = 1.0;
  }
  seeds_ = from_vector(s, {colouring_.count, len});
}

}  // namespace strata
