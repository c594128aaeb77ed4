// SPDX-License-Identifier: MIT
#pragma once
/// Ops<D>: the one mixin that gives every Diffable type D every op as a
/// method (`x.exp()`, `x.sum({1})`, `a.matmul(b)`), each forwarding to the
/// free function of the same name. The bodies live with those functions, in the
/// header of their concern (diff/ops.hpp lists them), after the functions.
#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace strata {

class Index;
class Tensor;

/// One axis given as a C++ integer (`st::sum(x, 1)`, `x.sum(-1)`); bool is
/// excluded so that a keepdims flag is never read as an axis. A braced list
/// (`{1}`, `{}`) never deduces an integer, so it always means a Shape of axes.
template <class I>
concept AxisIndex = std::integral<I> && !std::same_as<I, bool>;

/// The mixin (CRTP) that gives the Diffable type D every op as a method returning D:
/// `x.exp()`, `x.sum({1})`, `a.matmul(b)`, `x.ix(0, st::all)`. Each method is the free
/// function of the same name (diff/ops.hpp includes them all) applied to `*this`, with
/// the same shapes, dtypes and exceptions.
template <class D>
class Ops {
 public:
  // elementwise
  /// e^x, elementwise (st::exp).
  D exp() const;
  /// The natural logarithm, elementwise (st::log).
  D log() const;
  /// sin(x), elementwise (st::sin).
  D sin() const;
  /// cos(x), elementwise (st::cos).
  D cos() const;
  /// The square root, elementwise (st::sqrt).
  D sqrt() const;
  /// tanh(x), elementwise (st::tanh).
  D tanh() const;
  /// log(1 + x), accurate near 0, elementwise (st::log1p).
  D log1p() const;
  /// e^x - 1, accurate near 0, elementwise (st::expm1).
  D expm1() const;
  /// The error function, elementwise (st::erf).
  D erf() const;
  /// |x|, elementwise, keeping the dtype (st::abs).
  D abs() const;
  /// -1, 0 or +1 by sign, elementwise (st::sign).
  D sign() const;
  /// 1 / (1 + e^-x), elementwise (st::sigmoid).
  D sigmoid() const;
  /// max(x, 0), elementwise (st::relu).
  D relu() const;
  /// GELU, tanh approximation, elementwise (st::gelu).
  D gelu() const;
  /// x * sigmoid(x), elementwise (st::silu).
  D silu() const;
  /// log(1 + e^x), elementwise and stable (st::softplus).
  D softplus() const;
  /// x ** exponent, elementwise (st::pow): `x.pow(2.0)`.
  D pow(double exponent) const;
  /// min(max(x, lo), hi), elementwise (st::clamp).
  D clamp(double lo, double hi) const;
  // reductions (an empty axes list reduces every axis)
  /// The sum over axes, every axis when empty (st::sum): `x.sum({1}, true)`.
  D sum(const Shape& axes = {}, bool keepdims = false) const;
  /// The mean over axes, every axis when empty (st::mean).
  D mean(const Shape& axes = {}, bool keepdims = false) const;
  /// The maximum over axes, every axis when empty (st::max).
  D max(const Shape& axes = {}, bool keepdims = false) const;
  /// The minimum over axes, every axis when empty (st::min).
  D min(const Shape& axes = {}, bool keepdims = false) const;
  /// The population variance over axes (st::var).
  D var(const Shape& axes = {}, bool keepdims = false) const;
  /// The population standard deviation over axes (st::std).
  D std(const Shape& axes = {}, bool keepdims = false) const;
  /// The Frobenius norm of all elements, 0-d (st::norm).
  D norm() const;
  /// log(sum(exp(x))) over axes, stable (st::logsumexp).
  D logsumexp(const Shape& axes = {}, bool keepdims = false) const;
  /// The 2-norm over `axes` (numpy.linalg.norm of the flattened axes).
  D norm(const Shape& axes, bool keepdims = false) const;
  /// sum over one axis given as an integer, negative from the end (st::sum): `x.sum(1)`;
  /// a list of axes is the Shape overload above. Throws IndexError for an axis out of range.
  template <AxisIndex I>
  D sum(I axis, bool keepdims = false) const;
  /// mean over one integer axis (st::mean): `x.mean(-1, true)`.
  template <AxisIndex I>
  D mean(I axis, bool keepdims = false) const;
  /// max over one integer axis (st::max): `x.max(0)`.
  template <AxisIndex I>
  D max(I axis, bool keepdims = false) const;
  /// min over one integer axis (st::min): `x.min(0)`.
  template <AxisIndex I>
  D min(I axis, bool keepdims = false) const;
  /// Population variance over one integer axis (st::var): `x.var(1)`.
  template <AxisIndex I>
  D var(I axis, bool keepdims = false) const;
  /// Population standard deviation over one integer axis (st::std): `x.std(1)`.
  template <AxisIndex I>
  D std(I axis, bool keepdims = false) const;
  /// The 2-norm over one integer axis (st::norm): `x.norm(-1)`.
  template <AxisIndex I>
  D norm(I axis, bool keepdims = false) const;
  /// log(sum(exp(x))) over one integer axis, stable (st::logsumexp): `x.logsumexp(-1)`.
  template <AxisIndex I>
  D logsumexp(I axis, bool keepdims = false) const;
  /// Position of the first maximum along axis, an i64 constant (st::argmax).
  D argmax(int64_t axis, bool keepdims = false) const;
  /// Position of the first minimum along axis, an i64 constant (st::argmin).
  D argmin(int64_t axis, bool keepdims = false) const;
  /// softmax along axis (st::softmax): `logits.softmax(-1)`.
  D softmax(int64_t axis) const;
  /// log(softmax) along axis, stable (st::log_softmax).
  D log_softmax(int64_t axis) const;
  // movement
  /// The same elements in a new shape, -1 inferred; a view when possible (st::reshape).
  D reshape(const Shape& shape) const;
  /// The axes reordered, a view (st::permute): `x.permute({1, 0})`.
  D permute(const Shape& dims) const;
  /// Axes a and b swapped, a view (st::transpose).
  D transpose(int64_t a, int64_t b) const;
  /// Without the size-1 axis `axis` (st::squeeze).
  D squeeze(int64_t axis) const;
  /// With a new size-1 axis at `axis` (st::unsqueeze).
  D unsqueeze(int64_t axis) const;
  /// As one dimension, row-major (st::flatten).
  D flatten() const;
  /// Broadcast to shape, a zero-stride view (st::expand).
  D expand(const Shape& shape) const;
  /// Reversed along axis, a view (st::flip).
  D flip(int64_t axis) const;
  /// Converted to dtype (st::cast): `i.cast(st::f32)`.
  D cast(DType dtype) const;
  /// Rotated by `shift` positions along axis, flattened when none (st::roll): `y.roll(1, 0)`.
  D roll(int64_t shift, std::optional<int64_t> axis = std::nullopt) const;
  // scans
  /// The running sum along axis, of x flattened when none (st::cumsum): `x.cumsum(1)`.
  D cumsum(std::optional<int64_t> axis = std::nullopt) const;
  /// The running product along axis, of x flattened when none (st::cumprod): `x.cumprod(1)`.
  D cumprod(std::optional<int64_t> axis = std::nullopt) const;
  // contraction
  /// The matrix product with other, numpy.matmul rules (st::matmul): `x.matmul(w)`.
  D matmul(const D& other) const;
  /// The inner product of two vectors, else matmul (st::dot).
  D dot(const D& other) const;
  // indexing (diff/index.hpp): basic views, outer and vectorized fancy indexing
  /// Basic indexing, a view (st::ix): `x.ix(0, st::slice(1, 3), st::newaxis)`.
  template <class... I>
  D ix(const I&... idx) const;
  /// Basic indexing with a spec built at run time (st::ix).
  D ix(const std::vector<Index>& spec) const;
  /// Outer indexing, each tensor index replaces its own axis (st::oix): `x.oix(i, st::all)`.
  template <class... I>
  D oix(const I&... idx) const;
  /// Outer indexing with a spec built at run time (st::oix).
  D oix(const std::vector<Index>& spec) const;
  /// Vectorized indexing, index tensors broadcast together (st::vix): `x.vix(i, j)`.
  template <class... I>
  D vix(const I&... idx) const;
  /// Vectorized indexing with a spec built at run time (st::vix).
  D vix(const std::vector<Index>& spec) const;
  /// The positions idx (i32 or i64, any shape) along axis, idx's dims replacing it
  /// (st::take): `table.take(ids, 0)`.
  D take(const Tensor& idx, int64_t axis) const;
  // reading a value
  /// Not available on a traced value: `x.item<T>()` reads a plain st::Tensor (which defines
  /// it), while x here is a value inside a transform. The primal value's element is
  /// `st::item<T>(x)` (st::value_of(x) is the plain tensor); it carries no derivative.
  template <class E>
  E item() const {
    static_assert(sizeof(E) == 0,
                  "x.item<T>() reads a plain st::Tensor, but x is a traced value (inside "
                  "st::grad, st::jvp, st::vmap...): read its primal value with "
                  "st::item<T>(x), or st::value_of(x) for the plain tensor (no derivative "
                  "flows through either)");
    return E{};
  }

 private:
  const D& self() const { return static_cast<const D&>(*this); }
};

}  // namespace strata
