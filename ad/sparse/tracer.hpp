// SPDX-License-Identifier: MIT
#pragma once
/// SparsityTracer: the sparsity-tracing level, in the spirit of Julia's
/// SparseConnectivityTracer. It computes no values: each element of a traced value carries
/// the set of input positions it depends on, and, in a Hessian trace, the set of pairs of
/// input positions its second derivative may involve. st::jacobian_sparsity and
/// st::hessian_sparsity (ad/sparse/sparse.hpp) run f once on it.
///
/// It is not built on the rules (they compute numbers): each Diffable primitive propagates
/// the sets directly (ad/sparse/tracer*.cpp), and the Diffable concept
/// makes that list complete. The patterns are global (true at every x, since no value is
/// read) and always a superset of the true nonzeros; they are exact for elementwise ops,
/// stencils, arrowheads and bands. First order:
///
///   elementwise        union of the operands' sets, per element; sign, logical_not, the
///                      comparisons and casts to integers or bool have none (zero derivative)
///   where(cond, a, b)  a plain cond selects per element; a traced one (computed from the
///                      inputs, so unknown) gives the union of both branches
///   sum, max           union over the reduced elements
///   movement, index    the sets move with the elements; padding has none; index_add and fold
///                      unite (fold: the windows that overlap at an element)
///   matmul             out[i, j] unites row i of a and column j of b; a known constant
///                      operand's zeros contribute nothing
///   triangular_solve   x's column (left) or row (right) unites a's whole matrix and b's
///                      column (row)
///   factorisations     every output of a matrix unites every element of the input matrix
///                      (lu_inverse and logabsdet: of a, their factors carry no sets)
///
/// Second order (pairs), as SparseConnectivityTracer's Hessian tracer: every op passes on the
/// union of its operands' pairs, and a nonlinear op adds the products of first-order sets:
///
///   linear, none added   neg, add, sub, sum, the movement and index ops, where/select, cast,
///                        matmul or triangular_solve with a constant matrix, and the
///                        piecewise-linear abs, maximum, minimum and max (second derivative
///                        zero away from their kinks)
///   a * b                grad(a) x grad(b)
///   a / b                grad(a) x grad(b) and grad(b) x grad(b)
///   pow, exp, log, sin, cos, sqrt, tanh, log1p, expm1, erf
///                        grad x grad of their operands together
///   matmul               sum over k of grad(a[i, k]) x grad(b[k, j])
///   triangular_solve, factorisations
///                        grad(matrix) x grad(matrix and right-hand side)
///
/// Values that do not depend on the inputs keep their values when they are known (constants,
/// captured tensors, and ops on those only, computed as on Tensor), so st::plain of them works.
/// Reading the value of anything that depends on the inputs (st::plain, an `if` on a
/// comparison) throws ValueError: the tracer has no values, so control flow that depends on
/// them cannot be traced; st::where selects between both branches instead.
#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "ad/sparse/sets.hpp"
#include "diff/ops.hpp"

namespace strata {

/// A value of the sparsity-tracing level: a shape, a dtype, a device, and for each element
/// the input positions it depends on (and, in a Hessian trace, the pairs of positions its
/// second derivative may involve); or a known constant, which keeps its value. The user's
/// generic lambda receives these from st::jacobian_sparsity and st::hessian_sparsity and
/// applies ops as on a Tensor.
class SparsityTracer : public Ops<SparsityTracer> {
 public:
  /// A 0-d f32 value that depends on nothing and has no known value.
  SparsityTracer() = default;
  /// A known constant: `value` (ValueError for an undefined tensor).
  explicit SparsityTracer(Tensor value);
  /// A traced value: deps[i] (pairs[i]) are element i's input positions (pairs of them);
  /// null sets are empty. `second_order`: pairs are tracked (a Hessian trace).
  SparsityTracer(Shape shape, DType dtype, Device device, detail::Sets deps, detail::Sets pairs,
                 bool second_order);

  /// The input of a trace: element i depends on position i (row-major) alone.
  static SparsityTracer input(const Shape& shape, DType dtype, Device device, bool second_order);

  /// The shape.
  Shape shape() const { return shape_; }
  /// The number of dimensions.
  int64_t ndim() const { return shape_.ndim(); }
  /// The number of elements.
  int64_t numel() const { return checked_numel(shape_, "numel"); }
  /// The dtype.
  DType dtype() const { return dtype_; }
  /// The device (of the traced input, or of the constant).
  Device device() const { return device_; }
  /// Whether the value is known (a constant that depends on no input).
  bool known() const { return value_.defined(); }
  /// The known value; ValueError (the tracer has no values) when it is not known.
  const Tensor& value() const;
  /// Each element's input positions (null: none).
  const detail::Sets& deps() const { return deps_; }
  /// Each element's pairs of input positions (detail::pair_key; null: none).
  const detail::Sets& pairs() const { return pairs_; }
  /// Whether this trace tracks pairs (st::hessian_sparsity).
  bool second_order() const { return second_order_; }

 private:
  Tensor value_;
  Shape shape_;
  DType dtype_ = DType::f32;
  Device device_ = Device::cpu();
  detail::Sets deps_, pairs_;
  bool second_order_ = false;
};

/// SparsityTracer sits above Tensor: a plain tensor mixes in as a known constant.
template <>
struct inner_level<SparsityTracer> {
  using type = Tensor;  ///< Tensor
};

namespace detail {
/// Throws the ValueError for reading a traced value: `what` needs values the tracer lacks.
[[noreturn]] void tracer_has_no_values(std::string_view what);
}  // namespace detail

/// The Diffable primitives of SparsityTracer: each propagates its operands' index sets (the
/// table at the top of this header), validating shapes and dtypes as the raw primitive
/// does; on known operands only, each is the primitive on Tensor.
template <>
struct Prims<SparsityTracer> {
  using S = SparsityTracer;  ///< the level these primitives act on

  /// @{
  /// The Diffable primitive of the same name (diff/diffable.hpp) on the index sets.
  static S unary(UnaryOp op, const S& x);
  static S binary(BinaryOp op, const S& a, const S& b);
  static S where(const Tensor& cond, const S& a, const S& b);
  static S sum(const S& x, const Shape& axes, bool keepdims);
  static S max(const S& x, const Shape& axes, bool keepdims);
  static S permute(const S& x, const Shape& dims);
  static S expand(const S& x, const Shape& shape);
  static S reshape(const S& x, const Shape& shape);
  static S slice(const S& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step);
  static S pad(const S& x, const Pads& pads);
  static S concat(const std::vector<S>& xs, int64_t axis);
  static S windows(const S& x, const Window& w);
  static S fold(const S& y, const Window& w, const Shape& spatial);
  static S cast(const S& x, DType dtype);
  static S matmul(const S& a, const S& b);
  static S index_select(const S& x, int64_t axis, const Tensor& idx);
  static S index_add(const S& x, int64_t axis, const Tensor& idx, const S& src);
  static S cholesky(const S& a);
  static S triangular_solve(const S& a, const S& b, TriangularSolve opts);
  static std::array<S, 3> lu(const S& a);
  static S lu_inverse(const S& a, const S& lu, const S& perm);
  static S logabsdet(const S& a, const S& lu, const S& perm);
  static S pinv(const S& a, double cutoff);
  static std::array<S, 2> eigh(const S& a);
  static std::array<S, 3> svd(const S& a);
  static std::array<S, 2> qr(const S& a);
  static S constant(const Tensor& t) { return S(t); }
  /// @}
  /// The known value; ValueError for a traced one (control flow on values cannot be traced).
  static const Tensor& plain(const S& x) { return x.value(); }

  /// @{
  /// The LevelHooks (diff/diffable.hpp): lift_inner(t) is t as a known constant. A traced
  /// value stands for every input at once and has no single plain value, so mapped(x) is
  /// true for it (st::where then selects through select(), uniting both branches); stored(x)
  /// throws for it as plain does. detach, constant_binary and constant_unary give values
  /// with no dependencies (known when their operands are).
  static S lift_inner(const Tensor& t) { return S(t); }
  static bool mapped(const S& x) { return !x.known(); }
  static const Tensor& stored(const S& x) { return x.value(); }
  static S detach(const S& x);
  static S constant_binary(BinaryOp op, const S& a, const S& b);
  static S constant_unary(UnaryOp op, const S& x);
  static S select(const S& cond, const S& a, const S& b);
  /// @}
};

static_assert(WrappingLevel<SparsityTracer>);

namespace detail {
/// The tracer has no values to check (diff/operands.hpp).
template <>
inline constexpr bool holds_values<SparsityTracer> = false;
}  // namespace detail

}  // namespace strata
