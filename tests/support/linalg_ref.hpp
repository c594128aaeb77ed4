// SPDX-License-Identifier: MIT
#pragma once
/// Test support for the factorisations (tests/raw/linalg_*.test.cpp): batches
/// of matrices with given values laid out in every way a view can lay them out,
/// on the device under test, and their values as Eigen matrices for the
/// references and identities.
#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/naive.hpp"

namespace strata::testing {

/// How the matrices of a [batch..., m, n] test input lie in their storage.
enum class MatLayout {
  contiguous,       ///< row-major, batch after batch
  transposed,       ///< each matrix column-major
  stepped,          ///< every 2nd row and 3rd column of a larger base, 1 element in
  flipped,          ///< rows and columns reversed: negative strides
  broadcast_batch,  ///< one matrix expanded over the batch dims: zero strides
  batch_inner,      ///< the batch dims innermost in memory: [m, n, batch...] permuted
};
inline constexpr MatLayout kMatLayouts[] = {MatLayout::contiguous,      MatLayout::transposed,
                                            MatLayout::stepped,         MatLayout::flipped,
                                            MatLayout::broadcast_batch, MatLayout::batch_inner};
inline std::string mat_layout_name(MatLayout k) {
  constexpr const char* names[] = {"contiguous", "transposed",      "stepped",
                                   "flipped",    "broadcast_batch", "batch_inner"};
  return names[int(k)];
}

/// The layout of `kind` for `shape` (rank >= 2), and the storage elements it spans.
inline Layout mat_layout(const Shape& shape, MatLayout kind, int64_t& storage) {
  const int64_t nd = shape.ndim();
  std::vector<int64_t> order;  // dims from outermost to innermost in memory
  std::vector<int64_t> step(static_cast<std::size_t>(nd), 1);
  for (int64_t d = 0; d < nd; ++d) order.push_back(d);
  if (kind == MatLayout::transposed)
    std::swap(order[std::size_t(nd - 2)], order[std::size_t(nd - 1)]);
  if (kind == MatLayout::batch_inner) std::rotate(order.begin(), order.end() - 2, order.end());
  if (kind == MatLayout::stepped) step[std::size_t(nd - 2)] = 2, step[std::size_t(nd - 1)] = 3;
  Layout l{shape, Strides(std::size_t(nd), 0), kind == MatLayout::stepped ? 1 : 0};
  int64_t stride = 1;
  for (std::size_t i = order.size(); i-- > 0;) {
    const int64_t d = order[i];
    const bool zero = kind == MatLayout::broadcast_batch && d < nd - 2;
    l.strides[std::size_t(d)] = zero ? 0 : stride * step[std::size_t(d)];
    if (!zero) stride *= std::max<int64_t>(shape[std::size_t(d)], 1) * step[std::size_t(d)];
  }
  if (kind == MatLayout::flipped) {
    for (int64_t d = nd - 2; d < nd; ++d) {
      l.offset += (std::max<int64_t>(shape[std::size_t(d)], 1) - 1) * l.strides[std::size_t(d)];
      l.strides[std::size_t(d)] = -l.strides[std::size_t(d)];
    }
  }
  storage = l.offset + stride + 1;
  return l;
}

/// A [batch..., m, n] tensor of dtype on the device under test whose elements, in row-major
/// order, are vals, laid out as kind (for broadcast_batch every matrix of vals must be the
/// first one). The storage outside the view holds 1e30, which no op may read.
inline RawTensor laid_out(const Shape& shape, DType dtype, const std::vector<double>& vals,
                          MatLayout kind) {
  int64_t storage = 0;
  const Layout l = mat_layout(shape, kind, storage);
  std::vector<double> host(static_cast<std::size_t>(storage), 1e30);
  std::size_t k = 0;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t pos = l.offset;
    for (std::size_t d = 0; d < idx.size(); ++d) pos += idx[d] * l.strides[d];
    host[std::size_t(pos)] = vals[k++];
  });
  return make({storage}, dtype, host).view(l);
}

/// count normal values from seed, rounded to f32 for an f32 test (so both sides see one input).
inline std::vector<double> normal_values(int64_t count, uint64_t seed, DType dtype) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double& x : v) x = dtype == DType::f32 ? double(float(normal(rng))) : normal(rng);
  return v;
}

/// vals with every matrix (of `per` elements) replaced by the first: for broadcast_batch.
inline std::vector<double> repeat_first(std::vector<double> vals, int64_t per) {
  for (std::size_t i = std::size_t(per); i < vals.size(); ++i) vals[i] = vals[i % std::size_t(per)];
  return vals;
}

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Matrix b (m x n) of row-major batch values.
inline MatD matrix(const std::vector<double>& vals, int64_t b, int64_t m, int64_t n) {
  MatD out(m, n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) out(i, j) = vals[std::size_t(b * m * n + i * n + j)];
  }
  return out;
}

/// The batch dims the linalg tests put before [m, n]: none, one, two, and empty batches.
inline const std::vector<Shape> kBatches = {{}, {3}, {2, 2}, {0}, {2, 0}};

/// The number of matrices of a [batch..., m, n] shape.
inline int64_t batch_count(const Shape& shape) {
  int64_t c = 1;
  for (int64_t d = 0; d + 2 < shape.ndim(); ++d) c *= shape[std::size_t(d)];
  return c;
}

/// batch ++ dims.
inline Shape shape_of(const Shape& batch, std::initializer_list<int64_t> dims) {
  Shape s = batch;
  for (int64_t d : dims) s.push_back(d);
  return s;
}

/// The tolerance of a check relative to the matrices' scale: f64 1e-10, f32 1e-4, times n.
inline double tolerance(DType dtype, int64_t n) {
  return (dtype == DType::f64 ? 1e-10 : 1e-4) * double(std::max<int64_t>(n, 4));
}

}  // namespace strata::testing
