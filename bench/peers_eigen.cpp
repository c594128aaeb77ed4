// SPDX-License-Identifier: MIT
// The Eigen peer: what a user of Eigen 3.4 writes for each raw workload, at
// Eigen's best on this machine: -O3 -march=native (AVX-512 where the CPU has
// it), results in new matrices as a user gets them, two threads (the product
// split by columns, elementwise and sums by rows; Eigen's own GEMM threading
// needs OpenMP, which would be a second thread pool).
//
// Built as its own shared library with hidden symbols, so these -march=native
// Eigen instantiations never mix with the baseline ones inside strata; built a
// second time with -march=haswell (AVX2) for make bench-avx2. strata_bench
// loads the one matching the instruction set in use (bench/peers.cpp).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <cstdint>
#include <thread>
#include <vector>

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

// --- the closed-form Hessian (hessian_f64_n*) -------------------------------------
// f(x) = sum(tanh(W x)^2) + sum(x^2) / 2. With t = tanh(W x):
//   grad f = W^T (2 t (1 - t^2)) + x
//   H      = W^T diag((2 - 6 t^2) (1 - t^2)) W + I
// (d/dz of 2 tanh(z) - 2 tanh(z)^3 is (2 - 6 t^2)(1 - t^2)).

using RowMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The Hessian of f at x for a row-major n x n W, into a new matrix (from
/// n = 128 on two threads, split by columns of H); copied row-major to h
/// unless h is null.
PEER_API void peer_eigen_hessian_tanh(const double* w, const double* x, int64_t n, double* h) {
  const Eigen::Map<const RowMatD> W(w, n, n);
  const Eigen::Map<const Eigen::VectorXd> X(x, n);
  const Eigen::ArrayXd t = (W * X).array().tanh();
  const Eigen::VectorXd d = ((2.0 - 6.0 * t.square()) * (1.0 - t.square())).matrix();
  RowMatD H(n, n);
  auto columns = [&](int64_t lo, int64_t hi) {
    H.middleCols(lo, hi - lo).noalias() =
        W.transpose() * (d.asDiagonal() * W.middleCols(lo, hi - lo));
  };
  // A second thread only where the product outweighs starting one (~50 us).
  if (n >= 128) {
    two_threads(n, columns);
  } else {
    columns(0, n);
  }
  H.diagonal().array() += 1.0;
  if (h) Eigen::Map<RowMatD>(h, n, n) = H;
  g_keep = float(H(0, 0));
}

// --- the MLP training step (mlp_train_step_b128) -----------------------------------
// A hand-written Eigen MLP with manual backpropagation: 784 -> 256 -> 256 -> 10
// ReLU, softmax cross-entropy (mean), in-place SGD, every buffer preallocated,
// one thread (Eigen's GEMM without OpenMP).
namespace {

struct EigenMlp {
  using Row = Eigen::RowVectorXf;
  RowMat W1, W2, W3, X, A1, A2, Z, dZ, dH2, dH1, dW1, dW2, dW3;
  Row b1, b2, b3;
  std::vector<int64_t> y;
  float lr = 0;
};

}  // namespace

/// A network from row-major weights W1 [h, in], W2 [h, h], W3 [c, h] (zero
/// biases), inputs x [batch, in] and labels y [batch]; freed by peer_eigen_mlp_free.
PEER_API void* peer_eigen_mlp_new(const float* w1, const float* w2, const float* w3, const float* x,
                                  const int64_t* y, int64_t batch, int64_t in, int64_t hidden,
                                  int64_t classes, float lr) {
  auto* m = new EigenMlp;
  m->W1 = RowMap(w1, hidden, in);
  m->W2 = RowMap(w2, hidden, hidden);
  m->W3 = RowMap(w3, classes, hidden);
  m->b1 = EigenMlp::Row::Zero(hidden);
  m->b2 = EigenMlp::Row::Zero(hidden);
  m->b3 = EigenMlp::Row::Zero(classes);
  m->X = RowMap(x, batch, in);
  m->y.assign(y, y + batch);
  m->lr = lr;
  return m;
}

PEER_API void peer_eigen_mlp_free(void* net) { delete static_cast<EigenMlp*>(net); }

/// One forward + backward + SGD step.
PEER_API void peer_eigen_mlp_step(void* net) {
  EigenMlp& m = *static_cast<EigenMlp*>(net);
  const int64_t batch = m.X.rows();
  const float inv_b = 1.0f / float(batch);
  m.A1.noalias() = m.X * m.W1.transpose();
  m.A1.rowwise() += m.b1;
  m.A1 = m.A1.cwiseMax(0.0f);
  m.A2.noalias() = m.A1 * m.W2.transpose();
  m.A2.rowwise() += m.b2;
  m.A2 = m.A2.cwiseMax(0.0f);
  m.Z.noalias() = m.A2 * m.W3.transpose();
  m.Z.rowwise() += m.b3;
  // dZ = (softmax(Z) - onehot(y)) / batch; the loss itself is not needed for the update.
  m.dZ = (m.Z.colwise() - m.Z.rowwise().maxCoeff()).array().exp().matrix();
  m.dZ.array().colwise() /= m.dZ.rowwise().sum().array();
  for (int64_t i = 0; i < batch; ++i) m.dZ(i, m.y[std::size_t(i)]) -= 1.0f;
  m.dZ *= inv_b;
  m.dW3.noalias() = m.dZ.transpose() * m.A2;
  m.dH2.noalias() = m.dZ * m.W3;
  m.dH2 = m.dH2.cwiseProduct((m.A2.array() > 0.0f).cast<float>().matrix());
  m.dW2.noalias() = m.dH2.transpose() * m.A1;
  m.dH1.noalias() = m.dH2 * m.W2;
  m.dH1 = m.dH1.cwiseProduct((m.A1.array() > 0.0f).cast<float>().matrix());
  m.dW1.noalias() = m.dH1.transpose() * m.X;
  m.b3 -= m.lr * m.dZ.colwise().sum();
  m.b2 -= m.lr * m.dH2.colwise().sum();
  m.b1 -= m.lr * m.dH1.colwise().sum();
  m.W3 -= m.lr * m.dW3;
  m.W2 -= m.lr * m.dW2;
  m.W1 -= m.lr * m.dW1;
  g_keep = m.W1(0, 0);
}

// --- factorisations (cholesky_f64_n1024, solve_f64_n1024_k64, eigh_f64_n512) -------
// Eigen's decompositions on one thread: their blocked updates use Eigen's GEMM,
// which only OpenMP would thread. Column-major, Eigen's native order (a
// symmetric row-major matrix reads the same either way).

using ColMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;
volatile double g_keep_d;

/// The Cholesky factor of the symmetric positive-definite n x n matrix a (Eigen::LLT).
PEER_API void peer_eigen_cholesky(const double* a, int64_t n) {
  const Eigen::LLT<ColMatD> llt(Eigen::Map<const ColMatD>(a, n, n));
  g_keep_d = llt.matrixLLT()(n - 1, n - 1);
}

/// X = A^-1 B for row-major A (n x n) and B (n x k) by LU with partial pivoting.
PEER_API void peer_eigen_solve(const double* a, const double* b, int64_t n, int64_t k) {
  const Eigen::PartialPivLU<ColMatD> lu(Eigen::Map<const RowMatD>(a, n, n));
  const ColMatD x = lu.solve(Eigen::Map<const RowMatD>(b, n, k));
  g_keep_d = x(n - 1, k - 1);
}

/// The eigenvalues and eigenvectors of the symmetric n x n matrix a.
PEER_API void peer_eigen_eigh(const double* a, int64_t n) {
  const Eigen::SelfAdjointEigenSolver<ColMatD> es(Eigen::Map<const ColMatD>(a, n, n));
  g_keep_d = es.eigenvectors()(n - 1, n - 1);
}
