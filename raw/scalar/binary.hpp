// SPDX-License-Identifier: MIT
#pragma once
/// The functors of the binary ops, one per row of STRATA_BINARY_OPS
/// (raw/primitives.hpp), and those of the fused in-place updates (axpby_,
/// adam_step_), for both devices.
#include <math.h>

#include <type_traits>

#include "core/hd.hpp"
#include "raw/primitives.hpp"
#include "raw/scalar/arith.hpp"
#include "raw/scalar/unary.hpp"

namespace strata::detail::scalar {

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
      // b == 0 cannot reach a kernel (raw/ops/); 0 keeps the function total.
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

}  // namespace strata::detail::scalar
