// SPDX-License-Identifier: MIT
#pragma once
/// The scalar semantics of strata, written once for both devices: one functor
/// per row of the op tables (raw/primitives.hpp), the casts, and the reducers.
/// The CPU loops (raw/cpu/) and the CUDA kernels (raw/cuda/) both instantiate
/// exactly these, so the CPU suite checks the arithmetic the GPU runs.
///
/// The rules, for every device:
///   - signed integers wrap (two's complement), as in NumPy and PyTorch;
///   - maximum, minimum, max, min: a NaN operand wins;
///   - integer division truncates toward zero; MIN / -1 wraps; the front end
///     (raw/ops.cpp) has rejected a zero divisor before a kernel runs;
///   - casts: floats to integers saturate and NaN becomes 0; anything to bool
///     is "!= 0";
///   - sums accumulate floats in double and integers (and bools) in wrapping
///     int64; argmax/argmin give the first position of the extreme, or of the
///     first NaN: ties go to the smaller position, whatever the combination order.
///
/// The CPU's vectorised kernels (raw/cpu/vmath*) replace some of these
/// functors on contiguous f32/f64 blocks; they are tested against them.
#include <math.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "core/hd.hpp"
#include "raw/primitives.hpp"

namespace strata::detail::scalar {

// --- casts --------------------------------------------------------------------

/// v converted to T with a defined result for every input: floats to integers
/// saturate (NaN becomes 0), anything to bool is "!= 0".
template <class T, class S>
STRATA_HD T convert(S v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != S(0);
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<S>) {
    if (v != v) return T(0);
    if (v <= S(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= S(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// --- wrapping integer arithmetic (signed overflow would be undefined) ---------

template <class T>
using Wide = std::make_unsigned_t<T>;

/// a + b, wrapping for integers.
template <class T>
STRATA_HD T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(a) + Wide<T>(b));
  } else {
    return a + b;
  }
}
/// a - b, wrapping for integers.
template <class T>
STRATA_HD T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(a) - Wide<T>(b));
  } else {
    return a - b;
  }
}
/// a * b, wrapping for integers.
template <class T>
STRATA_HD T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(a) * Wide<T>(b));
  } else {
    return a * b;
  }
}
/// -a, wrapping for integers (-MIN is MIN).
template <class T>
STRATA_HD T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) {
    return T(Wide<T>(0) - Wide<T>(a));
  } else {
    return -a;
  }
}
/// Element i of arange(start, step): start + i * step in double, the product and
/// the sum each rounded, on every device. nvcc would otherwise fuse them into one
/// FMA, whose single rounding gives 5.55e-17 instead of 0 for arange(-1, 1, 0.2)
/// at i = 5 (seen on the first GPU run).
STRATA_HD inline double arange_at(double start, double step, int64_t i) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(start, __dmul_rn(double(i), step));
#else
  return start + double(i) * step;
#endif
}

/// v is NaN (never, for integers and bool).
template <class T>
STRATA_HD bool is_nan(T v) {
  return v != v;
}

// --- unary functors (rows of STRATA_UNARY_OPS) -----------------------------------

struct Neg {
  template <class T>
  STRATA_HD T operator()(T v) const {
    return wrap_neg(v);
  }
};
struct Exp {
  STRATA_HD float operator()(float v) const { return ::expf(v); }
  STRATA_HD double operator()(double v) const { return ::exp(v); }
};
struct Log {
  STRATA_HD float operator()(float v) const { return ::logf(v); }
  STRATA_HD double operator()(double v) const { return ::log(v); }
};
struct Sin {
  STRATA_HD float operator()(float v) const { return ::sinf(v); }
  STRATA_HD double operator()(double v) const { return ::sin(v); }
};
struct Cos {
  STRATA_HD float operator()(float v) const { return ::cosf(v); }
  STRATA_HD double operator()(double v) const { return ::cos(v); }
};
struct Sqrt {
  STRATA_HD float operator()(float v) const { return ::sqrtf(v); }
  STRATA_HD double operator()(double v) const { return ::sqrt(v); }
};
struct Tanh {
  STRATA_HD float operator()(float v) const { return ::tanhf(v); }
  STRATA_HD double operator()(double v) const { return ::tanh(v); }
};
struct Abs {
  template <class T>
  STRATA_HD T operator()(T v) const {
    return v < T(0) ? wrap_neg(v) : v;
  }
};
struct Sign {
  template <class T>
  STRATA_HD T operator()(T v) const {
    return is_nan(v) ? v : T((T(0) < v) - (v < T(0)));
  }
};
struct LogicalNot {
  STRATA_HD bool operator()(bool v) const { return !v; }
};
struct Log1p {
  STRATA_HD float operator()(float v) const { return ::log1pf(v); }
  STRATA_HD double operator()(double v) const { return ::log1p(v); }
};
struct Expm1 {
  STRATA_HD float operator()(float v) const { return ::expm1f(v); }
  STRATA_HD double operator()(double v) const { return ::expm1(v); }
};
struct Erf {
  STRATA_HD float operator()(float v) const { return ::erff(v); }
  STRATA_HD double operator()(double v) const { return ::erf(v); }
};

// --- binary functors (rows of STRATA_BINARY_OPS) ---------------------------------

struct Add {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    return wrap_add(a, b);
  }
};
/// alpha * a + beta * b, in T (raw::axpby_).
template <class T>
struct Axpby {
  T alpha, beta;
  STRATA_HD T operator()(T a, T b) const { return alpha * a + beta * b; }
};
/// One Adam update of an element, in T (raw::adam_step_), the operations and
/// their order those of torch.optim.Adam's single-tensor step:
///   s = g + l2 p (only when l2 != 0);  p = decay p;
///   m = beta1 m + (1 - beta1) s;  v = beta2 v + (1 - beta2) s^2;
///   p = p + (-step) (m / (sqrt(v) / sqrt_bc2 + eps)).
template <class T>
struct AdamStep {
  T beta1, one_minus_beta1, beta2, one_minus_beta2, l2, decay, sqrt_bc2, eps, neg_step;
  /// Each coefficient rounded to T.
  explicit AdamStep(const AdamStepCoefficients& c)
      : beta1(T(c.beta1)),
        one_minus_beta1(T(1 - c.beta1)),
        beta2(T(c.beta2)),
        one_minus_beta2(T(1 - c.beta2)),
        l2(T(c.l2)),
        decay(T(c.decay)),
        sqrt_bc2(T(c.sqrt_bc2)),
        eps(T(c.eps)),
        neg_step(T(-c.step)) {}
  STRATA_HD void operator()(T& p, T& m, T& v, T g) const {
    // Both computed, then selected (l2 p is NaN for an infinite p even when l2 is 0):
    // no branch in the loop, which then vectorises.
    const T with_l2 = g + l2 * p;
    const T s = l2 != T(0) ? with_l2 : g;
    const T pd = p * decay;
    m = beta1 * m + one_minus_beta1 * s;
    v = beta2 * v + one_minus_beta2 * (s * s);
    p = pd + neg_step * (m / (Sqrt{}(v) / sqrt_bc2 + eps));
  }
};
struct Sub {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    return wrap_sub(a, b);
  }
};
struct Mul {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    return wrap_mul(a, b);
  }
};
struct Div {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // b == 0 cannot reach a kernel (raw/ops.cpp); 0 keeps the function total.
      if (b == T(0)) return T(0);
      return b == T(-1) ? wrap_neg(a) : T(a / b);
    } else {
      return a / b;
    }
  }
};
struct Pow {
  STRATA_HD float operator()(float a, float b) const { return ::powf(a, b); }
  STRATA_HD double operator()(double a, double b) const { return ::pow(a, b); }
};
struct Maximum {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return a + b;
    return a < b ? b : a;
  }
};
struct Minimum {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    if (is_nan(a) || is_nan(b)) return a + b;
    return b < a ? b : a;
  }
};
struct Eq {
  template <class T>
  STRATA_HD bool operator()(T a, T b) const {
    return a == b;
  }
};
struct Ne {
  template <class T>
  STRATA_HD bool operator()(T a, T b) const {
    return a != b;
  }
};
struct Lt {
  template <class T>
  STRATA_HD bool operator()(T a, T b) const {
    return a < b;
  }
};
struct Le {
  template <class T>
  STRATA_HD bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct Gt {
  template <class T>
  STRATA_HD bool operator()(T a, T b) const {
    return a > b;
  }
};
struct Ge {
  template <class T>
  STRATA_HD bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct LogicalAnd {
  STRATA_HD bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOr {
  STRATA_HD bool operator()(bool a, bool b) const { return a || b; }
};
/// a * b, except that 0 * inf and 0 * NaN (either order) are 0: a zero
/// (co)tangent stays zero through an infinite local derivative, and a local
/// derivative that is exactly zero passes no infinite tangent on. Every other
/// result is IEEE's, so only a NaN product needs the check (raw/cpu/elementwise.cpp
/// runs the vectorised product and fixes those).
struct SafeMul {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    const T p = a * b;
    return is_nan(p) && (a == T(0) || b == T(0)) ? T(0) : p;
  }
};
/// a / b, except that 0 / 0 and 0 / NaN are 0 (a NaN quotient of a zero a).
struct SafeDiv {
  template <class T>
  STRATA_HD T operator()(T a, T b) const {
    const T q = a / b;
    return is_nan(q) && a == T(0) ? T(0) : q;
  }
};

// --- reducers (rows of STRATA_REDUCE_OPS) -----------------------------------------
// A reducer folds values (with their positions) into an Acc: init(), step(acc,
// v, i), combine(acc, acc2) with acc2 covering later positions or, on a GPU
// block tree, any positions; finish(acc) is the output element.

/// sum: floats in double, integers and bools in wrapping int64.
template <class T>
struct SumReducer {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  using Out = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  STRATA_HD static Acc init() { return 0; }
  STRATA_HD static void step(Acc& a, T v, int64_t) { combine(a, Acc(v)); }
  STRATA_HD static void combine(Acc& a, const Acc& b) {
    if constexpr (std::is_floating_point_v<Acc>) {
      a += b;
    } else {
      a = int64_t(uint64_t(a) + uint64_t(b));
    }
  }
  STRATA_HD static Out finish(const Acc& a) { return Out(a); }
};

/// Is v a better extreme than best (Less: smaller)? A NaN beats everything.
template <class T, bool Less>
STRATA_HD bool better(T v, T best) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  return Less ? v < best : best < v;
}

/// max (Less = false) or min (Less = true); a NaN, once seen, stays.
template <class T, bool Less>
struct ExtremeReducer {
  struct Acc {
    T v;
    bool any;
  };
  using Out = T;
  STRATA_HD static Acc init() { return {T{}, false}; }
  STRATA_HD static void step(Acc& a, T v, int64_t) { combine(a, Acc{v, true}); }
  STRATA_HD static void combine(Acc& a, const Acc& b) {
    if (b.any && (!a.any || better<T, Less>(b.v, a.v))) a = b;
  }
  STRATA_HD static Out finish(const Acc& a) { return a.v; }
};

/// argmax (Less = false) or argmin: the position of the extreme; ties (and two
/// NaNs) go to the smaller position, so no combination order changes the answer.
template <class T, bool Less>
struct ArgReducer {
  struct Acc {
    T v;
    int64_t i;
  };
  using Out = int64_t;
  STRATA_HD static Acc init() { return {T{}, -1}; }
  STRATA_HD static void step(Acc& a, T v, int64_t i) { combine(a, Acc{v, i}); }
  STRATA_HD static void combine(Acc& a, const Acc& b) {
    if (b.i < 0) return;
    if (a.i < 0 || better<T, Less>(b.v, a.v) || (!better<T, Less>(a.v, b.v) && b.i < a.i)) a = b;
  }
  STRATA_HD static Out finish(const Acc& a) { return a.i; }
};

template <class T>
using MaxReducer = ExtremeReducer<T, false>;
template <class T>
using MinReducer = ExtremeReducer<T, true>;
template <class T>
using ArgmaxReducer = ArgReducer<T, false>;
template <class T>
using ArgminReducer = ArgReducer<T, true>;

// --- dispatch: from an op to its functor, generated from the tables ---------------

/// Calls f(Functor{}) with the functor of `op`'s row. Only rows whose dtype
/// class admits T are instantiated; any other op throws DTypeError (the front
/// end rejects those first). Host code; the callbacks launch or loop.
template <class T, class F>
void visit_unary(UnaryOp op, F&& f) {
  switch (op) {
#define STRATA_VISIT_ROW(name, Functor, dtypes, numpy, ...) \
  case UnaryOp::name:                                       \
    if constexpr (admits(DTypeClass::dtypes, dtype_v<T>)) { \
      return f(Functor{});                                  \
    }                                                       \
    break;
    STRATA_UNARY_OPS(STRATA_VISIT_ROW)
#undef STRATA_VISIT_ROW
  }
  fail<DTypeError>(op_name(op), "dtype ", dtype_name(dtype_v<T>), " is not supported");
}

/// As visit_unary, for a binary op.
template <class T, class F>
void visit_binary(BinaryOp op, F&& f) {
  switch (op) {
#define STRATA_VISIT_ROW(name, Functor, dtypes, numpy)      \
  case BinaryOp::name:                                      \
    if constexpr (admits(DTypeClass::dtypes, dtype_v<T>)) { \
      return f(Functor{});                                  \
    }                                                       \
    break;
    STRATA_BINARY_OPS(STRATA_VISIT_ROW)
#undef STRATA_VISIT_ROW
  }
  fail<DTypeError>(op_name(op), "dtype ", dtype_name(dtype_v<T>), " is not supported");
}

/// Calls f(type_tag<Reducer<T>>{}) with the reducer of `op`'s row.
template <class T, class F>
void visit_reduce(ReduceOp op, F&& f) {
  switch (op) {
#define STRATA_VISIT_ROW(name, Reducer, dtypes, numpy)      \
  case ReduceOp::name:                                      \
    if constexpr (admits(DTypeClass::dtypes, dtype_v<T>)) { \
      return f(type_tag<Reducer<T>>{});                     \
    }                                                       \
    break;
    STRATA_REDUCE_OPS(STRATA_VISIT_ROW)
#undef STRATA_VISIT_ROW
  }
  fail<DTypeError>(op_name(op), "dtype ", dtype_name(dtype_v<T>), " is not supported");
}

}  // namespace strata::detail::scalar
