// SPDX-License-Identifier: MIT
// The random programs' generator and guard (tests/support/random_program.hpp).
// (run_program itself is compiled in files of six levels each: random_program_levels.inc.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/program_ops.hpp"

namespace strata::testing {

const std::vector<ProgramOpInfo>& program_ops() {
  static const std::vector<ProgramOpInfo> rows = std::apply(
      [](const auto&... r) { return std::vector<ProgramOpInfo>{r.info...}; }, program::kProgramOps);
  return rows;
}

int program_op(std::string_view name) {
  const auto& rows = program_ops();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name == name) return int(i);
  }
  throw std::out_of_range("no row '" + std::string(name) + "' in the random programs' op table");
}

namespace {

/// Each row's planner and gap, in table order.
struct RowFns {
  program::Plan plan;
  program::Gap gap;
};
const std::vector<RowFns>& row_fns() {
  static const std::vector<RowFns> fns = std::apply(
      [](const auto&... r) {
        return std::vector<RowFns>{RowFns{r.plan, r.gap}...};
      },
      program::kProgramOps);
  return fns;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

/// A random shape of rank 1 to 3 with sizes in [1, max_dim] and at most max_numel elements.
Shape input_shape(program::Draw& d, const ProgramOptions& o) {
  for (;;) {
    const int64_t r = d.pick(5) == 0 ? 1 : d.coin() ? 2 : 3;
    Shape s;
    for (int64_t i = 0; i < r; ++i) s.push_back(d.pick(6) == 0 ? 1 : d.between(2, o.max_dim));
    const int64_t n = checked_numel(s, "input");
    if (n >= 2 && n <= o.max_numel) return s;
  }
}

/// y's shape given x's: x's own, a suffix, x's with axes made 1, the last two swapped, or
/// unrelated.
Shape second_shape(program::Draw& d, const Shape& x, const ProgramOptions& o) {
  Shape s = x;
  switch (d.pick(5)) {
    case 0:
      return s;
    case 1:
      s = Shape{};
      for (int64_t i = d.between(1, x.ndim() - 1 + (x.ndim() == 1)); i < x.ndim(); ++i) {
        s.push_back(x[std::size_t(i)]);
      }
      return s.ndim() == 0 ? x : s;
    case 2:
      for (int64_t& e : s) {
        if (d.coin()) e = 1;
      }
      return s;
    case 3:
      if (s.ndim() >= 2) std::swap(s[std::size_t(s.ndim() - 1)], s[std::size_t(s.ndim() - 2)]);
      return s;
    default:
      return input_shape(d, o);
  }
}

}  // namespace

std::string Program::str() const {
  const auto& rows = program_ops();
  std::ostringstream os;
  os << "program (seed " << seed << "):\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ProgNode& n = nodes[i];
    os << "  %" << i << " = ";
    if (n.op < 0) {
      os << (i == 0 ? "x" : "y");
    } else {
      os << rows[std::size_t(n.op)].name << " %" << n.a;
      if (n.b >= 0) os << ", %" << n.b;
      os << "  [" << rows[std::size_t(n.op)].form << "]  axis=" << n.axis
         << " dims=" << shape_str(n.dims) << " k=" << n.k;
      if (!n.ints.empty()) {
        os << " ints=";
        for (int64_t v : n.ints)
          os << (v == program::kAbsent ? std::string("none") : std::to_string(v)) << ',';
      }
      for (const Tensor& t : n.index) os << " index" << shape_str(t.shape());
    }
    os << "  -> " << shape_str(n.shape) << "\n";
  }
  os << "  result = %" << nodes.size() - 1;
  for (int i : sinks) os << " + sum(%" << i << ")";
  os << "\n";
  return os.str();
}

Program random_program(uint64_t seed, const ProgramOptions& o) {
  std::mt19937_64 rng(seed);
  Program p;
  p.seed = seed;
  program::Draw d(rng, p.nodes);
  const auto& rows = program_ops();
  std::vector<int> allowed;
  for (int i = 0; i < int(rows.size()); ++i) {
    const bool listed =
        o.only.empty() || std::find(o.only.begin(), o.only.end(), i) != o.only.end();
    if (listed && (o.kinks || !rows[std::size_t(i)].kink) &&
        (o.lossy || !rows[std::size_t(i)].lossy)) {
      allowed.push_back(i);
    }
  }
  const Shape xs = input_shape(d, o);
  const Shape ys = second_shape(d, xs, o);
  p.nodes.push_back(ProgNode{.shape = xs});
  p.nodes.push_back(ProgNode{.shape = ys});
  while (int(p.nodes.size()) < o.ops + 2) {
    ProgNode n;
    n.op = allowed[std::size_t(d.pick(int(allowed.size())))];
    // An operand: half the time the newest node (so chains grow deep), else any.
    n.a = d.coin() ? int(p.nodes.size()) - 1 : d.pick(int(p.nodes.size()));
    if (!row_fns()[std::size_t(n.op)].plan(d, n)) continue;
    // The shape, by the op itself on zeros: a node the op rejects is drawn again.
    const Tensor za = zeros(d.shape(n.a), f64);
    const Tensor zb = n.b >= 0 ? zeros(d.shape(n.b), f64) : za;
    try {
      n.shape = program::apply_op(n, za, zb).shape();
    } catch (const Error&) {
      continue;
    }
    const int64_t count = checked_numel(n.shape, "node");
    if (count == 0 || count > o.max_numel || n.shape.ndim() > 4) continue;
    p.nodes.push_back(std::move(n));
  }
  std::vector<bool> used(p.nodes.size(), false);
  for (const ProgNode& n : p.nodes) {
    if (n.a >= 0) used[std::size_t(n.a)] = true;
    if (n.b >= 0) used[std::size_t(n.b)] = true;
  }
  for (int i = 2; i + 1 < int(p.nodes.size()); ++i) {
    if (!used[std::size_t(i)]) p.sinks.push_back(i);
  }
  return p;
}

std::pair<Tensor, Tensor> program_inputs(const Program& p, uint64_t seed) {
  return {randn(p.nodes[0].shape, seed, f64), randn(p.nodes[1].shape, seed + 1, f64)};
}

namespace {

/// "%i has the value v" for the first value of the trace that is not finite or above 100.
std::string first_large(const std::vector<Tensor>& trace) {
  for (std::size_t i = 0; i < trace.size(); ++i) {
    for (double v : trace[i].to_vector<double>()) {
      if (!std::isfinite(v) || std::abs(v) > 100) {
        std::ostringstream os;
        os << '%' << i << " has the value " << v;
        return os.str();
      }
    }
  }
  return "";
}

}  // namespace

std::string program_guard(const Program& p, const Tensor& x, const Tensor& y) {
  std::vector<Tensor> trace;
  try {
    trace.push_back(run_program(p, x, y, &trace));
  } catch (const Error&) {
    // An op refused a value out of range before it (a factorisation given a NaN): a skip.
    // An op failing on values in range is a finding and propagates.
    std::string large = first_large(trace);
    if (large.empty()) throw;
    return large;
  }
  if (std::string large = first_large(trace); !large.empty()) return large;
  for (std::size_t i = 2; i < p.nodes.size(); ++i) {
    const ProgNode& n = p.nodes[i];
    const program::Gap gap = row_fns()[std::size_t(n.op)].gap;
    if (!gap) continue;
    const Tensor& a = trace[std::size_t(n.a)];
    const double g = gap(n, a, n.b >= 0 ? trace[std::size_t(n.b)] : a);
    if (g < 1e-3) {
      std::ostringstream os;
      os << '%' << i << " is " << g << " from a kink of " << program_ops()[std::size_t(n.op)].name;
      return os.str();
    }
  }
  return "";
}

bool program_is_lossy(const Program& p) {
  const auto& rows = program_ops();
  return std::any_of(p.nodes.begin(), p.nodes.end(),
                     [&](const ProgNode& n) { return n.op >= 0 && rows[std::size_t(n.op)].lossy; });
}

}  // namespace strata::testing
