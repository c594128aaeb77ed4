// SPDX-License-Identifier: MIT
// The checks of one random program (tests/support/program_checks.hpp).
#include "support/program_checks.hpp"

#include <array>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "support/check_grads.hpp"

namespace strata::testing {

namespace {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

/// The largest |got - want| over the elements, relative to 1 + want's largest magnitude
/// (INFINITY for another shape; a NaN or infinity in either must be in both): an error
/// relative to the tensor's size, with the floor of check_grads (the rounding of values
/// that cancel is relative to them, not to their difference).
double mismatch(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape()) return INFINITY;
  const std::vector<double> g = values(got), w = values(want);
  double scale = 1;
  for (double v : w) {
    if (std::isfinite(v)) scale = std::max(scale, 1 + std::abs(v));
  }
  double worst = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i]) || std::isnan(g[i])) {
      if (std::isnan(w[i]) != std::isnan(g[i])) return INFINITY;
    } else if (std::isinf(w[i]) || std::isinf(g[i])) {
      if (g[i] != w[i]) return INFINITY;
    } else {
      worst = std::max(worst, std::abs(g[i] - w[i]) / scale);
    }
  }
  return worst;
}

/// The two gradients (or tangents) of f flattened and joined, as check_grads joins them.
template <class T>
T joined(const T& a, const T& b) {
  return concat({reshape(a, {-1}), reshape(b, {-1})}, 0);
}

/// Records one comparison: err against tol.
void compare(ProgramCheck& c, const std::string& what, double err, double tol) {
  ++c.comparisons;
  if (err <= tol) return;
  c.ok = false;
  std::ostringstream os;
  os << "MISMATCH " << what << ": error " << err << " (tolerance " << tol << ")\n";
  c.report += os.str();
}

/// <u, J v> by jvp against <J^T u, v> by vjp; from order 2, fwd-over-rev against
/// rev-over-fwd Hessian-vector products.
void check_forward_reverse(ProgramCheck& c, const Program& p, const Tensor& x, const Tensor& y,
                           int order, double tol) {
  const ProgramFn f{&p};
  const Tensor vx = randn(x.shape(), p.seed + 11, f64), vy = randn(y.shape(), p.seed + 12, f64);
  const Tensor y0 = f(x, y);
  const Tensor u = randn(y0.shape(), p.seed + 13, f64);
  const std::array<Tensor, 2> xs{x, y}, vs{vx, vy};
  auto f_of = [&p](const auto& a) { return run_program(p, a[0], a[1]); };
  const Tensor t = jvp(f_of, xs, vs).second;
  auto [y1, pullback] = vjp(f, x, y);
  const auto [gx, gy] = pullback(u);
  const double fwd = sum(u * t).item<double>();
  const double rev = (sum(vx * gx) + sum(vy * gy)).item<double>();
  const double scale = (sum(abs(u * t)) + sum(abs(vx * gx)) + sum(abs(vy * gy))).item<double>();
  compare(c, "<u, jvp> = <vjp, v>", std::abs(fwd - rev) / (1 + scale), tol);
  if (order < 2) return;
  // Forward over reverse: d/dt of J(x + t v)^T u.
  auto grad_u = [&p, &u](const auto& a) {
    auto [out, pb] =
        vjp([&p](const auto& s, const auto& r) { return run_program(p, s, r); }, a[0], a[1]);
    const auto [ga, gb] = pb(u);
    return joined(ga, gb);
  };
  const Tensor h1 = jvp(grad_u, xs, vs).second;
  // Reverse over forward: the gradient of <u, J(x) v>.
  auto uJv = [&](const auto& s, const auto& r) {
    using T = std::decay_t<decltype(s)>;
    const std::array<T, 2> at{s, r};
    auto [out, tangent] = jvp([&p](const auto& a) { return run_program(p, a[0], a[1]); }, at,
                              std::array<T, 2>{lift<T>(vx), lift<T>(vy)});
    return sum(tangent * u);
  };
  const auto [hx, hy] = grad(uJv, x, y);
  compare(c, "fwd-over-rev = rev-over-fwd Hessian-vector products", mismatch(h1, joined(hx, hy)),
          tol);
}

/// vmap(f), vmap(f) with y shared and vmap(grad(sum(f))) against loops over 3 examples.
void check_vmap(ProgramCheck& c, const Program& p, const Tensor& x, const Tensor& y, double tol) {
  const ProgramFn f{&p};
  auto batch = [](const Tensor& first, uint64_t seed) {
    Shape s = first.shape();
    s.insert(0, 2);
    return concat({unsqueeze(first, 0), randn(s, seed, f64)}, 0);
  };
  const Tensor X = batch(x, p.seed + 21), Y = batch(y, p.seed + 22);
  // The other examples are drawn here, past the guard of x and y: one whose values leave
  // the guard's range (where a factorisation may refuse M(a)) skips the comparison, as the
  // guard skips a program.
  for (int64_t i = 1; i < 3; ++i) {
    if (!program_guard(p, X.ix(i), Y.ix(i)).empty() || !program_guard(p, X.ix(i), y).empty()) {
      c.report += "vmap check skipped: an example's values leave the guard's range\n";
      return;
    }
  }
  auto loss = [&p](const auto& a, const auto& b) { return sum(run_program(p, a, b)); };
  std::vector<Tensor> both, shared, ga, gb;
  for (int64_t i = 0; i < 3; ++i) {
    const Tensor xi = X.ix(i), yi = Y.ix(i);
    both.push_back(f(xi, yi));
    shared.push_back(f(xi, y));
    const auto [dx, dy] = grad(loss, xi, yi);
    ga.push_back(dx);
    gb.push_back(dy);
  }
  compare(c, "vmap(f) = loop", mismatch(vmap(f)(X, Y), stack(both, 0)), tol);
  compare(c, "vmap(f, {0, none}) = loop", mismatch(vmap(f, {0, none})(X, y), stack(shared, 0)),
          tol);
  const auto [dX, dY] = vmap(grad(loss))(X, Y);
  compare(c, "vmap(grad(sum(f))) = loop",
          mismatch(joined(dX, dY), joined(stack(ga, 0), stack(gb, 0))), tol);
}

}  // namespace

ProgramCheck check_program(const Program& p, int order) {
  ProgramCheck c;
  const auto [x, y] = program_inputs(p, p.seed * 7919 + 1);
  const std::string skip = program_guard(p, x, y);
  if (!skip.empty()) {
    c.report = "skipped: " + skip;
    return c;
  }
  c.checked = true;
  c.ok = true;
  const bool lossy = program_is_lossy(p);
  const int fd_order = lossy ? 1 : order;
  try {
    GradCheckOptions go;
    go.seed = p.seed;
    const ProgramFn fn{&p};
    const GradCheckResult r = fd_order == 1   ? check_grads_error<1>(fn, {x, y}, Modes::both, go)
                              : fd_order == 2 ? check_grads_error<2>(fn, {x, y}, Modes::both, go)
                                              : check_grads_error<3>(fn, {x, y}, Modes::both, go);
    c.comparisons += r.checks;
    if (!r.ok()) {
      c.ok = false;
      c.report += "check_grads (order " + std::to_string(fd_order) + "):\n" + r.report;
    }
    // Forward and reverse differ by rounding only; an f32 round trip rounds each its own way.
    check_forward_reverse(c, p, x, y, fd_order, lossy ? 1e-6 : 1e-10);
    check_vmap(c, p, x, y, lossy ? 1e-6 : 1e-10);
  } catch (const std::exception& e) {
    c.ok = false;
    c.report += std::string("exception: ") + e.what() + "\n";
  }
  if (!c.ok) c.report = p.str() + c.report;
  return c;
}

void ProgramTally::add(const Program& p, const ProgramCheck& c) {
  ++drawn;
  if (!c.checked) return;
  ++checked;
  comparisons += c.comparisons;
  rows.resize(program_ops().size(), 0);
  for (const ProgNode& n : p.nodes) {
    if (n.op >= 0) ++rows[std::size_t(n.op)];
  }
}

std::string ProgramTally::missing() const {
  std::string out;
  const auto& ops = program_ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i >= rows.size() || rows[i] == 0)
      out += std::string(out.empty() ? "" : ", ") + std::string(ops[i].name);
  }
  return out;
}

}  // namespace strata::testing
