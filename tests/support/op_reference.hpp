// SPDX-License-Identifier: MIT
#pragma once
/// The test table of the elementwise ops: for each row of the op tables
/// (raw/primitives.hpp), what it means in double precision and where its
/// derivatives are checked. The raw sweeps (tests/raw/elementwise.test.cpp),
/// the derivative sweep (tests/ad/primitives_unary.test.cpp) and the CUDA
/// parity suite iterate the op tables and read their rows here, so a new op
/// is one row in this file. The switches have no default: an op without a row
/// draws a -Wswitch warning, and its sweeps fail on the NaN returned after.
#include <cmath>
#include <limits>

#include <strata.hpp>

namespace strata::testing {

/// Where an op's derivatives are checked (and its inputs drawn from for parity).
enum class Domain {
  all,       ///< any real x
  positive,  ///< x > 0 (log, sqrt, log1p)
  nonzero,   ///< away from a kink at 0 (abs, sign)
  none,      ///< bool: no derivative
};

/// One unary row: the op in double precision, and its domain.
struct UnaryReference {
  double (*value)(double);  ///< the op's meaning in double precision
  Domain domain;            ///< where its derivatives are checked
};

/// The row of unary op `op`.
inline UnaryReference unary_reference(UnaryOp op) {
  switch (op) {
    case UnaryOp::neg:
      return {[](double x) { return -x; }, Domain::all};
    case UnaryOp::exp:
      return {[](double x) { return std::exp(x); }, Domain::all};
    case UnaryOp::log:
      return {[](double x) { return std::log(x); }, Domain::positive};
    case UnaryOp::sin:
      return {[](double x) { return std::sin(x); }, Domain::all};
    case UnaryOp::cos:
      return {[](double x) { return std::cos(x); }, Domain::all};
    case UnaryOp::sqrt:
      return {[](double x) { return std::sqrt(x); }, Domain::positive};
    case UnaryOp::tanh:
      return {[](double x) { return std::tanh(x); }, Domain::all};
    case UnaryOp::abs:
      return {[](double x) { return std::fabs(x); }, Domain::nonzero};
    case UnaryOp::sign:
      return {[](double x) {
                return std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
              },
              Domain::nonzero};
    case UnaryOp::logical_not:
      return {[](double x) { return x == 0 ? 1.0 : 0.0; }, Domain::none};
    case UnaryOp::log1p:
      return {[](double x) { return std::log1p(x); }, Domain::positive};
    case UnaryOp::expm1:
      return {[](double x) { return std::expm1(x); }, Domain::all};
    case UnaryOp::erf:
      return {[](double x) { return std::erf(x); }, Domain::all};
  }
  return {[](double) { return std::numeric_limits<double>::quiet_NaN(); }, Domain::none};
}

/// The row of binary op `op`: its value for a and b of dtype t in double precision.
/// Inputs are small integers for integer dtypes, so double arithmetic is exact.
inline double binary_ref(BinaryOp op, double a, double b, DType t) {
  const bool nan = std::isnan(a) || std::isnan(b);
  switch (op) {
    case BinaryOp::add:
      return a + b;
    case BinaryOp::sub:
      return a - b;
    case BinaryOp::mul:
      return a * b;
    case BinaryOp::div:
      return is_integral(t) ? std::trunc(a / b) : a / b;
    case BinaryOp::pow:
      return std::pow(a, b);
    case BinaryOp::maximum:
      return nan ? std::numeric_limits<double>::quiet_NaN() : a < b ? b : a;
    case BinaryOp::minimum:
      return nan ? std::numeric_limits<double>::quiet_NaN() : b < a ? b : a;
    case BinaryOp::eq:
      return a == b;
    case BinaryOp::ne:
      return a != b;
    case BinaryOp::lt:
      return a < b;
    case BinaryOp::le:
      return a <= b;
    case BinaryOp::gt:
      return a > b;
    case BinaryOp::ge:
      return a >= b;
    case BinaryOp::logical_and:
      return a != 0 && b != 0;
    case BinaryOp::logical_or:
      return a != 0 || b != 0;
    case BinaryOp::safe_mul:
      return a == 0 || b == 0 ? 0.0 : a * b;
    case BinaryOp::safe_div:
      return a == 0 ? 0.0 : a / b;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace strata::testing
