// SPDX-License-Identifier: MIT
#pragma once
/// The Diffable concept: the differentiable primitive set that every layer
/// of the AD stack implements (Tensor at the bottom, then Forward<T> and
/// Reverse<T> over any Diffable T). Composite ops (diff/ops.hpp) are written
/// once over it, so they work — and are differentiable — at every level.
///
/// A type T is Diffable when Prims<T> provides these (each is the named
/// raw primitive, lifted to T; shapes and dtypes are validated underneath):
///
///   unary(op, x)                    float math, neg, abs, sign
///   binary(op, a, b)                same shape and dtype; arithmetic, maximum, minimum
///   where(cond, a, b)               cond a plain bool Tensor of the same shape
///   sum(x, axes, keepdims)          max(x, axes, keepdims)
///   permute(x, dims)  expand(x, shape)  reshape(x, shape)
///   slice(x, axis, start, stop, step)   pad(x, pads) (zeros)   concat(xs, axis)
///   windows(x, w) (a view: [..., S...] -> [..., O..., K...])   fold(y, w, spatial) (its transpose)
///   cast(x, dtype)    matmul(a, b) (rank >= 2, batch dims broadcast)
///   index_select(x, axis, idx)      index_add(x, axis, idx, src)  (idx a plain Tensor)
///   cholesky(a)   triangular_solve(a, b, opts)   lu(a) -> 3   eigh(a) -> 2   svd(a) -> 3
///   qr(a) -> 2    (raw/linalg.hpp; "-> k": a std::array of k results)
///   lu_inverse(a, lu, perm)   logabsdet(a, lu, perm)   a^-1 and log|det a| from a's own LU
///                 factors (lu, perm without derivatives): the value from the factors, the
///                 derivative through a alone
///   pinv(a, cutoff)  the pseudo-inverse over the singular values above cutoff times the largest
///   constant(tensor)                a plain Tensor as a constant of T
///   plain(x)                        the plain Tensor value underneath every level
///
/// A level may also have the convolution primitives conv(x, w, g), conv_input_grad(gy, w,
/// x_shape, g) and conv_weight_grad(x, gy, w_shape, g) (Tensor and the rule levels do);
/// where it has none, diff/conv.hpp runs their composites on it.
///
/// plus the members shape(), dtype(), device().
#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "core/window.hpp"
#include "raw/primitives.hpp"

namespace strata {

class Tensor;

/// Specialised by every Diffable type: its primitives as static functions.
template <class T>
struct Prims;

/// (before, after) padding per axis, for st::pad: `{{1, 0}, {0, 2}}`.
using Pads = std::vector<std::pair<int64_t, int64_t>>;

template <class T>
concept Diffable = requires(const T& x, const Tensor& t, const Shape& s, UnaryOp u, BinaryOp b,
                            const std::vector<T>& xs, std::optional<int64_t> o, const Pads& p,
                            const Window& w) {
  { x.shape() } -> std::convertible_to<Shape>;
  { x.dtype() } -> std::convertible_to<DType>;
  { x.device() } -> std::convertible_to<Device>;
  { Prims<T>::unary(u, x) } -> std::same_as<T>;
  { Prims<T>::binary(b, x, x) } -> std::same_as<T>;
  { Prims<T>::where(t, x, x) } -> std::same_as<T>;
  { Prims<T>::sum(x, s, true) } -> std::same_as<T>;
  { Prims<T>::max(x, s, true) } -> std::same_as<T>;
  { Prims<T>::permute(x, s) } -> std::same_as<T>;
  { Prims<T>::expand(x, s) } -> std::same_as<T>;
  { Prims<T>::reshape(x, s) } -> std::same_as<T>;
  { Prims<T>::slice(x, int64_t{}, o, o, int64_t{}) } -> std::same_as<T>;
  { Prims<T>::pad(x, p) } -> std::same_as<T>;
  { Prims<T>::concat(xs, int64_t{}) } -> std::same_as<T>;
  { Prims<T>::windows(x, w) } -> std::same_as<T>;
  { Prims<T>::fold(x, w, s) } -> std::same_as<T>;
  { Prims<T>::cast(x, DType{}) } -> std::same_as<T>;
  { Prims<T>::matmul(x, x) } -> std::same_as<T>;
  { Prims<T>::index_select(x, int64_t{}, t) } -> std::same_as<T>;
  { Prims<T>::index_add(x, int64_t{}, t, x) } -> std::same_as<T>;
  { Prims<T>::cholesky(x) } -> std::same_as<T>;
  { Prims<T>::triangular_solve(x, x, TriangularSolve{}) } -> std::same_as<T>;
  { Prims<T>::lu(x) } -> std::same_as<std::array<T, 3>>;
  { Prims<T>::lu_inverse(x, x, x) } -> std::same_as<T>;
  { Prims<T>::logabsdet(x, x, x) } -> std::same_as<T>;
  { Prims<T>::pinv(x, double{}) } -> std::same_as<T>;
  { Prims<T>::eigh(x) } -> std::same_as<std::array<T, 2>>;
  { Prims<T>::svd(x) } -> std::same_as<std::array<T, 3>>;
  { Prims<T>::qr(x) } -> std::same_as<std::array<T, 2>>;
  { Prims<T>::constant(t) } -> std::same_as<T>;
  { Prims<T>::plain(x) } -> std::convertible_to<const Tensor&>;
};

/// The hooks every level provides besides its primitives, for values that are the same at
/// every level (masks, comparisons, stop_gradient) and for values that hold a batch of examples
/// at some level below (st::vmap), which have no single plain value:
///
///   mapped(x)                  whether x holds a batch axis at some level
///   stored(x)                  the plain tensor whose storage holds x's values (batch axes
///                              included), for the tape's version checks
///   detach(x)                  x's values as a constant of its level (batch axes kept)
///   constant_binary(op, a, b)  a comparison or logical op, as a constant of the level
///   constant_unary(op, x)      logical_not, as a constant of the level
///   select(cond, a, b)         where(cond, a, b) with cond a bool value of the level
///
/// Tensor static_asserts it; Forward<T>, Reverse<T> and Batched<T> static_assert WrappingLevel
/// (below), so a new level (the jit tracer) cannot silently miss one.
template <class T>
concept LevelHooks = Diffable<T> && requires(const T& x, UnaryOp u, BinaryOp b) {
  { Prims<T>::mapped(x) } -> std::same_as<bool>;
  { Prims<T>::stored(x) } -> std::convertible_to<const Tensor&>;
  { Prims<T>::detach(x) } -> std::same_as<T>;
  { Prims<T>::constant_binary(b, x, x) } -> std::same_as<T>;
  { Prims<T>::constant_unary(u, x) } -> std::same_as<T>;
  { Prims<T>::select(x, x, x) } -> std::same_as<T>;
};

// --- levels ---------------------------------------------------------------------
// Each dual type wraps one level below it: Reverse<Forward<Tensor>> contains
// Forward<Tensor>, which contains Tensor. A value of a lower level, or a C++
// scalar, mixes with a higher one as a constant of the higher level.

/// The level directly below T (void for Tensor).
template <class T>
struct inner_level {
  using type = void;  ///< the level below (void: T is the bottom level)
};
// ad/forward.hpp and ad/reverse.hpp specialise it for their dual types.

/// A level wrapping the level below it (Forward<T>, Reverse<T>, Batched<T>): the LevelHooks,
/// plus lift_inner(x), a value x of the level below as a constant of this one.
template <class T>
concept WrappingLevel = LevelHooks<T> && requires(const typename inner_level<T>::type& inner) {
  { Prims<T>::lift_inner(inner) } -> std::same_as<T>;
};

/// True when U is T or a level somewhere below T.
template <class T, class U>
constexpr bool contains_level() {
  if constexpr (std::is_same_v<T, U>) {
    return true;
  } else if constexpr (std::is_void_v<typename inner_level<T>::type>) {
    return false;
  } else {
    return contains_level<typename inner_level<T>::type, U>();
  }
}

/// A C++ number that mixes with tensors as a weak scalar.
template <class S>
concept Scalar = std::is_arithmetic_v<S>;

/// Lifts a value of a level below T (or T itself) to a T; lower levels become constants.
template <Diffable T, class U>
requires(contains_level<T, U>()) T lift(const U& u) {
  if constexpr (std::is_same_v<T, U>) {
    return u;
  } else {
    using Inner = typename inner_level<T>::type;
    return Prims<T>::lift_inner(lift<Inner>(u));
  }
}

/// Two levels of which neither contains the other, such as Reverse<Tensor> and
/// Batched<Tensor>. They meet only when a function given to an inner transform uses a value
/// of an outer transform that it captured: the order of the two transforms, which decides
/// how their levels nest, is not in the types. Reported by one static_assert
/// (detail::unnested_levels).
template <class A, class B>
concept UnnestedLevels =
    Diffable<A> && Diffable<B> && !contains_level<A, B>() && !contains_level<B, A>();

namespace detail {
/// Instantiated wherever two unnested levels meet (UnnestedLevels). Its one specialization is
/// instantiated once however many operations meet, so the compiler reports the message once.
template <class Never = void>
struct unnested_levels {
  static_assert(!std::is_void_v<Never>,
                "strata: values of two transforms whose levels do not nest (such as "
                "st::Reverse<st::Tensor> and st::Batched<st::Tensor>) met, in an operation or as "
                "a function's result: the function given to an inner transform uses a value of "
                "an outer transform that it captured. Pass the captured value to the inner "
                "transform as an argument instead: to st::vmap with in_axes st::none, "
                "st::vmap([&](const auto& w, const auto& x) { return f(w, x); }, {st::none, "
                "0})(w, X); to st::grad and the other transforms as one more argument, left out "
                "of st::argnums: st::grad(g, st::argnums<0>, x, w)");
};
/// void, named through T: a type that is known only when T is (std::void_t may be resolved
/// earlier), so that a use inside a template waits for the template's instantiation.
template <class T>
struct void_of {
  using type = void;  ///< void
};
/// Declared, never defined: the value of an operation on unnested levels, after
/// unnested_levels has failed compilation (the program never links, as it never compiles).
template <class T>
T unnested_value();
}  // namespace detail

/// Lifting between unnested levels (UnnestedLevels): the static_assert of
/// detail::unnested_levels, and no other error after it.
template <Diffable T, class U>
requires(UnnestedLevels<T, U>) T lift(const U&) {
  // Named through T, so that it is instantiated here, not where lift is defined; it is
  // unnested_levels<void> for every T and U, so the message comes once.
  [[maybe_unused]] detail::unnested_levels<typename detail::void_of<T>::type> report;
  return detail::unnested_value<T>();
}

/// The higher of two levels (one must contain the other); scalars take the other side.
template <class A, class B>
struct common_level;
/// A contains B: the common level is A.
template <class A, class B>
requires(!Scalar<A> && !Scalar<B> && contains_level<A, B>()) struct common_level<A, B> {
  using type = A;  ///< A
};
/// B contains A: the common level is B.
template <class A, class B>
requires(!Scalar<A> && !Scalar<B> && !std::is_same_v<A, B> &&
         contains_level<B, A>()) struct common_level<A, B> {
  using type = B;  ///< B
};
/// A tensor level and a C++ number: the tensor's level.
template <class A, Scalar B>
requires(!Scalar<A>) struct common_level<A, B> {
  using type = A;  ///< A
};
/// A C++ number and a tensor level: the tensor's level.
template <Scalar A, class B>
requires(!Scalar<B>) struct common_level<A, B> {
  using type = B;  ///< B
};
/// Two unnested levels: A stands in as the result, and lifting the other operand to it reports
/// the static_assert of detail::unnested_levels (in the operation's body, so that the
/// compiler shows where the operation is, and no error follows it).
template <class A, class B>
requires(UnnestedLevels<A, B>) struct common_level<A, B> {
  using type = A;  ///< A (the program does not compile)
};
/// The type of `a + b` for operands of types A and B: `common_level_t<Reverse<Tensor>, double>`
/// is Reverse<Tensor>.
template <class A, class B>
using common_level_t = typename common_level<A, B>::type;

}  // namespace strata
