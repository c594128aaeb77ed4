// SPDX-License-Identifier: MIT
// The Eigen peer's workloads: inputs built here, the timed bodies in the
// separately compiled bench/peers_eigen.cpp library.
#include "bench/peers.hpp"

#include <random>

extern "C" {
void peer_eigen_sgemm(const float* a, const float* b, int64_t n, int bt);
void peer_eigen_exp(const float* x, int64_t rows, int64_t cols, int xt);
void peer_eigen_add(const float* x, const float* y, int64_t rows, int64_t cols, int xt);
void peer_eigen_sum(const float* x, int64_t rows, int64_t cols, int axis);
}

namespace bench {

std::shared_ptr<std::vector<float>> host_normal(int64_t n, uint64_t seed) {
  auto v = std::make_shared<std::vector<float>>(std::size_t(n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  for (float& x : *v) x = d(rng);
  return v;
}

Peer eigen_matmul(int64_t n, bool bt) {
  return {"eigen", [=]() -> Body {
            auto a = host_normal(n * n, 1), b = host_normal(n * n, 2);
            return [=] { peer_eigen_sgemm(a->data(), b->data(), n, bt); };
          }};
}

Peer eigen_exp(int64_t n, bool transposed) {
  return {"eigen", [=]() -> Body {
            auto x = host_normal(n * n, 3);
            return [=] { peer_eigen_exp(x->data(), n, n, transposed); };
          }};
}

Peer eigen_add(int64_t n, bool transposed) {
  return {"eigen", [=]() -> Body {
            auto x = host_normal(n * n, 4), y = host_normal(n * n, 5);
            return [=] { peer_eigen_add(x->data(), y->data(), n, n, transposed); };
          }};
}

Peer eigen_sum(int64_t n, int axis) {
  return {"eigen", [=]() -> Body {
            auto x = host_normal(n * n, 6);
            return [=] { peer_eigen_sum(x->data(), n, n, axis); };
          }};
}

}  // namespace bench
