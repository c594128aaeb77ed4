// SPDX-License-Identifier: MIT
#pragma once
/// SparsityPattern and SparseMatrix: where a Jacobian or Hessian may be nonzero, and its
/// values there, in compressed sparse row (CSR) form, as scipy.sparse.csr_matrix and
/// torch.sparse_csr_tensor store them.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "diff/tensor.hpp"

namespace strata {

/// The positions of a rows x cols matrix's nonzeros in CSR form: row i's columns are
/// col_indices()[crow_indices()[i] .. crow_indices()[i + 1]), increasing. A Jacobian's is
/// out.numel() x in.numel() (both flattened row-major), a Hessian's n x n and symmetric.
/// Example: `st::SparsityPattern p = st::jacobian_sparsity(f, x); p.nnz();`.
class SparsityPattern {
 public:
  /// The empty 0 x 0 pattern.
  SparsityPattern() = default;
  /// The pattern given by its CSR arrays; ValueError unless crow_indices has rows + 1
  /// non-decreasing entries from 0 to col_indices.size() and each row's columns are
  /// increasing and in [0, cols).
  SparsityPattern(int64_t rows, int64_t cols, std::vector<int64_t> crow_indices,
                  std::vector<int64_t> col_indices);

  /// The number of rows.
  int64_t rows() const { return rows_; }
  /// The number of columns.
  int64_t cols() const { return cols_; }
  /// The number of nonzeros.
  int64_t nnz() const { return int64_t(col_.size()); }
  /// Row pointers: rows() + 1 entries, from 0 to nnz().
  const std::vector<int64_t>& crow_indices() const { return crow_; }
  /// Each nonzero's column, row by row.
  const std::vector<int64_t>& col_indices() const { return col_; }
  /// Row i's columns, increasing.
  std::span<const int64_t> row(int64_t i) const {
    return {col_.data() + crow_[std::size_t(i)],
            std::size_t(crow_[std::size_t(i) + 1] - crow_[std::size_t(i)])};
  }
  /// Whether (i, j) is in the pattern.
  bool contains(int64_t i, int64_t j) const;
  /// The cols x rows pattern of the transpose.
  SparsityPattern transposed() const;
  /// Whether the pattern is square and equal to its transpose.
  bool symmetric() const;
  /// A bool [rows, cols] tensor, true at the pattern's positions.
  Tensor to_dense() const;
  /// Same shape and positions.
  bool operator==(const SparsityPattern& other) const = default;

 private:
  int64_t rows_ = 0, cols_ = 0;
  std::vector<int64_t> crow_{0}, col_;
};

/// A sparse matrix in CSR form: a SparsityPattern and one value per nonzero (a tensor of
/// f's dtype and device), what st::sparse_jacfwd, st::sparse_jacrev and st::sparse_hessian
/// return. Copies share the pattern and the values. Example:
/// `st::SparseMatrix H = st::sparse_hessian(f, x); H.to_dense();` (st::to_eigen in
/// ad/sparse/eigen.hpp gives an Eigen::SparseMatrix).
class SparseMatrix {
 public:
  /// `values` [pattern.nnz()] (float) at the pattern's positions; ShapeError or DTypeError
  /// otherwise.
  SparseMatrix(std::shared_ptr<const SparsityPattern> pattern, Tensor values);
  /// The same, copying the pattern.
  SparseMatrix(const SparsityPattern& pattern, Tensor values);

  /// The number of rows.
  int64_t rows() const { return pattern_->rows(); }
  /// The number of columns.
  int64_t cols() const { return pattern_->cols(); }
  /// {rows, cols}.
  Shape shape() const { return {rows(), cols()}; }
  /// The number of stored entries (the pattern's; some may be zero at this point).
  int64_t nnz() const { return pattern_->nnz(); }
  /// Where the entries are.
  const SparsityPattern& pattern() const { return *pattern_; }
  /// The row pointers as an i64 tensor [rows + 1] on the CPU (a copy).
  Tensor crow_indices() const;
  /// The entries' columns as an i64 tensor [nnz] on the CPU (a copy).
  Tensor col_indices() const;
  /// The entries' values [nnz], in CSR order.
  const Tensor& values() const { return values_; }
  /// The values' dtype.
  DType dtype() const { return values_.dtype(); }
  /// The values' device.
  Device device() const { return values_.device(); }
  /// The dense [rows, cols] matrix (zeros off the pattern).
  Tensor to_dense() const;

 private:
  std::shared_ptr<const SparsityPattern> pattern_;
  Tensor values_;
};

}  // namespace strata
