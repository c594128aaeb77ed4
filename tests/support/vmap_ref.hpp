// SPDX-License-Identifier: MIT
#pragma once
/// The references of the st::vmap tests (tests/ad/vmap*.test.cpp): a loop over
/// examples on plain tensors, stacked, and central finite differences in f64.
/// Nothing here calls st::vmap.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <strata.hpp>
#include <string>
#include <vector>

namespace strata::testing {

/// Example i of x along `axis` (x itself when axis is empty: not mapped).
inline Tensor example(const Tensor& x, std::optional<int64_t> axis, int64_t i) {
  if (!axis) return x;
  const int64_t a = *axis < 0 ? *axis + x.ndim() : *axis;
  std::vector<Index> spec;
  for (int64_t d = 0; d < a; ++d) spec.emplace_back(all);
  spec.emplace_back(i);
  return x.ix(spec);
}

/// ys stacked along `axis` (the loop's result, as vmap's out_axes puts it).
inline Tensor stacked(const std::vector<Tensor>& ys, int64_t axis = 0) { return stack(ys, axis); }

/// Requires equal shapes and values within a relative `tol` (f64 references).
inline void require_close(const Tensor& got, const Tensor& want, double tol = 1e-10,
                          const std::string& what = "") {
  INFO(what << ": got shape " << got.shape() << ", want " << want.shape());
  REQUIRE(got.shape() == want.shape());
  const auto g = got.to(f64).to_vector<double>(), w = want.to(f64).to_vector<double>();
  for (std::size_t k = 0; k < w.size(); ++k) {
    INFO(what << ": element " << k << " got " << g[k] << " want " << w[k]);
    if (std::isnan(w[k])) {
      REQUIRE(std::isnan(g[k]));
    } else {
      REQUIRE(std::abs(g[k] - w[k]) <= tol * (1 + std::abs(w[k])));
    }
  }
}

/// d f / d x by central differences in f64, f a function of one tensor returning one tensor:
/// shape f(x).shape() ++ x.shape() (a Jacobian; the gradient for a 0-d f).
template <class F>
Tensor fd_jacobian(F f, const Tensor& x, double eps = 1e-6) {
  const std::vector<double> xv = x.to_vector<double>();
  const Tensor y0 = f(x);
  const int64_t n = int64_t(xv.size()), m = y0.numel();
  std::vector<double> jac(std::size_t(m * n));
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> hi = xv, lo = xv;
    hi[std::size_t(j)] += eps;
    lo[std::size_t(j)] -= eps;
    const auto yh = f(from_vector(hi, x.shape())).template to_vector<double>();
    const auto yl = f(from_vector(lo, x.shape())).template to_vector<double>();
    for (int64_t i = 0; i < m; ++i) {
      jac[std::size_t(i * n + j)] = (yh[std::size_t(i)] - yl[std::size_t(i)]) / (2 * eps);
    }
  }
  Shape s = y0.shape();
  for (int64_t d : x.shape()) s.push_back(d);
  return from_vector(jac, s);
}

}  // namespace strata::testing
