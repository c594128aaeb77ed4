// SPDX-License-Identifier: MIT
#pragma once
/// SparsePlan: a sparsity pattern with its colouring and the positions that read each entry
/// back from the compressed product: everything st::sparse_jacfwd, st::sparse_jacrev and
/// st::sparse_hessian need besides f and x, computed once and reused at every x (a Newton
/// iteration traces f once, then evaluates one batched pass per step).
#include <cstdint>
#include <memory>
#include <vector>

#include "ad/sparse/colouring.hpp"
#include "diff/tensor.hpp"

namespace strata {

/// A reusable plan for st::sparse_jacfwd, st::sparse_jacrev or st::sparse_hessian: the
/// pattern, its colouring and the recovery positions. Build it from f
/// (`st::sparse_hessian_plan(f, x)`) or from a pattern you know (`SparsePlan::hessian(p)`).
/// Example: `auto plan = st::sparse_hessian_plan(f, x);` then, at each step,
/// `st::SparseMatrix H = st::sparse_hessian(f, x, plan);`.
class SparsePlan {
 public:
  /// Which derivative the plan evaluates.
  enum class Mode {
    jacfwd,  ///< Jacobian, columns coloured, one batched jvp pass
    jacrev,  ///< Jacobian, rows coloured, one batched vjp pass
    hessian  ///< symmetric Hessian, star colouring, one batched hvp pass
  };

  /// A plan for st::sparse_jacfwd: p's columns coloured (colour_columns).
  static SparsePlan jacfwd(SparsityPattern p);
  /// A plan for st::sparse_jacrev: p's rows coloured (colour_rows).
  static SparsePlan jacrev(SparsityPattern p);
  /// A plan for st::sparse_hessian: p star-coloured (ValueError unless square and symmetric).
  static SparsePlan hessian(SparsityPattern p);

  /// Which derivative.
  Mode mode() const { return mode_; }
  /// The pattern the results have.
  const SparsityPattern& pattern() const { return *pattern_; }
  /// The pattern, shared with the SparseMatrix results.
  const std::shared_ptr<const SparsityPattern>& shared_pattern() const { return pattern_; }
  /// The colouring: of the columns (jacfwd, hessian) or the rows (jacrev).
  const Colouring& colouring() const { return colouring_; }
  /// The number of colours: the batch of directions one evaluation pushes through f.
  int64_t colours() const { return colouring_.count; }
  /// The seed directions [colours, len] (len: columns, or rows for jacrev) in dtype on device:
  /// row c is the indicator of the colour-c columns (rows). Built once (f64, on the CPU).
  Tensor seeds(DType dtype, Device device) const { return seeds_.to(dtype).to(device); }
  /// For each nonzero, in CSR order, its flat position in the compressed result
  /// [colours, other] (other: rows for jacfwd, columns for jacrev and hessian).
  const std::vector<int64_t>& recovery() const { return recovery_; }
  /// recovery() as an i64 tensor on the CPU, built once.
  const Tensor& recovery_positions() const { return recovery_positions_; }

 private:
  SparsePlan(Mode mode, SparsityPattern p, Colouring c);
  Mode mode_;
  std::shared_ptr<const SparsityPattern> pattern_;
  Colouring colouring_;
  std::vector<int64_t> recovery_;
  Tensor recovery_positions_, seeds_;
};

}  // namespace strata
