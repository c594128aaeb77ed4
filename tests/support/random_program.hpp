// SPDX-License-Identifier: MIT
#pragma once
/// Random programs: seeded, small expression DAGs of strata ops, for
/// differential tests of the derivative rules.
///
/// A Program is a list of nodes over two inputs x and y (f64 tensors of small
/// shapes); each node applies one op (unary, binary with broadcasting,
/// reduction, movement, matmul, gather, where, pow) to earlier nodes, and the
/// last node is the result. run_program evaluates it generically, so the same
/// program runs on Tensor, Forward<...>, Reverse<...> and every nesting of
/// them; ProgramFn is that evaluation as one callable type, so check_grads
/// (tests/support/check_grads.hpp) instantiates it once for every program.
///
///   const Program p = random_program(seed);
///   check_grads(ProgramFn{&p}, {x, y}, 2);   // x, y from program_inputs(p, seed)
///
/// The generator keeps inputs away from non-differentiable points by
/// construction: log, sqrt and pow with a variable exponent act on a*a + c
/// (c > 0), division is by b*b + 1, and a binary op never takes one node
/// twice (x - x would put exact zeros under relu, abs or maximum). The
/// remaining kinks (relu, abs, maximum, minimum, max, where) sit at points a
/// random input hits with probability zero.
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <strata.hpp>

namespace strata::testing {

/// The ops a random program draws from.
enum class ProgOp {
  input,
  // unary, shape-preserving
  neg,
  sin,
  cos,
  tanh,
  exp,
  sigmoid,
  softplus,
  gelu,
  relu,
  abs,
  square,
  log_sq1,
  sqrt_sq1,
  pow_const,  // pow(a, k) with k a constant in {0, 1, 2, 3}
  // binary, broadcasting
  add,
  sub,
  mul,
  div_sq1,
  maximum,
  minimum,
  pow_pos,    // pow(a*a + 0.5, b)
  where_pos,  // where(a > 0, a, b)
  // reductions (axis = `axis`) and normalisations
  sum_axis,
  sum_all,
  mean_all,
  max_axis,
  logsumexp_axis,
  softmax_axis,
  log_softmax_axis,
  // movement and contraction
  transpose,
  flatten,
  flip,
  slice_tail,
  unsqueeze0,
  concat0,
  gather0,
  matmul,
};

/// One node: op applied to nodes a (and b), with an axis or a constant.
struct ProgNode {
  ProgOp op = ProgOp::input;
  int a = -1, b = -1;
  int64_t axis = 0;
  double k = 0;
  Shape shape;
};

/// A program over inputs nodes[0] (x) and nodes[1] (y); its result is the last node.
struct Program {
  std::vector<ProgNode> nodes;
  /// The other nodes no node uses (not inputs): each adds its sum to the result,
  /// so no op a program draws is dead code.
  std::vector<int> sinks;
  uint64_t seed = 0;
  /// One line per node, for failure reports.
  std::string str() const;
};

namespace detail_rp {

inline const char* name(ProgOp op) {
  switch (op) {
    case ProgOp::input:
      return "input";
    case ProgOp::neg:
      return "neg";
    case ProgOp::sin:
      return "sin";
    case ProgOp::cos:
      return "cos";
    case ProgOp::tanh:
      return "tanh";
    case ProgOp::exp:
      return "exp";
    case ProgOp::sigmoid:
      return "sigmoid";
    case ProgOp::softplus:
      return "softplus";
    case ProgOp::gelu:
      return "gelu";
    case ProgOp::relu:
      return "relu";
    case ProgOp::abs:
      return "abs";
    case ProgOp::square:
      return "square";
    case ProgOp::log_sq1:
      return "log(a*a+1)";
    case ProgOp::sqrt_sq1:
      return "sqrt(a*a+1)";
    case ProgOp::pow_const:
      return "pow(a,k)";
    case ProgOp::add:
      return "add";
    case ProgOp::sub:
      return "sub";
    case ProgOp::mul:
      return "mul";
    case ProgOp::div_sq1:
      return "a/(b*b+1)";
    case ProgOp::maximum:
      return "maximum";
    case ProgOp::minimum:
      return "minimum";
    case ProgOp::pow_pos:
      return "pow(a*a+0.5,b)";
    case ProgOp::where_pos:
      return "where(a>0,a,b)";
    case ProgOp::sum_axis:
      return "sum(axis)";
    case ProgOp::sum_all:
      return "sum";
    case ProgOp::mean_all:
      return "mean";
    case ProgOp::max_axis:
      return "max(axis)";
    case ProgOp::logsumexp_axis:
      return "logsumexp(axis)";
    case ProgOp::softmax_axis:
      return "softmax(axis)";
    case ProgOp::log_softmax_axis:
      return "log_softmax(axis)";
    case ProgOp::transpose:
      return "transpose";
    case ProgOp::flatten:
      return "flatten";
    case ProgOp::flip:
      return "flip(axis)";
    case ProgOp::slice_tail:
      return "a[1:](axis)";
    case ProgOp::unsqueeze0:
      return "unsqueeze(0)";
    case ProgOp::concat0:
      return "concat(a,b;0)";
    case ProgOp::gather0:
      return "a[[1,0,1]]";
    case ProgOp::matmul:
      return "matmul";
  }
  return "?";
}

/// NumPy broadcasting of two shapes, or false when they do not broadcast.
inline bool broadcast(const Shape& a, const Shape& b, Shape& out) {
  const int64_t n = std::max(a.ndim(), b.ndim());
  Shape s(std::size_t(n), 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.ndim() ? 1 : a[std::size_t(i - (n - a.ndim()))];
    const int64_t db = i < n - b.ndim() ? 1 : b[std::size_t(i - (n - b.ndim()))];
    if (da != db && da != 1 && db != 1) return false;
    s[std::size_t(i)] = std::max(da, db);
  }
  out = s;
  return true;
}

/// The result shape of matmul(a, b) (numpy.matmul on rank 1 and 2), or false.
inline bool matmul_shape(const Shape& a, const Shape& b, Shape& out) {
  if (a.ndim() < 1 || a.ndim() > 2 || b.ndim() < 1 || b.ndim() > 2) return false;
  const int64_t k = a[std::size_t(a.ndim() - 1)];
  const int64_t kb = b.ndim() == 1 ? b[0] : b[0];
  if (k != kb) return false;
  Shape s;
  if (a.ndim() == 2) s.push_back(a[0]);
  if (b.ndim() == 2) s.push_back(b[1]);
  out = s;
  return true;
}

inline const Tensor& gather_index() {
  static const Tensor idx = from_vector(std::vector<int64_t>{1, 0, 1}, {3});
  return idx;
}

}  // namespace detail_rp

inline std::string Program::str() const {
  std::ostringstream os;
  os << "program (seed " << seed << "):\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ProgNode& n = nodes[i];
    os << "  %" << i << " = " << detail_rp::name(n.op);
    if (n.op == ProgOp::input) os << (i == 0 ? " x" : " y");
    if (n.a >= 0) os << " %" << n.a;
    if (n.b >= 0) os << ", %" << n.b;
    if (n.op == ProgOp::pow_const) os << "  k=" << n.k;
    os << "  axis=" << n.axis << "  shape [";
    for (std::size_t d = 0; d < n.shape.size(); ++d) os << (d ? "," : "") << n.shape[d];
    os << "]\n";
  }
  os << "  result = %" << nodes.size() - 1;
  for (int i : sinks) os << " + sum(%" << i << ")";
  os << "\n";
  return os.str();
}

/// Options of random_program.
struct ProgramOptions {
  int ops = 6;        ///< nodes after the two inputs
  bool kinks = true;  ///< whether relu, abs, maximum, minimum, max and where may appear
};

/// A seeded random program: x has shape [2, 3], y one of [2, 3], [3], [3, 2], [2, 1].
inline Program random_program(uint64_t seed, const ProgramOptions& o = {}) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return int(rng() % uint64_t(n)); };
  Program p;
  p.seed = seed;
  const Shape y_shapes[] = {{2, 3}, {3}, {3, 2}, {2, 1}};
  p.nodes.push_back({ProgOp::input, -1, -1, 0, 0, {2, 3}});
  p.nodes.push_back({ProgOp::input, -1, -1, 0, 0, y_shapes[pick(4)]});
  // An operand: half the time the newest node (so chains grow deep), else any.
  auto operand = [&]() {
    const int n = int(p.nodes.size());
    return pick(2) == 0 ? n - 1 : pick(n);
  };
  const ProgOp unary[] = {ProgOp::neg,    ProgOp::sin,     ProgOp::cos,      ProgOp::tanh,
                          ProgOp::exp,    ProgOp::sigmoid, ProgOp::softplus, ProgOp::gelu,
                          ProgOp::square, ProgOp::log_sq1, ProgOp::sqrt_sq1, ProgOp::pow_const,
                          ProgOp::relu,   ProgOp::abs};
  const ProgOp binary[] = {ProgOp::add,     ProgOp::sub,      ProgOp::mul,     ProgOp::div_sq1,
                           ProgOp::pow_pos, ProgOp::matmul,   ProgOp::concat0, ProgOp::maximum,
                           ProgOp::minimum, ProgOp::where_pos};
  const ProgOp shaping[] = {ProgOp::sum_axis,       ProgOp::sum_all,      ProgOp::mean_all,
                            ProgOp::logsumexp_axis, ProgOp::softmax_axis, ProgOp::log_softmax_axis,
                            ProgOp::transpose,      ProgOp::flatten,      ProgOp::flip,
                            ProgOp::slice_tail,     ProgOp::unsqueeze0,   ProgOp::gather0,
                            ProgOp::max_axis};
  const int n_unary = o.kinks ? 14 : 12, n_binary = o.kinks ? 10 : 7, n_shaping = o.kinks ? 13 : 12;
  while (int(p.nodes.size()) < o.ops + 2) {
    ProgNode n;
    n.a = operand();
    const Shape sa = p.nodes[std::size_t(n.a)].shape;
    const int kind = pick(3);
    if (kind == 1) {
      n.op = binary[pick(n_binary)];
      std::vector<int> fits;
      for (int j = 0; j < int(p.nodes.size()); ++j) {
        if (j == n.a) continue;
        const Shape& sb = p.nodes[std::size_t(j)].shape;
        Shape s;
        const bool ok = n.op == ProgOp::matmul    ? detail_rp::matmul_shape(sa, sb, s)
                        : n.op == ProgOp::concat0 ? (sa == sb && sa.ndim() >= 1)
                                                  : detail_rp::broadcast(sa, sb, s);
        if (ok) fits.push_back(j);
      }
      if (fits.empty()) continue;
      n.b = fits[std::size_t(pick(int(fits.size())))];
      const Shape& sb = p.nodes[std::size_t(n.b)].shape;
      if (n.op == ProgOp::matmul) {
        detail_rp::matmul_shape(sa, sb, n.shape);
      } else if (n.op == ProgOp::concat0) {
        n.shape = sa;
        n.shape[0] *= 2;
      } else {
        detail_rp::broadcast(sa, sb, n.shape);
      }
    } else if (kind == 2) {
      n.op = shaping[pick(n_shaping)];
      const int64_t r = sa.ndim();
      const bool axis_op = n.op == ProgOp::sum_axis || n.op == ProgOp::max_axis ||
                           n.op == ProgOp::logsumexp_axis || n.op == ProgOp::softmax_axis ||
                           n.op == ProgOp::log_softmax_axis || n.op == ProgOp::flip ||
                           n.op == ProgOp::slice_tail;
      if (axis_op) {
        if (r == 0) continue;
        n.axis = pick(int(r));
      }
      n.shape = sa;
      switch (n.op) {
        case ProgOp::sum_axis:
        case ProgOp::max_axis:
        case ProgOp::logsumexp_axis:
          n.shape.erase(std::size_t(n.axis));
          break;
        case ProgOp::sum_all:
        case ProgOp::mean_all:
          n.shape = Shape{};
          break;
        case ProgOp::transpose:
          if (r != 2) continue;
          n.shape = Shape{sa[1], sa[0]};
          break;
        case ProgOp::flatten:
          n.shape = Shape{checked_numel(sa, "flatten")};
          break;
        case ProgOp::slice_tail:
          if (sa[std::size_t(n.axis)] < 2) continue;
          n.shape[std::size_t(n.axis)] -= 1;
          break;
        case ProgOp::unsqueeze0:
          if (r >= 3) continue;
          n.shape.insert(0, 1);
          break;
        case ProgOp::gather0:
          if (r == 0 || sa[0] < 2) continue;
          n.shape[0] = 3;
          break;
        default:
          break;  // softmax, log_softmax, flip keep the shape
      }
    } else {
      n.op = unary[pick(n_unary)];
      n.shape = sa;
      if (n.op == ProgOp::pow_const) n.k = double(pick(4));
    }
    p.nodes.push_back(n);
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

/// The inputs of p: standard normal f64 values from `seed`, in the shapes of nodes 0 and 1.
inline std::pair<Tensor, Tensor> program_inputs(const Program& p, uint64_t seed) {
  return {randn(p.nodes[0].shape, seed, f64), randn(p.nodes[1].shape, seed + 1, f64)};
}

/// Evaluates p on x and y at any level of the AD stack; `trace`, when given,
/// receives the value of every node.
template <Diffable T>
T run_program(const Program& p, const T& x, const T& y, std::vector<T>* trace = nullptr) {
  std::vector<T> v;
  v.reserve(p.nodes.size());
  for (const ProgNode& n : p.nodes) {
    if (n.op == ProgOp::input) {
      v.push_back(v.empty() ? x : y);
      continue;
    }
    const T& a = v[std::size_t(n.a)];
    const T* b = n.b >= 0 ? &v[std::size_t(n.b)] : nullptr;
    switch (n.op) {
      case ProgOp::neg:
        v.push_back(-a);
        break;
      case ProgOp::sin:
        v.push_back(strata::sin(a));
        break;
      case ProgOp::cos:
        v.push_back(strata::cos(a));
        break;
      case ProgOp::tanh:
        v.push_back(strata::tanh(a));
        break;
      case ProgOp::exp:
        v.push_back(strata::exp(a));
        break;
      case ProgOp::sigmoid:
        v.push_back(strata::sigmoid(a));
        break;
      case ProgOp::softplus:
        v.push_back(strata::softplus(a));
        break;
      case ProgOp::gelu:
        v.push_back(strata::gelu(a));
        break;
      case ProgOp::relu:
        v.push_back(strata::relu(a));
        break;
      case ProgOp::abs:
        v.push_back(strata::abs(a));
        break;
      case ProgOp::square:
        v.push_back(a * a);
        break;
      case ProgOp::log_sq1:
        v.push_back(strata::log(a * a + 1.0));
        break;
      case ProgOp::sqrt_sq1:
        v.push_back(strata::sqrt(a * a + 1.0));
        break;
      case ProgOp::pow_const:
        v.push_back(strata::pow(a, n.k));
        break;
      case ProgOp::add:
        v.push_back(a + *b);
        break;
      case ProgOp::sub:
        v.push_back(a - *b);
        break;
      case ProgOp::mul:
        v.push_back(a * *b);
        break;
      case ProgOp::div_sq1:
        v.push_back(a / (*b * *b + 1.0));
        break;
      case ProgOp::maximum:
        v.push_back(strata::maximum(a, *b));
        break;
      case ProgOp::minimum:
        v.push_back(strata::minimum(a, *b));
        break;
      case ProgOp::pow_pos:
        v.push_back(strata::pow(a * a + 0.5, *b));
        break;
      case ProgOp::where_pos:
        v.push_back(strata::where(a > 0, a, *b));
        break;
      case ProgOp::sum_axis:
        v.push_back(strata::sum(a, {n.axis}));
        break;
      case ProgOp::sum_all:
        v.push_back(strata::sum(a));
        break;
      case ProgOp::mean_all:
        v.push_back(strata::mean(a));
        break;
      case ProgOp::max_axis:
        v.push_back(strata::max(a, {n.axis}));
        break;
      case ProgOp::logsumexp_axis:
        v.push_back(strata::logsumexp(a, {n.axis}));
        break;
      case ProgOp::softmax_axis:
        v.push_back(strata::softmax(a, n.axis));
        break;
      case ProgOp::log_softmax_axis:
        v.push_back(strata::log_softmax(a, n.axis));
        break;
      case ProgOp::transpose:
        v.push_back(strata::transpose(a, 0, 1));
        break;
      case ProgOp::flatten:
        v.push_back(strata::flatten(a));
        break;
      case ProgOp::flip:
        v.push_back(strata::flip(a, n.axis));
        break;
      case ProgOp::slice_tail:
        v.push_back(strata::slice(a, n.axis, 1, std::nullopt));
        break;
      case ProgOp::unsqueeze0:
        v.push_back(strata::unsqueeze(a, 0));
        break;
      case ProgOp::concat0:
        v.push_back(strata::concat(std::vector<T>{a, *b}, 0));
        break;
      case ProgOp::gather0:
        v.push_back(Prims<T>::index_select(a, 0, detail_rp::gather_index()));
        break;
      case ProgOp::matmul:
        v.push_back(strata::matmul(a, *b));
        break;
      case ProgOp::input:
        break;
    }
  }
  T out = v.back();
  for (int i : p.sinks) out = out + strata::sum(v[std::size_t(i)]);
  if (trace) *trace = std::move(v);
  return out;
}

/// run_program as one callable type (check_grads instantiates it once for every program).
struct ProgramFn {
  const Program* program;
  template <class T>
  T operator()(const T& x, const T& y) const {
    return run_program(*program, x, y);
  }
};

}  // namespace strata::testing
