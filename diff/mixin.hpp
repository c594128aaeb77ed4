// SPDX-License-Identifier: MIT
#pragma once
/// Ops<D>: the one mixin that gives every Diffable type D every op as a
/// method (`x.exp()`, `x.sum({1})`, `a.matmul(b)`), each forwarding to the
/// free function of the same name in diff/ops.hpp, where the bodies live.
#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace strata {

class Index;

/// One axis given as a C++ integer (`st::sum(x, 1)`, `x.sum(-1)`); bool is
/// excluded so that a keepdims flag is never read as an axis. A braced list
/// (`{1}`, `{}`) never deduces an integer, so it always means a Shape of axes.
template <class I>
concept AxisIndex = std::integral<I> && !std::same_as<I, bool>;

template <class D>
class Ops {
 public:
  // elementwise
  D exp() const;
  D log() const;
  D sin() const;
  D cos() const;
  D sqrt() const;
  D tanh() const;
  D abs() const;
  D sign() const;
  D sigmoid() const;
  D relu() const;
  D gelu() const;
  D silu() const;
  D softplus() const;
  D pow(double exponent) const;
  D clamp(double lo, double hi) const;
  // reductions (an empty axes list reduces every axis)
  D sum(const Shape& axes = {}, bool keepdims = false) const;
  D mean(const Shape& axes = {}, bool keepdims = false) const;
  D max(const Shape& axes = {}, bool keepdims = false) const;
  D min(const Shape& axes = {}, bool keepdims = false) const;
  D var(const Shape& axes = {}, bool keepdims = false) const;
  D std(const Shape& axes = {}, bool keepdims = false) const;
  D norm() const;
  D logsumexp(const Shape& axes = {}, bool keepdims = false) const;
  /// The 2-norm over `axes` (numpy.linalg.norm of the flattened axes).
  D norm(const Shape& axes, bool keepdims = false) const;
  /// The same reductions over one axis given as an integer, negative from the end:
  /// x.sum(1), x.mean(-1, true) (a list of axes is the Shape overload above).
  template <AxisIndex I>
  D sum(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D mean(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D max(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D min(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D var(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D std(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D norm(I axis, bool keepdims = false) const;
  template <AxisIndex I>
  D logsumexp(I axis, bool keepdims = false) const;
  /// Position of the first maximum (minimum) along axis, an i64 constant.
  D argmax(int64_t axis, bool keepdims = false) const;
  D argmin(int64_t axis, bool keepdims = false) const;
  D softmax(int64_t axis) const;
  D log_softmax(int64_t axis) const;
  // movement
  D reshape(const Shape& shape) const;
  D permute(const Shape& dims) const;
  D transpose(int64_t a, int64_t b) const;
  D squeeze(int64_t axis) const;
  D unsqueeze(int64_t axis) const;
  D flatten() const;
  D expand(const Shape& shape) const;
  D flip(int64_t axis) const;
  D cast(DType dtype) const;
  // contraction
  D matmul(const D& other) const;
  D dot(const D& other) const;
  // indexing (diff/index.hpp): basic views, outer and vectorized fancy indexing
  template <class... I>
  D ix(const I&... idx) const;
  D ix(const std::vector<Index>& spec) const;
  template <class... I>
  D oix(const I&... idx) const;
  D oix(const std::vector<Index>& spec) const;
  template <class... I>
  D vix(const I&... idx) const;
  D vix(const std::vector<Index>& spec) const;

 private:
  const D& self() const { return static_cast<const D&>(*this); }
};

}  // namespace strata
