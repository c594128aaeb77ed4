// SPDX-License-Identifier: MIT
// The Eigen peer: what a user of Eigen 3.4 writes for each raw workload, at
// Eigen's best on this machine: -O3 -march=native (AVX-512 where the CPU has
// it), results in new matrices as a user gets them, two threads (the product
// split by columns, elementwise and sums by rows; Eigen's own GEMM threading
// needs OpenMP, which would be a second thread pool).
//
// Built as its own shared library with hidden symbols, so these -march=native
// Eigen instantiations never mix with the baseline ones inside strata.
#include <Eigen/Core>
#include <cstdint>
#include <thread>

#define PEER_API extern "C" __attribute__((visibility("default")))

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using RowMap = Eigen::Map<const RowMat>;
using ColMap = Eigen::Map<const ColMat>;

// fn(lo, hi) over [0, n) on two threads.
template <class Fn>
void two_threads(int64_t n, Fn fn) {
  std::thread t([&] { fn(n / 2, n); });
  fn(0, n / 2);
  t.join();
}

volatile float g_keep;

}  // namespace

/// c = a * b (bt: b is the transpose of a row-major matrix), n x n, into a new matrix.
PEER_API void peer_eigen_sgemm(const float* a, const float* b, int64_t n, int bt) {
  RowMat c(n, n);
  RowMap A(a, n, n);
  two_threads(n, [&](int64_t lo, int64_t hi) {
    if (bt) {
      c.middleCols(lo, hi - lo).noalias() = A * ColMap(b, n, n).middleCols(lo, hi - lo);
    } else {
      c.middleCols(lo, hi - lo).noalias() = A * RowMap(b, n, n).middleCols(lo, hi - lo);
    }
  });
  g_keep = c(0, 0);
}

/// y = exp(x) into a new row-major matrix; xt: x is stored transposed (column-major).
PEER_API void peer_eigen_exp(const float* x, int64_t rows, int64_t cols, int xt) {
  RowMat y(rows, cols);
  two_threads(rows, [&](int64_t lo, int64_t hi) {
    if (xt) {
      y.middleRows(lo, hi - lo) = ColMap(x, rows, cols).middleRows(lo, hi - lo).array().exp();
    } else {
      y.middleRows(lo, hi - lo) = RowMap(x, rows, cols).middleRows(lo, hi - lo).array().exp();
    }
  });
  g_keep = y(0, 0);
}

/// z = x + y into a new row-major matrix; xt: x is stored transposed.
PEER_API void peer_eigen_add(const float* x, const float* y, int64_t rows, int64_t cols, int xt) {
  RowMat z(rows, cols);
  RowMap Y(y, rows, cols);
  two_threads(rows, [&](int64_t lo, int64_t hi) {
    if (xt) {
      z.middleRows(lo, hi - lo) =
          ColMap(x, rows, cols).middleRows(lo, hi - lo) + Y.middleRows(lo, hi - lo);
    } else {
      z.middleRows(lo, hi - lo) =
          RowMap(x, rows, cols).middleRows(lo, hi - lo) + Y.middleRows(lo, hi - lo);
    }
  });
  g_keep = z(0, 0);
}

/// Sums of a row-major matrix over axis 1 (rows), 0 (columns) or all (-1), into a new vector.
PEER_API void peer_eigen_sum(const float* x, int64_t rows, int64_t cols, int axis) {
  RowMap X(x, rows, cols);
  if (axis == 1) {
    Eigen::VectorXf s(rows);
    two_threads(rows, [&](int64_t lo, int64_t hi) {
      s.segment(lo, hi - lo) = X.middleRows(lo, hi - lo).rowwise().sum();
    });
    g_keep = s(0);
  } else if (axis == 0) {
    Eigen::RowVectorXf s(cols);
    two_threads(cols, [&](int64_t lo, int64_t hi) {
      s.segment(lo, hi - lo) = X.middleCols(lo, hi - lo).colwise().sum();
    });
    g_keep = s(0);
  } else {
    float part[2];
    two_threads(rows, [&](int64_t lo, int64_t hi) {
      part[lo == 0 ? 0 : 1] = X.middleRows(lo, hi - lo).sum();
    });
    g_keep = part[0] + part[1];
  }
}
