// SPDX-License-Identifier: MIT
// SparsityPattern and SparseMatrix (ad/sparse/pattern.hpp).
#include "ad/sparse/pattern.hpp"

#include <algorithm>

#include "diff/ops.hpp"

namespace strata {

using detail::fail;

SparsityPattern::SparsityPattern(int64_t rows, int64_t cols, std::vector<int64_t> crow_indices,
                                 std::vector<int64_t> col_indices)
    : rows_(rows), cols_(cols), crow_(std::move(crow_indices)), col_(std::move(col_indices)) {
  constexpr std::string_view op = "SparsityPattern";
  if (rows < 0 || cols < 0) fail<ValueError>(op, "negative shape ", rows, " x ", cols);
  if (int64_t(crow_.size()) != rows + 1) {
    fail<ValueError>(op, "crow_indices has ", crow_.size(),
                     " entries, needs rows + 1 = ", rows + 1);
  }
  if (crow_.front() != 0 || crow_.back() != int64_t(col_.size())) {
    fail<ValueError>(op, "crow_indices runs from ", crow_.front(), " to ", crow_.back(),
                     ", needs 0 to the number of column indices (", col_.size(), ")");
  }
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t b = crow_[std::size_t(i)], e = crow_[std::size_t(i) + 1];
    if (e < b) fail<ValueError>(op, "crow_indices decreases at row ", i);
    for (int64_t k = b; k < e; ++k) {
      const int64_t j = col_[std::size_t(k)];
      if (j < 0 || j >= cols) {
        fail<ValueError>(op, "row ", i, " has column ", j, ", outside [0, ", cols, ")");
      }
      if (k > b && j <= col_[std::size_t(k) - 1]) {
        fail<ValueError>(op, "row ", i, "'s columns are not increasing (", col_[std::size_t(k) - 1],
                         " then ", j, ")");
      }
    }
  }
}

bool SparsityPattern::contains(int64_t i, int64_t j) const {
  if (i < 0 || i >= rows_) return false;
  const std::span<const int64_t> r = row(i);
  return std::binary_search(r.begin(), r.end(), j);
}

SparsityPattern SparsityPattern::transposed() const {
  std::vector<int64_t> crow(static_cast<std::size_t>(cols_) + 1, 0), col(col_.size());
  for (int64_t j : col_) ++crow[std::size_t(j) + 1];
  for (std::size_t j = 0; j < std::size_t(cols_); ++j) crow[j + 1] += crow[j];
  std::vector<int64_t> fill(crow.begin(), crow.end() - 1);
  for (int64_t i = 0; i < rows_; ++i) {
    for (int64_t j : row(i)) col[std::size_t(fill[std::size_t(j)]++)] = i;
  }
  return SparsityPattern(cols_, rows_, std::move(crow), std::move(col));
}

bool SparsityPattern::symmetric() const { return rows_ == cols_ && transposed() == *this; }

/// Each nonzero's flat position row * cols + col, as an i64 tensor on `device`.
static Tensor flat_positions(const SparsityPattern& p, Device device) {
  std::vector<int64_t> flat(static_cast<std::size_t>(p.nnz()));
  for (int64_t i = 0, k = 0; i < p.rows(); ++i) {
    for (int64_t j : p.row(i)) flat[std::size_t(k++)] = i * p.cols() + j;
  }
  return from_vector(flat).to(device);
}

Tensor SparsityPattern::to_dense() const {
  std::vector<int32_t> dense(static_cast<std::size_t>(checked_numel({rows_, cols_}, "to_dense")),
                             0);
  for (int64_t i = 0; i < rows_; ++i) {
    for (int64_t j : row(i)) dense[std::size_t(i * cols_ + j)] = 1;
  }
  return from_vector(dense, {rows_, cols_}) != 0;
}

SparseMatrix::SparseMatrix(std::shared_ptr<const SparsityPattern> pattern, Tensor values)
    : pattern_(std::move(pattern)), values_(std::move(values)) {
  if (!pattern_) fail<ValueError>("SparseMatrix", "null pattern");
  if (!values_.defined())
    fail<ValueError>("SparseMatrix", "undefined values (default-constructed)");
  if (values_.shape() != Shape{pattern_->nnz()}) {
    fail<ShapeError>("SparseMatrix", "values have shape ", values_.shape(), ", the pattern needs [",
                     pattern_->nnz(), "]");
  }
  if (!is_floating(values_.dtype())) {
    fail<DTypeError>("SparseMatrix", "values have dtype ", dtype_name(values_.dtype()),
                     ", needs f32 or f64");
  }
}

SparseMatrix::SparseMatrix(const SparsityPattern& pattern, Tensor values)
    : SparseMatrix(std::make_shared<const SparsityPattern>(pattern), std::move(values)) {}

Tensor SparseMatrix::crow_indices() const { return from_vector(pattern_->crow_indices()); }

Tensor SparseMatrix::col_indices() const { return from_vector(pattern_->col_indices()); }

Tensor SparseMatrix::to_dense() const {
  const Tensor flat = zeros({rows() * cols()}, dtype(), device());
  return reshape(Prims<Tensor>::index_add(flat, 0, flat_positions(*pattern_, device()), values_),
                 {rows(), cols()});
}

}  // namespace strata
