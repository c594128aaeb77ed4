// SPDX-License-Identifier: MIT
#pragma once
/// The functors of the unary ops, one per row of STRATA_UNARY_OPS
/// (raw/primitives.hpp), for both devices.
#include <math.h>

#include "core/hd.hpp"
#include "raw/scalar/arith.hpp"

namespace strata::detail::scalar {

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
struct Abs {  // floats: fabs, so abs(-0) is +0 (numpy.abs, torch.abs); integers wrap at the minimum
  STRATA_HD float operator()(float v) const { return ::fabsf(v); }
  STRATA_HD double operator()(double v) const { return ::fabs(v); }
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

}  // namespace strata::detail::scalar
