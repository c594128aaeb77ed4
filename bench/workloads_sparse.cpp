// SPDX-License-Identifier: MIT
// Sparse-derivative rows of issue 38: sparse_hessian_arrowhead_n1e5 (st::sparse_hessian of an
// arrowhead-with-band function, 4 star colours or fewer, against st::grad of the same function),
// sparse_jacobian_tridiag_n1e6 (st::sparse_jacfwd of a tridiagonal residual, 3 colours,
// against the primal residual alone) and sparse_hessian_arrowhead_n2000 (against the dense
// st::hessian, whose cost grows as n^2 where the sparse one grows as n: the ratio at
// n = 10^4 is this row's ratio times 5). The plans (trace and colouring) are made
// in the setup, as a Newton loop makes them once; their cost is the row's "plan_s" measure.
// sparse_jacobian_tridiag_n1e6_jit is the tridiagonal row under st::jit.
#include <chrono>
#include <memory>
#include <string>

#include "bench/bench.hpp"

namespace bench {
namespace {

/// sum(u_i^2 u_{i+1}^2) + sum(x_i^2 x_last) + sum(cos x): an arrowhead Hessian with a
/// tridiagonal band.
auto arrowhead() {
  return [](const auto& x) {
    const auto u = x.ix(st::slice(0, -1)), v = x.ix(st::slice(1, st::none));
    const auto last = x.ix(st::slice(-1, st::none));
    return st::sum(u * u * v * v) + st::sum(u * u * last) + st::sum(st::cos(x));
  };
}

/// A tridiagonal residual: r_i = x_{i-1} + x_i^2 - x_{i+1} inside, x_i at the ends.
auto tridiagonal() {
  return [](const auto& x) {
    const auto left = x.ix(st::slice(0, -2)), mid = x.ix(st::slice(1, -1)),
               right = x.ix(st::slice(2, st::none));
    return st::pad(left + mid * mid - right, {{1, 1}}) + x;
  };
}

/// The seconds make() takes, once.
template <class Make>
double seconds_of(Make make) {
  const auto t0 = std::chrono::steady_clock::now();
  make();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Workload hessian_row(const std::string& name, int64_t n, bool dense_peer) {
  Workload w{
      name, [n] {
        const st::Tensor x = st::randn({n}, 71, st::f64);
        const auto plan = std::make_shared<st::SparsePlan>(st::sparse_hessian_plan(arrowhead(), x));
        return Body([=] { g_sink = st::sparse_hessian(arrowhead(), x, *plan).values().raw(); });
      }};
  w.measures.push_back({"plan_s", [n] {
                          const st::Tensor x = st::randn({n}, 71, st::f64);
                          return seconds_of([&] { (void)st::sparse_hessian_plan(arrowhead(), x); });
                        }});
  w.measures.push_back(
      {"colours", [n] {
         return double(st::sparse_hessian_plan(arrowhead(), st::randn({n}, 71, st::f64)).colours());
       }});
  if (dense_peer) {
    w.peers.push_back({"dense_hessian", [n]() -> Body {
                         const st::Tensor x = st::randn({n}, 71, st::f64);
                         return [=] { g_sink = st::hessian(arrowhead(), x).raw(); };
                       }});
    w.relative_to = {"dense_hessian"};
  } else {
    w.peers.push_back({"grad", [n]() -> Body {
                         const st::Tensor x = st::randn({n}, 71, st::f64);
                         return [=] { g_sink = st::grad(arrowhead(), x).raw(); };
                       }});
    w.relative_to = {"grad"};
  }
  return w;
}

const Register kSparse(17, [](std::vector<Workload>& w) {
  w.push_back(hessian_row("sparse_hessian_arrowhead_n1e5", 100000, false));
  w.push_back(hessian_row("sparse_hessian_arrowhead_n2000", 2000, true));

  const int64_t n = 1000000;
  Workload jac{
      "sparse_jacobian_tridiag_n1e6", [=] {
        const st::Tensor x = st::randn({n}, 72, st::f64);
        const auto plan =
            std::make_shared<st::SparsePlan>(st::sparse_jacfwd_plan(tridiagonal(), x));
        return Body([=] { g_sink = st::sparse_jacfwd(tridiagonal(), x, *plan).values().raw(); });
      }};
  jac.measures.push_back({"plan_s", [=] {
                            const st::Tensor x = st::randn({n}, 72, st::f64);
                            return seconds_of(
                                [&] { (void)st::sparse_jacfwd_plan(tridiagonal(), x); });
                          }});
  jac.peers.push_back({"primal", [=]() -> Body {
                         const st::Tensor x = st::randn({n}, 72, st::f64);
                         return [=] { g_sink = tridiagonal()(x).raw(); };
                       }});
  jac.relative_to = {"primal"};
  w.push_back(jac);

  // The same Jacobian under st::jit, as a Newton loop would call it: the plan drops the primal
  // (only the tangents are returned) and fuses the tangent chain; against the primal eager and
  // jitted.
  Workload jitted{"sparse_jacobian_tridiag_n1e6_jit", [=] {
                    const st::Tensor x = st::randn({n}, 72, st::f64);
                    const auto plan =
                        std::make_shared<st::SparsePlan>(st::sparse_jacfwd_plan(tridiagonal(), x));
                    auto j = st::jit([plan](const st::Tensor& v) {
                      return st::sparse_jacfwd(tridiagonal(), v, *plan).values();
                    });
                    (void)j(x);
                    return Body([=] { g_sink = j(x).raw(); });
                  }};
  jitted.peers.push_back({"primal", [=]() -> Body {
                            const st::Tensor x = st::randn({n}, 72, st::f64);
                            return [=] { g_sink = tridiagonal()(x).raw(); };
                          }});
  jitted.peers.push_back({"primal_jit", [=]() -> Body {
                            const st::Tensor x = st::randn({n}, 72, st::f64);
                            auto j = st::jit([](const st::Tensor& v) { return tridiagonal()(v); });
                            (void)j(x);
                            return [=] { g_sink = j(x).raw(); };
                          }});
  jitted.relative_to = {"primal", "primal_jit"};
  w.push_back(jitted);
});

}  // namespace
}  // namespace bench
