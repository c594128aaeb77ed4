// SPDX-License-Identifier: MIT
#pragma once
/// Sparse Jacobians and Hessians: find the pattern by running f once on the sparsity tracer
/// (st::jacobian_sparsity, st::hessian_sparsity), colour it (ad/sparse/colouring.hpp), then
/// evaluate one batched pass with one direction per colour, as st::jacfwd batches its basis
/// vectors, and read each entry back into a SparseMatrix (CSR). The pattern and colouring
/// are a SparsePlan, computed once and reused at every x.
///
///   st::sparse_jacfwd   Forward<Batched<Tensor>>: f's jvp along each colour's columns
///   st::sparse_jacrev   Reverse<Batched<Tensor>>: f's vjp along each colour's rows
///   st::sparse_hessian  forward over reverse: the gradient's jvp (an hvp) along each colour
///
/// x is one 1-D float tensor [n] (ShapeError otherwise: reshape inside f); a Jacobian is
/// out.numel() x n, its rows f's output elements in row-major order.
#include <string_view>

#include "ad/jacobian.hpp"
#include "ad/sparse/plan.hpp"
#include "ad/sparse/tracer.hpp"

namespace strata {
namespace detail {

/// The Jacobian pattern of the traced output y (one row per element) over n inputs.
SparsityPattern jacobian_pattern(const SparsityTracer& y, int64_t n);
/// The Hessian pattern (symmetric, n x n) of the traced one-element output y.
SparsityPattern hessian_pattern(const SparsityTracer& y, int64_t n);
/// ValueError / DTypeError / ShapeError unless x is a defined 1-D float tensor (and, for a
/// Hessian, has fewer than 2^31 elements, which pair keys need).
void require_sparse_input(const Tensor& x, std::string_view op, bool hessian);
/// require_sparse_input(x), and ValueError unless plan is for `mode` and for x.numel()
/// inputs: the plan's number of colours.
int64_t require_plan(const Tensor& x, const SparsePlan& plan, SparsePlan::Mode mode,
                     std::string_view op);
/// The result when the plan has no colours (its pattern has no entries): no values, of x's
/// dtype and device.
SparseMatrix no_entries(const SparsePlan& plan, const Tensor& x);
/// ShapeError unless f's output has as many elements (m) as the plan's pattern has rows.
void require_rows(const SparsePlan& plan, int64_t m, std::string_view op);
/// The SparseMatrix whose entries the plan reads from the compressed product [colours, len].
SparseMatrix decompress(const SparsePlan& plan, const Tensor& compressed);

/// f(x) for x of level L, as a value of L.
template <class L, class F>
L call_at(F& f, const L& x, std::string_view op) {
  return as_level<L>(call_function<L>(f, x), op);
}

/// x as the input of one batched forward pass tagged `tag`: its tangents are the plan's seeds
/// [colours, n], one direction per colour.
inline Forward<Batched<Tensor>> seeded(const Tensor& x, const SparsePlan& plan, uint64_t tag) {
  using B = Batched<Tensor>;
  return Forward<B>(B(x), B(plan.seeds(x.dtype(), x.device()), true), tag);
}

/// The compressed product a batched forward pass (tagged `tag`, c directions) gives: y's
/// tangents as [c, y.numel()], zeros when y does not depend on x (ValueError when y carries
/// another pass's tangents).
inline Tensor compressed_tangent(const Forward<Batched<Tensor>>& y, uint64_t tag, int64_t c) {
  if (y.tangent() && y.tag() != tag) common_tag({tag, y.tag()});  // throws
  if (!y.tangent()) return zeros({c, y.numel()}, y.dtype(), y.device());
  return reshape(y.tangent()->as_batch(c), {c, y.numel()});
}

}  // namespace detail

/// The pattern of f's Jacobian at every x: (i, j) is in it when output element i may depend
/// on input element j (both flattened row-major). f runs once on SparsityTracer values
/// (ad/sparse/tracer.hpp); the pattern is a superset of the nonzeros of every x's Jacobian
/// and exact for elementwise ops, stencils and bands. Control flow on values throws
/// ValueError (use st::where). Example: `st::jacobian_sparsity(f, x).nnz()`.
template <class F>
SparsityPattern jacobian_sparsity(F f, const Tensor& x) {
  detail::require_sparse_input(x, "jacobian_sparsity", false);
  const auto in = SparsityTracer::input(x.shape(), x.dtype(), x.device(), false);
  return detail::jacobian_pattern(detail::call_at(f, in, "jacobian_sparsity"), x.numel());
}

/// The pattern of the Hessian of f (one output element, ShapeError otherwise) at every x:
/// symmetric, (i, j) in it when d2 f / dx_i dx_j may be nonzero. f runs once on the tracer
/// with second-order pairs (ad/sparse/tracer.hpp lists which ops add pairs). Example:
/// `st::SparsityPattern p = st::hessian_sparsity(energy, u);`.
template <class F>
SparsityPattern hessian_sparsity(F f, const Tensor& x) {
  detail::require_sparse_input(x, "hessian_sparsity", true);
  const auto in = SparsityTracer::input(x.shape(), x.dtype(), x.device(), true);
  return detail::hessian_pattern(detail::call_at(f, in, "hessian_sparsity"), x.numel());
}

/// A plan for st::sparse_jacfwd: f's Jacobian pattern with its columns coloured.
template <class F>
SparsePlan sparse_jacfwd_plan(F f, const Tensor& x) {
  return SparsePlan::jacfwd(jacobian_sparsity(std::move(f), x));
}
/// A plan for st::sparse_jacrev: f's Jacobian pattern with its rows coloured.
template <class F>
SparsePlan sparse_jacrev_plan(F f, const Tensor& x) {
  return SparsePlan::jacrev(jacobian_sparsity(std::move(f), x));
}
/// A plan for st::sparse_hessian: f's Hessian pattern, star-coloured.
template <class F>
SparsePlan sparse_hessian_plan(F f, const Tensor& x) {
  return SparsePlan::hessian(hessian_sparsity(std::move(f), x));
}

/// The Jacobian of f at x on the plan's pattern, by forward mode: f runs once on
/// Forward<Batched<Tensor>> values whose tangents are the plan's colours (one direction per
/// colour), and each entry is read from the compressed product J S. ValueError when the
/// plan is not a jacfwd plan for x.numel() inputs, ShapeError when f's output size differs
/// from its rows. Example: `st::SparseMatrix J = st::sparse_jacfwd(residual, u, plan);`.
template <class F>
SparseMatrix sparse_jacfwd(F f, const Tensor& x, const SparsePlan& plan) {
  constexpr std::string_view op = "sparse_jacfwd";
  using B = Batched<Tensor>;
  const int64_t c = detail::require_plan(x, plan, SparsePlan::Mode::jacfwd, op);
  if (c == 0) return detail::no_entries(plan, x);
  const uint64_t tag = Forward<B>::new_tag();
  const Forward<B> y = detail::call_at(f, detail::seeded(x, plan, tag), op);
  detail::require_rows(plan, y.numel(), op);
  return detail::decompress(plan, detail::compressed_tangent(y, tag, c));
}

/// The Jacobian of f at x on the plan's pattern, by reverse mode: f is recorded once on
/// Reverse<Batched<Tensor>> values and one backward pass pulls back the plan's row colours
/// (one cotangent per colour) at once. Cheaper than sparse_jacfwd when rows colour better
/// than columns (a dense column). Errors as sparse_jacfwd's.
template <class F>
SparseMatrix sparse_jacrev(F f, const Tensor& x, const SparsePlan& plan) {
  constexpr std::string_view op = "sparse_jacrev";
  using B = Batched<Tensor>;
  const int64_t c = detail::require_plan(x, plan, SparsePlan::Mode::jacrev, op);
  if (c == 0) return detail::no_entries(plan, x);
  auto tape = std::make_shared<Tape<B>>();
  const Reverse<B> in(B(x), tape, tape->add_leaf());
  const Reverse<B> y = detail::recorded_output(detail::call_function<Reverse<B>>(f, in), tape, op);
  detail::require_rows(plan, y.numel(), op);
  std::vector<std::optional<B>> ct;
  if (!y.is_constant()) {
    const Tensor seeds = plan.seeds(y.dtype(), y.device());
    ct = tape->backward(y.id(), B(reshape(seeds, detail::concat_shapes({c}, y.shape())), true));
  }
  const std::size_t id = std::size_t(in.id());
  const Tensor g = id < ct.size() && ct[id]
                       ? ct[id]->as_batch(c)
                       : zeros(detail::concat_shapes({c}, x.shape()), x.dtype(), x.device());
  return detail::decompress(plan, reshape(g, {c, x.numel()}));
}

/// The Hessian of f (one output element, ShapeError otherwise) at x on the plan's symmetric
/// pattern: forward over reverse, the gradient's jvp along the plan's star colours batched
/// (one Hessian-vector product per colour, one pass), each entry read directly from H S.
/// Example: `auto plan = st::sparse_hessian_plan(f, x);` then
/// `st::SparseMatrix H = st::sparse_hessian(f, x, plan);` at each Newton step.
template <class F>
SparseMatrix sparse_hessian(F f, const Tensor& x, const SparsePlan& plan) {
  constexpr std::string_view op = "sparse_hessian";
  using B = Batched<Tensor>;
  const int64_t c = detail::require_plan(x, plan, SparsePlan::Mode::hessian, op);
  if (c == 0) return detail::no_entries(plan, x);
  auto scalar_f = [&f, op](const auto& a) {
    using L = std::remove_cvref_t<decltype(a)>;
    const L y = detail::call_at(f, a, op);
    detail::require_single_element(y.shape(), op);
    return y;
  };
  const uint64_t tag = Forward<B>::new_tag();
  const Forward<B> g = grad(scalar_f, detail::seeded(x, plan, tag));
  return detail::decompress(plan, detail::compressed_tangent(g, tag, c));
}

/// sparse_jacfwd with the plan computed here (trace and colouring: reuse a plan when x
/// changes but the function does not). Example: `st::sparse_jacfwd(f, x).to_dense()`.
template <class F>
SparseMatrix sparse_jacfwd(F f, const Tensor& x) {
  detail::require_sparse_input(x, "sparse_jacfwd", false);  // errors name the function called
  const SparsePlan plan = sparse_jacfwd_plan(f, x);
  return sparse_jacfwd(std::move(f), x, plan);
}
/// sparse_jacrev with the plan computed here.
template <class F>
SparseMatrix sparse_jacrev(F f, const Tensor& x) {
  detail::require_sparse_input(x, "sparse_jacrev", false);  // errors name the function called
  const SparsePlan plan = sparse_jacrev_plan(f, x);
  return sparse_jacrev(std::move(f), x, plan);
}
/// sparse_hessian with the plan computed here.
template <class F>
SparseMatrix sparse_hessian(F f, const Tensor& x) {
  detail::require_sparse_input(x, "sparse_hessian", true);  // errors name the function called
  const SparsePlan plan = sparse_hessian_plan(f, x);
  return sparse_hessian(std::move(f), x, plan);
}

}  // namespace strata
