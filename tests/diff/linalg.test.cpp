// SPDX-License-Identifier: MIT
// Tests for diff/linalg.hpp on plain st::Tensor: matmul (1-D operands, broadcast
// batch dims, promotion, strided operands), dot, one_hot, eye, tril and triu, against
// naive f64 loops (tests/support/diff_ref.hpp).
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

TEST_CASE("matmul and dot", "[diff]") {
  auto matmul_ref = [](const Vec& x, const Vec& y, int64_t m, int64_t k, int64_t n) {
    Vec out(std::size_t(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t p = 0; p < k; ++p)
          out[std::size_t(i * n + j)] += x[std::size_t(i * k + p)] * y[std::size_t(p * n + j)];
      }
    }
    return out;
  };
  const Vec a = random_values(12, 41), b = random_values(20, 42), u = random_values(4, 43),
            w = random_values(4, 44), r = random_values(3, 45);
  const st::Tensor ta = tensor(a, {3, 4}), tb = tensor(b, {4, 5}), tu = tensor(u, {4}),
                   tw = tensor(w, {4}), tr = tensor(r, {3});
  SECTION("matrix x matrix") {
    require_values(st::matmul(ta, tb), {3, 5}, matmul_ref(a, b, 3, 4, 5));
    require_same(ta.matmul(tb), st::matmul(ta, tb));
  }
  SECTION("1-D operands") {
    double uw = 0;
    for (std::size_t i = 0; i < 4; ++i) uw += u[i] * w[i];
    require_values(st::matmul(tu, tw), {}, {uw});
    require_values(st::dot(tu, tw), {}, {uw});
    require_values(tu.dot(tw), {}, {uw});
    require_values(st::matmul(ta, tu), {3}, matmul_ref(a, u, 3, 4, 1));
    require_values(st::matmul(tr, ta), {4}, matmul_ref(r, a, 1, 3, 4));
    require_values(tr.matmul(ta), {4}, matmul_ref(r, a, 1, 3, 4));
  }
  SECTION("batch dims broadcast") {
    // [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2].
    const Vec x = random_values(24, 46), y = random_values(40, 47);
    Vec expected;
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 5; ++j) {
        const Vec xi(x.begin() + std::ptrdiff_t(i * 12), x.begin() + std::ptrdiff_t(i * 12 + 12));
        const Vec yj(y.begin() + std::ptrdiff_t(j * 8), y.begin() + std::ptrdiff_t(j * 8 + 8));
        const Vec p = matmul_ref(xi, yj, 3, 4, 2);
        expected.insert(expected.end(), p.begin(), p.end());
      }
    }
    require_values(st::matmul(tensor(x, {2, 1, 3, 4}), tensor(y, {5, 4, 2})), {2, 5, 3, 2},
                   expected);
    // A vector with a batch of matrices: [4] x [2, 4, 3] -> [2, 3].
    const Vec z = random_values(24, 48);
    Vec ez;
    for (std::size_t i = 0; i < 2; ++i) {
      const Vec zi(z.begin() + std::ptrdiff_t(i * 12), z.begin() + std::ptrdiff_t(i * 12 + 12));
      const Vec p = matmul_ref(u, zi, 1, 4, 3);
      ez.insert(ez.end(), p.begin(), p.end());
    }
    require_values(st::matmul(tu, tensor(z, {2, 4, 3})), {2, 3}, ez);
    // A batch of matrices with a vector: [2, 3, 4] x [4] -> [2, 3].
    Vec ez2;
    for (std::size_t i = 0; i < 2; ++i) {
      const Vec zi(z.begin() + std::ptrdiff_t(i * 12), z.begin() + std::ptrdiff_t(i * 12 + 12));
      const Vec p = matmul_ref(zi, u, 3, 4, 1);
      ez2.insert(ez2.end(), p.begin(), p.end());
    }
    require_values(st::matmul(tensor(z, {2, 3, 4}), tu), {2, 3}, ez2);
  }
  SECTION("dtype promotion and transposed operands") {
    const st::Tensor f = st::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
    require_values(st::matmul(ta, f), {3}, matmul_ref(a, {1, 2, 3, 4}, 3, 4, 1), 1e-12, st::f64);
    const st::Tensor at = st::transpose(tensor(a, {4, 3}), 0, 1);  // [3, 4], strided
    Vec a_t(12);
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t k = 0; k < 4; ++k) a_t[i * 4 + k] = a[k * 3 + i];
    }
    require_values(st::matmul(at, tb), {3, 5}, matmul_ref(a_t, b, 3, 4, 5));
  }
}

TEST_CASE("one_hot, eye, tril and triu", "[diff]") {
  SECTION("one_hot") {
    const st::Tensor idx = st::from_vector(std::vector<int64_t>{2, 0, 3}, {3});
    require_values(st::one_hot(idx, 4), {3, 4}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}, 0, st::f32);
    const st::Tensor idx2 = st::from_vector(std::vector<int32_t>{1, 0, 1, 1}, {2, 2});
    require_values(st::one_hot(idx2, 2, st::f64), {2, 2, 2}, {0, 1, 1, 0, 0, 1, 0, 1}, 0);
  }
  SECTION("eye") {
    require_values(st::eye(3, st::f64), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, 0);
    require_values(st::eye(2), {2, 2}, {1, 0, 0, 1}, 0, st::f32);
  }
  SECTION("tril and triu with offsets") {
    const Vec v = random_values(12, 51);
    const st::Tensor m = tensor(v, {3, 4});
    for (int64_t k : {-2, -1, 0, 1, 2, 5}) {
      INFO("k = " << k);
      Vec lower(12), upper(12);
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          const std::size_t at = std::size_t(i * 4 + j);
          lower[at] = j - i <= k ? v[at] : 0.0;
          upper[at] = j - i >= k ? v[at] : 0.0;
        }
      }
      require_values(st::tril(m, k), {3, 4}, lower, 0);
      require_values(st::triu(m, k), {3, 4}, upper, 0);
    }
    require_values(st::tril(m), {3, 4}, {v[0], 0, 0, 0, v[4], v[5], 0, 0, v[8], v[9], v[10], 0}, 0);
    // Batched: each matrix of [2, 2, 2] separately.
    const st::Tensor batch = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
    require_values(st::triu(batch), {2, 2, 2}, {1, 2, 0, 4, 5, 6, 0, 8}, 0);
    require_values(st::tril(batch, -1), {2, 2, 2}, {0, 0, 3, 0, 0, 0, 7, 0}, 0);
  }
}
