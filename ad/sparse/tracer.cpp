// SPDX-License-Identifier: MIT
// The sparsity tracer's values, its elementwise, reduction and selection primitives, and its
// hooks (ad/sparse/tracer.hpp has the table of what each propagates). The movement and index
// primitives are in tracer_movement.cpp; the products, the triangular solve and the
// factorisations in tracer_linalg.cpp.
#include <algorithm>
#include <optional>

#include "ad/sparse/tracer_support.hpp"

namespace strata {

using detail::fail;
using detail::gather;
using detail::pairs_of;
using detail::Sets;
using detail::unite;
using detail::sparsity::host_positions;
using detail::sparsity::positions;
using S = SparsityTracer;
using T = Prims<Tensor>;

SparsityTracer::SparsityTracer(Tensor value) : value_(std::move(value)) {
  if (!value_.defined())
    fail<ValueError>("sparsity tracer", "undefined tensor (default-constructed)");
  shape_ = value_.shape();
  dtype_ = value_.dtype();
  device_ = value_.device();
}

// Only floating values carry sets: an integer or bool value has no derivative.
SparsityTracer::SparsityTracer(Shape shape, DType dtype, Device device, Sets deps, Sets pairs,
                               bool second_order)
    : shape_(std::move(shape)),
      dtype_(dtype),
      device_(device),
      deps_(is_floating(dtype) ? std::move(deps) : nullptr),
      pairs_(is_floating(dtype) && second_order ? std::move(pairs) : nullptr),
      second_order_(second_order) {}

SparsityTracer SparsityTracer::input(const Shape& shape, DType dtype, Device device,
                                     bool second_order) {
  const int64_t n = checked_numel(shape, "sparsity tracer");
  return S(shape, dtype, device, detail::singletons(n), nullptr, second_order);
}

const Tensor& SparsityTracer::value() const {
  if (!known()) {
    detail::tracer_has_no_values("reading a value (st::plain, item(), an `if` on a comparison)");
  }
  return value_;
}

namespace {

using detail::sparsity::require_same_device;
using detail::sparsity::require_same_dtype;
using detail::sparsity::require_where_operands;

/// How an elementwise op's output depends on its operands (the second-order pairs it adds).
enum class Dependence {
  none,      ///< piecewise constant: no derivative (sign, comparisons, logical ops)
  linear,    ///< linear or piecewise linear: the operands' sets, no new pairs
  product,   ///< a * b: grad(a) x grad(b)
  quotient,  ///< a / b: grad(a) x grad(b) and grad(b) x grad(b)
  nonlinear  ///< any other: grad x grad of the operands together
};

/// Each unary op's dependence, one case each (no default: -Werror=switch names a new op).
Dependence dependence(UnaryOp op) {
  switch (op) {
    case UnaryOp::neg:
    case UnaryOp::abs:  // |x|'' = 0 away from 0
      return Dependence::linear;
    case UnaryOp::exp:
    case UnaryOp::log:
    case UnaryOp::sin:
    case UnaryOp::cos:
    case UnaryOp::sqrt:
    case UnaryOp::tanh:
    case UnaryOp::log1p:
    case UnaryOp::expm1:
    case UnaryOp::erf:
      return Dependence::nonlinear;
    case UnaryOp::sign:
    case UnaryOp::logical_not:
      return Dependence::none;
  }
  return Dependence::none;  // unreachable: every op has its case above
}

/// Each binary op's dependence, one case each; the ops of Dependence::none give bool.
Dependence dependence(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
    case BinaryOp::sub:
    case BinaryOp::maximum:  // piecewise linear
    case BinaryOp::minimum:
      return Dependence::linear;
    case BinaryOp::mul:
    case BinaryOp::safe_mul:
      return Dependence::product;
    case BinaryOp::div:
    case BinaryOp::safe_div:
      return Dependence::quotient;
    case BinaryOp::pow:
      return Dependence::nonlinear;
    case BinaryOp::eq:
    case BinaryOp::ne:
    case BinaryOp::lt:
    case BinaryOp::le:
    case BinaryOp::gt:
    case BinaryOp::ge:
    case BinaryOp::logical_and:
    case BinaryOp::logical_or:
      return Dependence::none;
  }
  return Dependence::none;  // unreachable
}

/// The checks of the raw binary primitive `op`: one device, shape and dtype, one the op admits.
void require_binary_operands(BinaryOp op, const S& a, const S& b) {
  const std::string_view name = op_name(op);
  require_same_device(a, b, name);
  detail::require_same_shape(a.shape(), b.shape(), name);
  require_same_dtype(a, b, name);
  detail::check_dtype(op, a.dtype());
}

/// The positions where the known value v is not zero (i, or -1 where it is), or nothing
/// when it has no zero: a product with a known zero depends on nothing.
std::optional<std::vector<int64_t>> nonzero_positions(const Tensor& v) {
  const std::vector<double> values = v.to_vector<double>();
  if (std::find(values.begin(), values.end(), 0.0) == values.end()) return std::nullopt;
  std::vector<int64_t> from(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) from[i] = values[i] != 0.0 ? int64_t(i) : -1;
  return from;
}

/// A value of x's shape and device that depends on nothing and has no known value.
S unknown(const Shape& shape, DType dtype, Device device, bool second_order) {
  return S(shape, dtype, device, nullptr, nullptr, second_order);
}

/// sum or max over axes: the union over the reduced elements.
S reduced(const S& x, const Shape& axes, bool keepdims, ReduceOp op) {
  if (x.known()) {
    return S(op == ReduceOp::sum ? T::sum(x.value(), axes, keepdims)
                                 : T::max(x.value(), axes, keepdims));
  }
  // The raw reduction of a stand-in whose dims are at most 1 checks the axes (range,
  // repeats, an empty axis for max) as on a Tensor, and gives the result's dtype.
  Shape small;
  for (int64_t d : x.shape()) small.push_back(std::min<int64_t>(d, 1));
  const Tensor zero = zeros(small, x.dtype(), Device::cpu());
  const Tensor probe =
      op == ReduceOp::sum ? T::sum(zero, axes, keepdims) : T::max(zero, axes, keepdims);
  const std::string_view name = op == ReduceOp::sum ? "sum" : "max";
  std::vector<bool> is_reduced(static_cast<std::size_t>(x.ndim()), false);
  for (int64_t a : axes) is_reduced[std::size_t(normalize_axis(a, x.ndim(), name))] = true;
  Shape keep = x.shape(), out;
  for (std::size_t i = 0; i < is_reduced.size(); ++i) {
    if (is_reduced[i]) keep[i] = 1;
    if (keepdims || !is_reduced[i]) out.push_back(keep[i]);
  }
  const int64_t n_out = checked_numel(out, name);
  const std::vector<int64_t> dest = host_positions(T::expand(positions(keep), x.shape()));
  return S(out, probe.dtype(), x.device(), detail::reduce(x.deps(), dest, n_out),
           detail::reduce(x.pairs(), dest, n_out), x.second_order());
}

}  // namespace

S Prims<S>::unary(UnaryOp op, const S& x) {
  if (x.known()) return S(T::unary(op, x.value()));
  detail::check_dtype(op, x.dtype());
  switch (dependence(op)) {
    case Dependence::none:
      return unknown(x.shape(), x.dtype(), x.device(), x.second_order());
    case Dependence::linear:
    case Dependence::product:  // (not a unary dependence)
    case Dependence::quotient:
      return x;
    case Dependence::nonlinear: {
      Sets pairs = x.second_order() ? unite(x.pairs(), pairs_of(x.deps(), x.deps())) : nullptr;
      return S(x.shape(), x.dtype(), x.device(), x.deps(), std::move(pairs), x.second_order());
    }
  }
  return x;  // unreachable
}

S Prims<S>::binary(BinaryOp op, const S& a, const S& b) {
  if (a.known() && b.known()) return S(T::binary(op, a.value(), b.value()));
  require_binary_operands(op, a, b);
  const bool second = a.second_order() || b.second_order();
  Sets da = a.deps(), db = b.deps(), pa = a.pairs(), pb = b.pairs();
  const Dependence d = dependence(op);
  if (d == Dependence::none) return unknown(a.shape(), DType::b8, a.device(), second);
  if (d == Dependence::product) {
    // A known factor's zeros make the product's elements there constant.
    if (b.known()) {
      if (auto from = nonzero_positions(b.value())) da = gather(da, *from), pa = gather(pa, *from);
    }
    if (a.known()) {
      if (auto from = nonzero_positions(a.value())) db = gather(db, *from), pb = gather(pb, *from);
    }
  }
  Sets deps = unite(da, db), pairs;
  if (second) {
    switch (d) {
      case Dependence::none:
      case Dependence::linear:
        pairs = unite(pa, pb);
        break;
      case Dependence::product:
        pairs = unite({pa, pb, pairs_of(da, db)});
        break;
      case Dependence::quotient:
        pairs = unite({pa, pb, pairs_of(da, db), pairs_of(db, db)});
        break;
      case Dependence::nonlinear:
        pairs = unite({pa, pb, pairs_of(deps, deps)});
        break;
    }
  }
  return S(a.shape(), a.dtype(), a.device(), std::move(deps), std::move(pairs), second);
}

S Prims<S>::where(const Tensor& cond, const S& a, const S& b) {
  if (a.known() && b.known()) return S(T::where(cond, a.value(), b.value()));
  require_where_operands(cond.dtype(), cond.shape(), a, b);
  // The condition is known: each element is exactly one branch's.
  const std::vector<bool> c = cond.to_vector<bool>();
  std::vector<int64_t> from_a(c.size()), from_b(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    from_a[i] = c[i] ? int64_t(i) : -1;
    from_b[i] = c[i] ? -1 : int64_t(i);
  }
  return S(a.shape(), a.dtype(), a.device(),
           unite(gather(a.deps(), from_a), gather(b.deps(), from_b)),
           unite(gather(a.pairs(), from_a), gather(b.pairs(), from_b)),
           a.second_order() || b.second_order());
}

S Prims<S>::sum(const S& x, const Shape& axes, bool keepdims) {
  return reduced(x, axes, keepdims, ReduceOp::sum);
}

S Prims<S>::max(const S& x, const Shape& axes, bool keepdims) {
  return reduced(x, axes, keepdims, ReduceOp::max);
}

S Prims<S>::detach(const S& x) {
  if (x.known()) return x;
  return unknown(x.shape(), x.dtype(), x.device(), x.second_order());
}

S Prims<S>::constant_binary(BinaryOp op, const S& a, const S& b) {
  if (a.known() && b.known()) return S(T::binary(op, a.value(), b.value()));
  require_binary_operands(op, a, b);
  const DType dtype = dependence(op) == Dependence::none ? DType::b8 : a.dtype();
  return unknown(a.shape(), dtype, a.device(), a.second_order() || b.second_order());
}

S Prims<S>::constant_unary(UnaryOp op, const S& x) {
  if (x.known()) return S(T::unary(op, x.value()));
  detail::check_dtype(op, x.dtype());
  return unknown(x.shape(), x.dtype(), x.device(), x.second_order());
}

S Prims<S>::select(const S& cond, const S& a, const S& b) {
  if (cond.known()) return where(cond.value(), a, b);
  require_where_operands(cond.dtype(), cond.shape(), a, b);
  // The condition depends on the inputs: either branch may be taken, at any x.
  return S(a.shape(), a.dtype(), a.device(), unite(a.deps(), b.deps()), unite(a.pairs(), b.pairs()),
           a.second_order() || b.second_order());
}

}  // namespace strata
