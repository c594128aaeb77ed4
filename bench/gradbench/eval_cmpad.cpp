// SPDX-License-Identifier: MIT
// GradBench's evals from cmpad: `llsq` (a least-squares objective over a polynomial's
// power table), `ode` (Runge-Kutta on y'_i = x_i y_{i-1}) and `det` (a determinant and
// its gradient). llsq and ode run under st::jit, traced while preparing (timed as
// "prepare", as a JAX tool's compilation), as lstm does: llsq's power table depends on no
// input, so its plan computes it once, at tracing; ode's thousands of small steps replay
// without the per-op dispatch, their elementwise chains fused.
#include <memory>

#include "bench/gradbench/tool.hpp"

namespace gradbench {

void register_llsq(Registry& r) {
  // y(x) = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2, t_i = -1 + 2 i / (n - 1), s_i = sign(t_i).
  // The power table t_i^j is a running product along j.
  auto make = [](const Json& input, bool gradient) {
    const int64_t n = input.at("n").get<int64_t>();
    auto x = std::make_shared<st::Tensor>(vec(input.at("x")));
    auto out = std::make_shared<st::Tensor>();
    auto llsq = [n](const auto& x) {
      const int64_t m = x.shape()[0];
      const st::Tensor t = st::arange(0, double(n), 1, st::f64) * (2.0 / double(n - 1)) - 1.0;
      const st::Tensor powers = st::cumprod(
          st::concat({st::ones({n, 1}, st::f64), t.unsqueeze(1).expand({n, m - 1})}, 1), 1);
      const auto residual = st::sign(t) - st::matmul(powers, x);
      return 0.5 * st::sum(residual * residual);
    };
    auto f = st::jit([=](const st::Tensor& x) { return gradient ? st::grad(llsq, x) : llsq(x); });
    warm(f, *x);
    return Prepared{[=] { *out = f(*x); },
                    [=] { return gradient ? to_json(*out) : Json(number(*out)); }};
  };
  r["llsq"]["primal"] = [make](const Json& input) { return make(input, false); };
  r["llsq"]["gradient"] = [make](const Json& input) { return make(input, true); };
}

void register_ode(Registry& r) {
  // y' = f(y) with f(y)_0 = x_0 and f(y)_i = x_i y_{i-1}, from y = 0 to t = 2 in s steps of
  // classic Runge-Kutta; the gradient is that of the last element of y(2).
  auto make = [](const Json& input, bool gradient) {
    const int64_t steps = input.at("s").get<int64_t>();
    auto x = std::make_shared<st::Tensor>(vec(input.at("x")));
    auto out = std::make_shared<st::Tensor>();
    const st::Tensor first = st::arange(0, double(x->numel())) == int64_t{0};
    auto solve = [steps, first](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      auto f = [&](const T& y) -> T { return x * st::where(first, 1.0, st::roll(y, 1)); };
      const double h = 2.0 / double(steps);
      T y = st::zeros_like(x);
      for (int64_t i = 0; i < steps; ++i) {
        const T k1 = f(y), k2 = f(y + h / 2 * k1), k3 = f(y + h / 2 * k2), k4 = f(y + h * k3);
        y = y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
      }
      return y;
    };
    auto last = [solve](const auto& x) { return solve(x).ix(-1); };
    auto f = st::jit([=](const st::Tensor& x) { return gradient ? st::grad(last, x) : solve(x); });
    warm(f, *x);
    return Prepared{[=] { *out = f(*x); }, [=] { return to_json(*out); }};
  };
  r["ode"]["primal"] = [make](const Json& input) { return make(input, false); };
  r["ode"]["gradient"] = [make](const Json& input) { return make(input, true); };
}

void register_det(Registry& r) {
  // A is given row-major, flattened; the gradient is returned the same way. strata computes
  // the determinant by LU (st::linalg::det), not by the eval's expansion by minors.
  auto make = [](const Json& input, bool gradient) {
    const int64_t ell = input.at("ell").get<int64_t>();
    auto a = std::make_shared<st::Tensor>(vec(input.at("A")).reshape({ell, ell}));
    auto out = std::make_shared<st::Tensor>();
    auto det = [](const auto& a) { return st::linalg::det(a); };
    return Prepared{[=] { *out = gradient ? st::grad(det, *a) : det(*a); },
                    [=] { return gradient ? to_json(out->flatten()) : Json(number(*out)); }};
  };
  r["det"]["primal"] = [make](const Json& input) { return make(input, false); };
  r["det"]["gradient"] = [make](const Json& input) { return make(input, true); };
}

}  // namespace gradbench
