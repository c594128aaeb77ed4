// SPDX-License-Identifier: MIT
#pragma once
/// check_grads: JAX's check_grads(f, args, order, modes) for strata.
///
/// f is a generic callable taking N tensors (f64 st::Tensor at the top level)
/// and returning one tensor of any shape. At the given points, along random
/// directions from fixed seeds, every AD derivative is compared with a
/// central finite difference computed in f64, the five-point stencil
///
///   fd = (8 (f(x + eps v) - f(x - eps v)) - (f(x + 2 eps v) - f(x - 2 eps v))) / (12 eps)
///
///   forward:  jvp(f, x, v).second              vs  fd
///   reverse:  <v, vjp(f, x).pullback(u)>       vs  <u, fd>
///
/// whose truncation error, eps^4 |f^(5)| / 30, stays far below its rounding
/// error, about 1e-16 |f| / eps = 1e-11 |f|, even for steep functions (the
/// two-point difference's eps^2 |f^(3)| / 6 does not).
/// All arguments are perturbed together (one direction per argument). For
/// order k > 1 the same checks run, recursively with every mode, on the
/// derived functions x -> jvp(f, x, v).second and x -> vjp(f, x).pullback(u)
/// (the gradients of several arguments flattened and concatenated), so the
/// AD of order k runs through nested dual types (Forward<Reverse<Tensor>>,
/// Reverse<Reverse<Reverse<Tensor>>>, ...), while the finite differences only
/// ever differentiate, numerically, an AD derivative one order lower.
///
/// Errors are relative with an absolute floor: forward max_i |ad_i - fd_i| /
/// (1 + |fd_i|); reverse |ad - fd| / (1 + sum_i |u_i fd_i|) (the sum guards
/// against cancellation in the inner product). The floor is the scale of the
/// values the finite differences subtract: where a derivative is 0, f's
/// rounding error (1e-16 times its intermediate values, not its result) over
/// eps is all they see. Each error is divided by the tolerance of its order, a
/// result above 1 being a mismatch: 1e-5 at order 1, and 1e-6 at orders 2 and
/// 3, where the finite differences, one stencil over an AD derivative computed
/// to rounding, are as accurate as at order 1 (1e-10 and better on the suite's
/// functions). The primal values returned by jvp and vjp are compared with f(x) too.
///
///   check_grads<3>([](const auto& x) { return st::tanh(x) * x; }, {x});          // every mode
///   check_grads<2>([](const auto& a, const auto& b) { return st::matmul(a, b); }, {a, b},
///                  Modes::rev);
///   GradCheckResult r = check_grads_error<1>(f, {x});   // never fails; r.worst, r.report
///
/// The order is a template argument because f is instantiated at every dual-type stack of
/// depth <= order (so it must be generic): 3, 7 or 15 stacks for orders 1, 2 and 3, which
/// is most of a test file's compile time. The checks run over those type-erased
/// instantiations: the recursion costs no extra template instantiation per tested function
/// (the levels and the type-erased tables: support/check_grads_levels.hpp).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iomanip>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/check_grads_levels.hpp"

namespace strata::testing {

/// Which AD modes check_grads runs (at every order).
enum class Modes : unsigned { fwd = 1, rev = 2, both = 3 };

struct GradCheckOptions {
  double eps = 1e-5;         ///< finite-difference step
  double tol = 1e-5;         ///< relative tolerance of first-order checks
  double tol_higher = 1e-6;  ///< relative tolerance of second- and third-order checks
  uint64_t seed = 20240601;  ///< first seed of the random directions
};

struct GradCheckResult {
  double worst = 0;    ///< the largest error / tolerance over every check (> 1: mismatch)
  int checks = 0;      ///< how many comparisons ran (derivative vs FD, and primal vs f(x))
  std::string report;  ///< one line per check
  bool ok() const { return checks > 0 && worst <= 1; }
};

namespace detail_cg {

/// jvp of the function at level Forward<U>: directly for one argument, else through
/// a std::array tree.
template <class U, std::size_t N>
std::pair<U, U> jvp_n(const Table<N>& h, const std::array<U, N>& xs, const std::array<U, N>& vs) {
  const Fn<Forward<U>, N>& g = level<Forward<U>>(h);
  if constexpr (N == 1) {
    auto [y, dy] = strata::jvp(
        [&g](const Forward<U>& x) { return g(std::array<Forward<U>, 1>{x}); }, xs[0], vs[0]);
    return {y, dy};
  } else {
    auto [y, dy] = strata::jvp([&g](const std::array<Forward<U>, N>& a) { return g(a); }, xs, vs);
    return {y, dy};
  }
}

/// A pullback's result (one value or a tuple) as an array.
template <class U, std::size_t N, class G>
std::array<U, N> as_array(const G& g) {
  if constexpr (N == 1) {
    return std::array<U, N>{g};
  } else {
    return std::apply([](const auto&... e) { return std::array<U, N>{e...}; }, g);
  }
}

/// (y, pullback(u)) of the function at level Reverse<U>, through the variadic vjp.
template <class U, std::size_t N>
std::pair<U, std::array<U, N>> vjp_n(const Table<N>& h, const std::array<U, N>& xs, const U& u) {
  const Fn<Reverse<U>, N>& g = level<Reverse<U>>(h);
  auto call = [&g](const auto&... x) { return g(std::array<Reverse<U>, N>{x...}); };
  auto [y, pullback] = std::apply([&](const auto&... x) { return strata::vjp(call, x...); }, xs);
  return {y, as_array<U, N>(pullback(u))};
}

/// x -> jvp(h, x, v).second, with v constant.
template <std::size_t N>
TablePtr<N> jvp_of(const TablePtr<N>& h, const Args<N>& vs) {
  auto t = std::make_shared<Table<N>>();
  Table<N>::each([&](auto id) {
    using U = typename decltype(id)::type;
    if constexpr (depth<U>::value < 3) {
      t->template at<U>() = [h, vs](const std::array<U, N>& xs) -> U {
        return jvp_n<U, N>(*h, xs, lift_all<U>(vs)).second;
      };
    }
  });
  return t;
}

/// x -> vjp(h, x).pullback(u), with u constant; several gradients flattened and concatenated.
template <std::size_t N>
TablePtr<N> vjp_of(const TablePtr<N>& h, const Tensor& u) {
  auto t = std::make_shared<Table<N>>();
  Table<N>::each([&](auto id) {
    using U = typename decltype(id)::type;
    if constexpr (depth<U>::value < 3) {
      t->template at<U>() = [h, u](const std::array<U, N>& xs) -> U {
        const std::array<U, N> gs = vjp_n<U, N>(*h, xs, Prims<U>::constant(u)).second;
        if constexpr (N == 1) {
          return gs[0];
        } else {
          std::vector<U> flat;
          for (const U& g : gs) flat.push_back(strata::reshape(g, {-1}));
          return strata::concat(flat, 0);
        }
      };
    }
  });
  return t;
}

// --- comparing ---------------------------------------------------------------------

inline std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? "," : "") << s[i];
  os << ']';
  return os.str();
}

inline std::string head(const std::vector<double>& v) {
  std::ostringstream os;
  os << std::setprecision(8) << '[';
  for (std::size_t i = 0; i < v.size() && i < 6; ++i) os << (i ? ", " : "") << v[i];
  if (v.size() > 6) os << ", ...";
  os << ']';
  return os.str();
}

/// One comparison's outcome, folded into the result.
inline void record(GradCheckResult& r, int order, const std::string& what, double err, double tol,
                   const std::string& detail) {
  const double ratio = std::isfinite(err) ? err / tol : INFINITY;
  r.worst = std::max(r.worst, ratio);
  ++r.checks;
  std::ostringstream os;
  os << (ratio > 1 ? "MISMATCH " : "ok       ") << "order " << order << ' ' << what << ": error "
     << std::setprecision(3) << err << " (tolerance " << tol << ")";
  if (!detail.empty()) os << "\n    " << detail;
  r.report += os.str() + "\n";
}

/// The checks of one order on h (named `name`), then the next orders on its derivatives.
template <std::size_t N>
void check_level(const TablePtr<N>& h, const Args<N>& xs, int depth_now, int order, Modes modes,
                 const GradCheckOptions& o, const std::string& name, uint64_t& seed,
                 GradCheckResult& r) {
  const double tol = depth_now == 1 ? o.tol : o.tol_higher;
  const Fn<Tensor, N>& plain_h = level<Tensor>(*h);
  const Tensor y0 = plain_h(xs);
  const std::vector<double> yv = values(y0);

  Args<N> vs, plus, minus, plus2, minus2;
  for (std::size_t i = 0; i < N; ++i) {
    vs[i] = randn(xs[i].shape(), seed++, xs[i].dtype());
    plus[i] = xs[i] + vs[i] * o.eps;
    minus[i] = xs[i] - vs[i] * o.eps;
    plus2[i] = xs[i] + vs[i] * (2 * o.eps);
    minus2[i] = xs[i] - vs[i] * (2 * o.eps);
  }
  const std::vector<double> yp = values(plain_h(plus)), ym = values(plain_h(minus));
  const std::vector<double> yp2 = values(plain_h(plus2)), ym2 = values(plain_h(minus2));
  std::vector<double> fd(yv.size());
  for (std::size_t i = 0; i < fd.size(); ++i) {
    fd[i] = (8 * (yp[i] - ym[i]) - (yp2[i] - ym2[i])) / (12 * o.eps);
  }

  auto primal_error = [&](const Tensor& y) {
    if (y.shape() != y0.shape()) return double(INFINITY);
    const std::vector<double> a = values(y);
    double e = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      e = std::max(e, std::abs(a[i] - yv[i]) / (1 + std::abs(yv[i])));
    }
    return e;
  };

  const unsigned m = static_cast<unsigned>(modes);
  if (m & unsigned(Modes::fwd)) {
    auto [y, dy] = jvp_n<Tensor, N>(*h, xs, vs);
    const std::string what = "jvp of " + name;
    record(r, depth_now, what + " (primal)", primal_error(y), 1e-12, "");
    double err = 0;
    std::vector<double> ad;
    if (dy.shape() != y0.shape()) {
      err = INFINITY;
    } else {
      ad = values(dy);
      for (std::size_t i = 0; i < ad.size(); ++i) {
        err = std::max(err, std::abs(ad[i] - fd[i]) / (1 + std::abs(fd[i])));
      }
    }
    record(r, depth_now, what, err, tol,
           "AD " + shape_str(dy.shape()) + " " + head(ad) + "  FD " + shape_str(y0.shape()) + " " +
               head(fd));
  }

  const Tensor u = randn(y0.shape(), seed++, f64).to(y0.dtype());
  if (m & unsigned(Modes::rev)) {
    auto [y, cts] = vjp_n<Tensor, N>(*h, xs, u);
    const std::string what = "vjp of " + name;
    record(r, depth_now, what + " (primal)", primal_error(y), 1e-12, "");
    double ad = 0;
    std::string shapes;
    for (std::size_t i = 0; i < N; ++i) {
      if (cts[i].shape() != xs[i].shape()) {
        ad = INFINITY;
        shapes += "  cotangent " + std::to_string(i) + " has shape " + shape_str(cts[i].shape()) +
                  ", its argument " + shape_str(xs[i].shape());
      } else {
        ad += dot(values(vs[i]), values(cts[i]));
      }
    }
    const std::vector<double> uv = values(u);
    const double num = dot(uv, fd);
    double scale = 1;
    for (std::size_t i = 0; i < fd.size(); ++i) scale += std::abs(uv[i] * fd[i]);
    std::ostringstream detail;
    detail << std::setprecision(10) << "<v, pullback(u)> = " << ad << "  <u, FD> = " << num
           << shapes;
    record(r, depth_now, what, std::abs(ad - num) / scale, tol, detail.str());
  }

  if (order > 1) {
    if (m & unsigned(Modes::fwd)) {
      check_level<N>(jvp_of<N>(h, vs), xs, depth_now + 1, order - 1, modes, o, "jvp(" + name + ")",
                     seed, r);
    }
    if (m & unsigned(Modes::rev)) {
      check_level<N>(vjp_of<N>(h, u), xs, depth_now + 1, order - 1, modes, o, "vjp(" + name + ")",
                     seed, r);
    }
  }
}

// The per-argument-count machinery (the derived functions at every level and
// the checks) is most of what a test file using check_grads compiles: it is
// compiled once, in tests/support/check_grads.cpp, for 1 to 3 arguments; a test
// file instantiates only its own functions at each level (erase).
extern template void check_level<1>(const TablePtr<1>&, const Args<1>&, int, int, Modes,
                                    const GradCheckOptions&, const std::string&, uint64_t&,
                                    GradCheckResult&);
extern template void check_level<2>(const TablePtr<2>&, const Args<2>&, int, int, Modes,
                                    const GradCheckOptions&, const std::string&, uint64_t&,
                                    GradCheckResult&);
extern template void check_level<3>(const TablePtr<3>&, const Args<3>&, int, int, Modes,
                                    const GradCheckOptions&, const std::string&, uint64_t&,
                                    GradCheckResult&);

}  // namespace detail_cg

/// Runs every check of orders 1 to Order (1, 2 or 3) and returns the worst error (as a
/// multiple of its tolerance) and a report; never fails a test by itself. args are f64 (or
/// f32) tensors.
template <int Order, class F, std::size_t N>
GradCheckResult check_grads_error(const F& f, const Tensor (&args)[N], Modes modes = Modes::both,
                                  const GradCheckOptions& o = {}) {
  static_assert(Order >= 1 && Order <= 3, "check_grads: the order must be 1, 2 or 3");
  GradCheckResult r;
  detail_cg::Args<N> xs;
  for (std::size_t i = 0; i < N; ++i) xs[i] = args[i];
  uint64_t seed = o.seed;
  try {
    detail_cg::check_level<N>(detail_cg::erase<N, Order>(f), xs, 1, Order, modes, o, "f", seed, r);
  } catch (const std::exception& e) {
    r.worst = INFINITY;
    r.report += std::string("exception: ") + e.what() + "\n";
  }
  return r;
}

/// check_grads_error inside a Catch2 test: one CHECK, with the report on failure.
template <int Order, class F, std::size_t N>
void check_grads(const F& f, const Tensor (&args)[N], Modes modes = Modes::both,
                 const GradCheckOptions& o = {}) {
  const GradCheckResult r = check_grads_error<Order>(f, args, modes, o);
  INFO("check_grads (order " << Order << ", " << r.checks << " checks):\n" << r.report);
  CHECK(r.ok());
}

}  // namespace strata::testing
