// SPDX-License-Identifier: MIT
#pragma once
/// Inputs and checks of the linear-algebra tests: matrices from fixed seeds with the structure
/// an op needs, and the defining identities checked with plain loops over host values (never
/// with the op under test).
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

namespace strata::testing {

/// Symmetric positive-definite f64 matrices [..., n, n] from a seed: G G^T + n I.
inline Tensor spd(const Shape& s, uint64_t seed) {
  const Tensor g = randn(s, seed, f64);
  const int64_t n = s[s.ndim() - 1];
  return matmul(g, transpose(g, -1, -2)) + eye(n, f64) * double(n);
}
/// Symmetric f64 matrices [..., n, n] from a seed (distinct eigenvalues almost surely).
inline Tensor symmetric(const Shape& s, uint64_t seed) {
  const Tensor g = randn(s, seed, f64);
  return g + transpose(g, -1, -2);
}

/// Every element of got within tol of want (same shape), with the position on failure.
inline void require_near(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << " of shape " << got.shape());
    REQUIRE(std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i])));
  }
}

/// a [..., n, k] with row i of each matrix taken from row perm[..., i], by host loops.
inline Tensor permuted_rows(const Tensor& a, const Tensor& perm) {
  const Shape s = a.shape();
  const int64_t n = s[s.ndim() - 2], k = s[s.ndim() - 1];
  const std::vector<double> v = a.to_vector<double>();
  const std::vector<int64_t> p = perm.to_vector<int64_t>();
  std::vector<double> out(v.size());
  for (std::size_t m = 0; m < v.size() / std::size_t(n * k); ++m) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = p[m * std::size_t(n) + std::size_t(i)];
      REQUIRE((from >= 0 && from < n));
      for (int64_t j = 0; j < k; ++j) {
        out[(m * std::size_t(n) + std::size_t(i)) * std::size_t(k) + std::size_t(j)] =
            v[(m * std::size_t(n) + std::size_t(from)) * std::size_t(k) + std::size_t(j)];
      }
    }
  }
  return from_vector(out, s);
}

/// LAPACK's row swaps (row i swapped with pivots[i], in turn) applied to 0..n-1 give perm.
inline void require_pivots_match(const Tensor& pivots, const Tensor& perm) {
  REQUIRE(pivots.shape() == perm.shape());
  const Shape s = perm.shape();
  const int64_t n = s[s.ndim() - 1];
  const std::vector<int64_t> piv = pivots.to_vector<int64_t>(), p = perm.to_vector<int64_t>();
  for (std::size_t m = 0; m < p.size() / std::size_t(n); ++m) {
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[std::size_t(i)] = i;
    for (int64_t i = 0; i < n; ++i) {
      std::swap(order[std::size_t(i)],
                order[std::size_t(piv[m * std::size_t(n) + std::size_t(i)])]);
    }
    for (int64_t i = 0; i < n; ++i)
      CHECK(order[std::size_t(i)] == p[m * std::size_t(n) + std::size_t(i)]);
  }
}

/// Every row along the last axis non-decreasing.
inline void require_ascending(const Tensor& w) {
  const Shape s = w.shape();
  const int64_t n = s[s.ndim() - 1];
  const std::vector<double> v = w.to_vector<double>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (int64_t(i % std::size_t(n)) != 0) CHECK(v[i - 1] <= v[i]);
  }
}

/// q [..., m, k] has orthonormal columns: q^T q = I within 1e-12, by host loops.
inline void require_orthonormal_columns(const Tensor& q) {
  const Shape s = q.shape();
  const int64_t m = s[s.ndim() - 2], k = s[s.ndim() - 1];
  const std::vector<double> v = q.to_vector<double>();
  for (std::size_t b = 0; b < v.size() / std::size_t(m * k); ++b) {
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        double dot = 0;
        for (int64_t r = 0; r < m; ++r) {
          dot += v[(b * std::size_t(m) + std::size_t(r)) * std::size_t(k) + std::size_t(i)] *
                 v[(b * std::size_t(m) + std::size_t(r)) * std::size_t(k) + std::size_t(j)];
        }
        CHECK(std::abs(dot - (i == j ? 1.0 : 0.0)) <= 1e-12);
      }
    }
  }
}

}  // namespace strata::testing
