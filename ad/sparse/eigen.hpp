// SPDX-License-Identifier: MIT
#pragma once
/// st::to_eigen: a SparseMatrix (ad/sparse/pattern.hpp) copied into an Eigen::SparseMatrix,
/// for Eigen's sparse solvers (SimplicialLDLT, SparseLU, ConjugateGradient). Not included by
/// <strata.hpp>: a program that includes this header needs Eigen 3.3 or later on its include
/// path (find_package(Eigen3) and Eigen3::Eigen in CMake).
#include <Eigen/SparseCore>
#include <cstdint>
#include <vector>

#include "ad/sparse/pattern.hpp"

namespace strata {

/// A copy of m as a column-major Eigen::SparseMatrix<Scalar> (values converted to Scalar,
/// copied to the host from any device), compressed. Example:
/// `Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(st::to_eigen(H));`.
template <class Scalar = double>
Eigen::SparseMatrix<Scalar> to_eigen(const SparseMatrix& m) {
  const SparsityPattern& p = m.pattern();
  const std::vector<Scalar> values = m.values().to(Device::cpu()).template to_vector<Scalar>();
  // The CSR arrays are a row-major Eigen matrix as they stand; assigning it to a column-major
  // one transposes the storage in one pass.
  const Eigen::Map<const Eigen::SparseMatrix<Scalar, Eigen::RowMajor, int64_t>> csr(
      p.rows(), p.cols(), p.nnz(), p.crow_indices().data(), p.col_indices().data(), values.data());
  Eigen::SparseMatrix<Scalar> out = csr;
  out.makeCompressed();
  return out;
}

}  // namespace strata
