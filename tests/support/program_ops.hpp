// SPDX-License-Identifier: MIT
#pragma once
/// The op table of the random programs (tests/support/random_program.hpp): one
/// row per op a program may draw. A row is
///
///   row(name, form, covers, plan, apply[, gap[, lossy]])
///
///   name    unique, for reports and the coverage count ("log", "matmul_batched")
///   form    the expression the row computes, for reports
///   covers  the op of raw/primitives.hpp's tables, or the Diffable primitive
///           (diff/diffable.hpp), whose rule it differentiates, or ""
///           (tests/ad/random_programs.test.cpp requires a row for every
///           differentiable op of those tables and every primitive)
///   plan    draws the second operand and the parameters (program_draw.hpp)
///   apply   the op at any level: (const ProgNode& n, const T& a, const T& b) -> T,
///           b being a for a row of one operand
///   gap     its inputs' distance from its kinks, for rows with kinks
///   lossy   it rounds through f32, so its derivatives are checked at order 1 only
///
/// A new op (linear algebra, convolution, a jit level's ops) is a row here, with a
/// planner in program_draw.hpp when none there fits. Include this header only where
/// run_program is compiled (tests/support/random_program*.cpp): every row is
/// instantiated at every level there.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata.hpp>

#include "support/program_draw.hpp"
#include "support/program_gaps.hpp"
#include "support/program_index.hpp"
#include "support/program_linalg.hpp"
#include "support/random_program.hpp"

namespace strata::testing::program {

/// One row: what the generator reads, and the op itself.
template <class Apply>
struct Row {
  ProgramOpInfo info;
  Plan plan;
  Gap gap;
  Apply apply;
};
/// A row of the table (see the header comment).
template <class Apply>
Row<Apply> row(std::string_view name, std::string_view form, std::string_view covers, Plan plan,
               Apply apply, Gap gap = nullptr, bool lossy = false) {
  return {{name, form, covers, gap != nullptr, lossy}, plan, gap, apply};
}

/// n.ints as pads.
inline Pads pads_of(const ProgNode& n) {
  Pads p;
  for (std::size_t i = 0; i + 1 < n.ints.size(); i += 2) p.emplace_back(n.ints[i], n.ints[i + 1]);
  return p;
}
/// n.ints as a Window (the windowing planner's layout).
inline Window window_of(const ProgNode& n) {
  const auto k = std::size_t(n.ints[0]);
  auto part = [&](std::size_t at) {
    return Shape(n.ints.begin() + std::ptrdiff_t(1 + at * k),
                 n.ints.begin() + std::ptrdiff_t(1 + (at + 1) * k));
  };
  return Window{part(0), part(1), part(2)};
}
/// The trailing sizes of a that a Window of k axes covers.
inline Shape windowed_sizes(const Shape& a, int64_t k) { return Shape(a.end() - k, a.end()); }
/// A slice bound of n.ints.
inline std::optional<int64_t> bound(int64_t v) {
  return v == kAbsent ? std::nullopt : std::optional<int64_t>(v);
}

// The custom rules: generic lambdas, so higher orders differentiate the rules themselves.
/// a * sin(a) with its derivative written by hand.
inline const auto kCustomJvp = custom_jvp([](const auto& a) { return a * sin(a); },
                                          [](const auto& a, const auto& t) {
                                            return std::pair{a * sin(a), t * (sin(a) + a * cos(a))};
                                          },
                                          "a * sin(a)");
/// a * tanh(b) (a and b of one shape) with its pullback written by hand.
inline const auto kCustomVjp = custom_vjp([](const auto& a, const auto& b) { return a * tanh(b); },
                                          [](const auto& a, const auto& b) {
                                            return std::pair{a * tanh(b), std::tuple{a, b}};
                                          },
                                          [](const auto& res, const auto& g) {
                                            const auto& [a, b] = res;
                                            const auto t = tanh(b);
                                            return std::tuple{g * t, g * a * (1.0 - t * t)};
                                          },
                                          "a * tanh(b)");
/// softplus(a) * b + sin(a), recomputed in the backward pass.
inline const auto kCheckpoint =
    checkpoint([](const auto& a, const auto& b) { return softplus(a) * b + sin(a); },
               "softplus(a) * b + sin(a)");

#define STRATA_OP(expr)                                 \
  [](const ProgNode& n, const auto& a, const auto& b) { \
    (void)n;                                            \
    (void)b;                                            \
    return expr;                                        \
  }

// clang-format off
/// The table. Its order is the order of ProgNode::op; appending keeps old seeds' programs.
inline const auto kProgramOps = std::tuple{
  // The unary primitives (raw UnaryOp), away from the edges of their domains.
  row("neg", "-a", "neg", any, STRATA_OP(-a)),
  row("exp", "exp(a)", "exp", any, STRATA_OP(exp(a))),
  row("log", "log(a*a + 0.5)", "log", any, STRATA_OP(log(a * a + 0.5))),
  row("sin", "sin(a)", "sin", any, STRATA_OP(sin(a))),
  row("cos", "cos(a)", "cos", any, STRATA_OP(cos(a))),
  row("sqrt", "sqrt(a*a + 0.5)", "sqrt", any, STRATA_OP(sqrt(a * a + 0.5))),
  row("tanh", "tanh(a)", "tanh", any, STRATA_OP(tanh(a))),
  row("abs", "abs(a)", "abs", any, STRATA_OP(abs(a)), gap_zero),
  row("sign", "a * sign(a)", "sign", any, STRATA_OP(a * sign(a)), gap_zero),
  row("log1p", "log1p(a*a)", "log1p", any, STRATA_OP(log1p(a * a))),
  row("expm1", "expm1(a)", "expm1", any, STRATA_OP(expm1(a))),
  row("erf", "erf(a)", "erf", any, STRATA_OP(erf(a))),
  // The binary primitives (raw BinaryOp), operands broadcast.
  row("add", "a + b", "add", broadcast_pair, STRATA_OP(a + b)),
  row("sub", "a - b", "sub", broadcast_pair, STRATA_OP(a - b)),
  row("mul", "a * b", "mul", broadcast_pair, STRATA_OP(a * b)),
  row("div", "a / (b*b + 1)", "div", broadcast_pair, STRATA_OP(a / (b * b + 1.0))),
  row("pow", "pow(a*a + 0.5, b)", "pow", broadcast_pair, STRATA_OP(pow(a * a + 0.5, b))),
  row("pow(a, k)", "pow(a, k), k in {0, 1, 2, 3}", "pow", small_power, STRATA_OP(pow(a, n.k))),
  row("pow(1.5, a)", "pow(1.5, a)", "pow", any, STRATA_OP(pow(1.5, a))),
  row("maximum", "maximum(a, b)", "maximum", broadcast_pair, STRATA_OP(maximum(a, b)), gap_pair),
  row("minimum", "minimum(a, b)", "minimum", broadcast_pair, STRATA_OP(minimum(a, b)), gap_pair),
  row("safe_mul", "safe_mul(a, b), broadcast by expand", "safe_mul", broadcast_pair,
      [](const ProgNode& n, const auto& a, const auto& b) {
        using T = std::decay_t<decltype(a)>;
        const Shape s = broadcast_shapes(a.shape(), b.shape(), "safe_mul");
        (void)n;
        return Prims<T>::binary(BinaryOp::safe_mul, expand(a, s), expand(b, s));
      }),
  row("safe_div", "safe_div(a, b*b + 1), broadcast by expand", "safe_div", broadcast_pair,
      [](const ProgNode& n, const auto& a, const auto& b) {
        using T = std::decay_t<decltype(a)>;
        const Shape s = broadcast_shapes(a.shape(), b.shape(), "safe_div");
        (void)n;
        return Prims<T>::binary(BinaryOp::safe_div, expand(a, s), expand(b * b + 1.0, s));
      }),
  row("where", "where(c, a, b), c a comparison or logical op of a and b", "where", condition,
      [](const ProgNode& n, const auto& a, const auto& b) {
        using T = std::decay_t<decltype(a)>;
        const T c = n.k == 0 ? a > b : n.k == 1 ? a >= b : n.k == 2 ? a < b : n.k == 3 ? a <= b
                  : n.k == 4 ? a != b : n.k == 5 ? a == b
                  : n.k == 6 ? logical_and(a > 0.0, b < 0.0)
                  : n.k == 7 ? logical_or(a > 0.0, b > 0.0) : logical_not(a > b);
        return where(c, a, b);
      }, gap_where),
  // The reductions (raw ReduceOp).
  row("sum", "sum(a, axes, keepdims)", "sum", reduction, STRATA_OP(sum(a, n.dims, n.k != 0))),
  row("max", "max(a, axes, keepdims)", "max", reduction, STRATA_OP(max(a, n.dims, n.k != 0)),
      gap_max),
  row("min", "min(a, axes, keepdims)", "min", reduction, STRATA_OP(min(a, n.dims, n.k != 0)),
      gap_min),
  // The movement primitives.
  row("transpose", "transpose(a, i, j)", "", axis_pair,
      STRATA_OP(transpose(a, n.ints[0], n.ints[1]))),
  row("permute", "permute(a, dims), not a transpose", "permute", cycle, STRATA_OP(permute(a, n.dims))),
  row("expand", "expand(a, shape)", "expand", expansion, STRATA_OP(expand(a, n.dims))),
  row("reshape", "reshape(a, shape)", "reshape", regrouping, STRATA_OP(reshape(a, n.dims))),
  row("slice", "slice(a, axis, start, stop, step)", "slice", slicing,
      STRATA_OP(slice(a, n.axis, bound(n.ints[0]), bound(n.ints[1]), n.ints[2]))),
  row("pad", "pad(a, pads)", "pad", padding, STRATA_OP(pad(a, pads_of(n)))),
  row("pad_value", "pad(a, pads, 0.5)", "", padding, STRATA_OP(pad(a, pads_of(n), 0.5))),
  row("concat", "concat({a, b}, axis)", "concat", concatenation, STRATA_OP(concat({a, b}, n.axis))),
  row("cast", "stop_gradient(a) + c - stop_gradient(c), c = cast(cast(a, f32), f64)", "cast", any,
      [](const ProgNode& n, const auto& a, const auto& b) {
        // The value is a exactly; the derivative flows through the two casts only.
        const auto c = cast(cast(a, f32), f64);
        (void)n;
        (void)b;
        return stop_gradient(a) + (c - stop_gradient(c));
      }, nullptr, true),
  row("cast_bool", "cast(a > 0, f64) * b", "", broadcast_pair,
      STRATA_OP(cast(a > 0.0, f64) * b), gap_step),
  // Contraction.
  row("matmul", "matmul(a, transpose(b)), [m, k] x [k, m]", "matmul", gram<2, 2>,
      STRATA_OP(matmul(a, transpose(b, -1, -2)))),
  row("matmul_batched", "matmul(a, transpose(b)), batch dims broadcast", "matmul", gram<3, 4>,
      STRATA_OP(matmul(a, transpose(b, -1, -2)))),
  row("matmul_vector", "matmul(a, v), v 1-D (dot for a 1-D)", "", vector_pair,
      STRATA_OP(matmul(a, b))),
  // Indexing primitives.
  row("index_select", "index_select(a, axis, idx)", "index_select", gather,
      STRATA_OP(take(a, n.index[0], n.axis))),
  row("index_add", "index_add(a, axis, idx, b)", "index_add", scatter,
      [](const ProgNode& n, const auto& a, const auto& b) {
        using T = std::decay_t<decltype(a)>;
        return Prims<T>::index_add(a, n.axis, n.index[0], b);
      }),
  // The composites of diff/.
  row("mean", "mean(a, axes, keepdims)", "", reduction, STRATA_OP(mean(a, n.dims, n.k != 0))),
  row("var", "var(a, axes, keepdims)", "", reduction, STRATA_OP(var(a, n.dims, n.k != 0))),
  row("std", "std(a, axes, keepdims)", "", spread_reduction, STRATA_OP(std(a, n.dims, n.k != 0)),
      gap_std),
  row("norm", "norm(a, axes, keepdims)", "", reduction, STRATA_OP(norm(a, n.dims, n.k != 0)),
      gap_norm),
  row("logsumexp", "logsumexp(a, axes, keepdims)", "", reduction,
      STRATA_OP(logsumexp(a, n.dims, n.k != 0))),
  row("softmax", "softmax(a, axis)", "", one_axis, STRATA_OP(softmax(a, n.axis))),
  row("log_softmax", "log_softmax(a, axis)", "", one_axis, STRATA_OP(log_softmax(a, n.axis))),
  row("sigmoid", "sigmoid(a)", "", any, STRATA_OP(sigmoid(a))),
  row("relu", "relu(a)", "", any, STRATA_OP(relu(a)), gap_zero),
  row("gelu", "gelu(a)", "", any, STRATA_OP(gelu(a))),
  row("silu", "silu(a)", "", any, STRATA_OP(silu(a))),
  row("softplus", "softplus(a)", "", any, STRATA_OP(softplus(a))),
  row("clamp", "clamp(a, lo, hi)", "", bounds, STRATA_OP(clamp(a, n.k, double(n.ints[0]) / 4)),
      gap_clamp),
  row("scalars", "a * 2.5 + 1 / (a*a + 1) - 0.5", "", any,
      STRATA_OP(a * 2.5 + 1.0 / (a * a + 1.0) - 0.5)),
  row("stack", "stack({a, b}, axis)", "", stacking, STRATA_OP(stack({a, b}, n.axis))),
  row("split", "concat(reversed(split(a, sizes, axis)), axis)", "", splitting,
      [](const ProgNode& n, const auto& a, const auto& b) {
        auto parts = split(a, std::vector<int64_t>(n.dims.begin(), n.dims.end()), n.axis);
        std::reverse(parts.begin(), parts.end());
        (void)b;
        return concat(parts, n.axis);
      }),
  row("flip", "flip(a, axis)", "", one_axis, STRATA_OP(flip(a, n.axis))),
  row("tril", "tril(a, k)", "", band, STRATA_OP(tril(a, int64_t(n.k)))),
  row("triu", "triu(a, k)", "", band, STRATA_OP(triu(a, int64_t(n.k)))),
  row("unsqueeze", "unsqueeze(a, axis)", "", new_axis, STRATA_OP(unsqueeze(a, n.axis))),
  row("squeeze", "squeeze(a, axis)", "", unit_axis, STRATA_OP(squeeze(a, n.axis))),
  row("flatten", "flatten(a)", "", any, STRATA_OP(flatten(a))),
  row("sum_to", "sum_to(a, shape)", "", reduction_target, STRATA_OP(sum_to(a, n.dims))),
  row("ix", "a.ix(...): positions, slices, newaxis", "", basic_index,
      STRATA_OP(ix(a, index_spec(n)))),
  row("oix", "a.oix(...): positions, slices, index tensors, masks", "", outer_index,
      STRATA_OP(oix(a, index_spec(n)))),
  row("vix", "a.vix(...): index tensors broadcast together, masks", "", vectorized_index,
      STRATA_OP(vix(a, index_spec(n)))),
  row("take", "take(a, idx, axis), idx of shape [2, 2]", "", take_positions,
      STRATA_OP(take(a, n.index[0], n.axis))),
  // Custom rules.
  row("custom_jvp", "custom_jvp: a * sin(a)", "", any, STRATA_OP(kCustomJvp(a))),
  row("custom_vjp", "custom_vjp: a * tanh(b), b of a's shape", "", same_shape_pair,
      STRATA_OP(kCustomVjp(a, b))),
  row("checkpoint", "checkpoint: softplus(a) * b + sin(a)", "", broadcast_pair,
      STRATA_OP(kCheckpoint(a, b))),
  // Linear algebra (st::linalg), on the invertible M(a) of program_linalg.hpp.
  row("cholesky", "cholesky(M(a))", "cholesky", matrix_source,
      STRATA_OP(linalg::cholesky(well_posed(a)))),
  row("solve", "solve(M(a), b), through lu and two triangular solves", "lu",
      linear_system, STRATA_OP(linalg::solve(well_posed(a), b))),
  row("cho_solve", "cho_solve(cholesky(M(a)), b): two triangular solves", "triangular_solve",
      linear_system, STRATA_OP(linalg::cho_solve(linalg::cholesky(well_posed(a)), b))),
  row("inv", "inv(M(a)), from its LU factors", "lu_inverse", matrix_source,
      STRATA_OP(linalg::inv(well_posed(a)))),
  row("pinv", "pinv(M(a)), Golub and Pereyra's derivative", "pinv", matrix_source,
      STRATA_OP(linalg::pinv(well_posed(a)))),
  row("slogdet", "sign * logabsdet, slogdet(M(a)), from its LU factors", "logabsdet",
      matrix_source,
      [](const ProgNode& n, const auto& a, const auto& b) {
        const auto [sign, logabsdet] = linalg::slogdet(well_posed(a));
        (void)n;
        (void)b;
        return sign * logabsdet;
      }),
  row("eigvalsh", "eigvalsh(M(a))", "eigh", matrix_source,
      STRATA_OP(linalg::eigvalsh(well_posed(a))), gap_eigenvalues),
  row("svdvals", "svdvals(M(a))", "svd", matrix_source,
      STRATA_OP(linalg::svdvals(well_posed(a))), gap_singular_values),
  row("qr", "q + r of qr(M(a)), r's diagonal made positive", "qr", matrix_source,
      STRATA_OP(qr_positive(well_posed(a)))),
  // The window primitives (diff/movement.hpp): a view and its transpose, col2im.
  row("windows", "windows(a, kernel, stride, dilation) over the last 1 or 2 axes", "windows",
      windowing, [](const ProgNode& n, const auto& a, const auto& b) {
        using T = std::decay_t<decltype(a)>;
        (void)b;
        return Prims<T>::windows(a, window_of(n));
      }),
  row("fold", "fold(sin(windows(a, w)), a's windowed sizes): overlaps summed", "fold", windowing,
      [](const ProgNode& n, const auto& a, const auto& b) {
        using T = std::decay_t<decltype(a)>;
        (void)b;
        const Window w = window_of(n);
        return Prims<T>::fold(sin(Prims<T>::windows(a, w)), w,
                              windowed_sizes(a.shape(), w.kernel.ndim()));
      }),
};
// clang-format on
#undef STRATA_OP

/// Row I of the table at level T (one function per row: the optimiser sees each alone).
template <Diffable T, std::size_t I>
T apply_row(const ProgNode& n, const T& a, const T& b) {
  return std::get<I>(kProgramOps).apply(n, a, b);
}

/// Row n.op applied to a and b at level T.
template <Diffable T>
T apply_op(const ProgNode& n, const T& a, const T& b) {
  using Fn = T (*)(const ProgNode&, const T&, const T&);
  static constexpr auto rows = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<Fn, sizeof...(I)>{&apply_row<T, I>...};
  }
  (std::make_index_sequence<std::tuple_size_v<std::remove_const_t<decltype(kProgramOps)>>>{});
  return rows[std::size_t(n.op)](n, a, b);
}

}  // namespace strata::testing::program

namespace strata::testing {

template <Diffable T>
T run_program(const Program& p, const T& x, const T& y, std::vector<T>* trace) {
  // Into *trace as it goes, so a caller that catches an op's error sees the values before it.
  std::vector<T> local;
  std::vector<T>& v = trace ? *trace : local;
  v.clear();
  v.reserve(p.nodes.size());
  for (const ProgNode& n : p.nodes) {
    if (n.op < 0) {
      v.push_back(v.empty() ? x : y);
    } else {
      const T& a = v[std::size_t(n.a)];
      v.push_back(program::apply_op(n, a, n.b >= 0 ? v[std::size_t(n.b)] : a));
    }
  }
  T out = v.back();
  for (int i : p.sinks) out = out + sum(v[std::size_t(i)]);
  return out;
}

}  // namespace strata::testing
