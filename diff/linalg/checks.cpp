// SPDX-License-Identifier: MIT
#include "diff/linalg/checks.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <vector>

#include "raw/trace.hpp"

namespace strata::detail {

void require_matrix_shape(std::string_view op, const Shape& s) {
  if (s.ndim() < 2) {
    fail<ShapeError>(op, "needs matrices [..., m, n] (rank >= 2), got shape ", s);
  }
}

void require_square_shape(std::string_view op, const Shape& s) {
  require_matrix_shape(op, s);
  if (s[s.ndim() - 2] != s[s.ndim() - 1]) {
    fail<ShapeError>(op, "needs square matrices [..., n, n], got shape ", s);
  }
}

void require_float_matrix(std::string_view op, DType t) {
  if (t != DType::f32 && t != DType::f64) {
    fail<DTypeError>(op, "needs f32 or f64 matrices, got ", dtype_name(t),
                     " (convert with .to(st::f64))");
  }
}

namespace {
/// require_nonzero_diagonal's check, on the values.
void check_nonzero_diagonal(std::string_view op, const Tensor& d) {
  const std::vector<double> v = d.to_vector<double>();
  const Shape s = d.shape();
  const int64_t n = s[s.ndim() - 1];
  const auto zero = std::find(v.begin(), v.end(), 0.0);
  if (zero == v.end()) return;
  const int64_t flat = zero - v.begin(), element = flat / n, pivot = flat % n;
  std::ostringstream where;
  where << "input";
  if (s.ndim() > 1) {
    // The batch element as a multi-index over d's leading dims.
    std::vector<int64_t> index(std::size_t(s.ndim() - 1));
    int64_t rest = element;
    for (int64_t i = s.ndim() - 2; i >= 0; --i) {
      index[std::size_t(i)] = rest % s[i];
      rest /= s[i];
    }
    where << "[";
    for (std::size_t i = 0; i < index.size(); ++i) where << (i ? ", " : "") << index[i];
    where << "]";
  }
  fail<LinAlgError>(op, where.str(), " is singular: pivot ", pivot,
                    " of its LU factorisation is zero (U[", pivot, ", ", pivot, "] = 0)");
}
}  // namespace

void require_nonzero_diagonal(std::string_view op, const Tensor& d) {
  if (d.numel() == 0) return;
  // An effect: a jit plan checks the pivots again on every call.
  raw::trace::effect(op, {d.raw()}, [op = std::string(op)](auto in) {
    check_nonzero_diagonal(op, Tensor(in[0]));
  });
}

Tensor flat_row_positions(const Tensor& p, int64_t n) {
  const Tensor rows = p.reshape({-1, n});
  const int64_t count = rows.shape()[0];
  const Tensor offsets =
      arange(0, double(count * n), double(n), DType::i64, p.device()).reshape({count, 1});
  return (rows + offsets).reshape({-1});
}

void require_rhs_fits(std::string_view op, const Shape& a, const Shape& b, bool left) {
  require_matrix_shape(op, b);
  const int64_t n = a[a.ndim() - 1], have = left ? b[b.ndim() - 2] : b[b.ndim() - 1];
  if (have != n) {
    fail<ShapeError>(op, "a of shape ", a, " needs b with ", n, left ? " rows" : " columns",
                     ", got shape ", b);
  }
}

bool is_rhs_vector(const Shape& a, const Shape& b) {
  if (b.ndim() == 1) return true;
  return b.ndim() == a.ndim() - 1 && std::equal(b.begin(), b.end(), a.begin());
}

double default_rcond(const Shape& a, DType dtype, double rcond) {
  if (rcond >= 0) return rcond;
  const double eps = dtype == DType::f32 ? double(std::numeric_limits<float>::epsilon())
                                         : std::numeric_limits<double>::epsilon();
  return double(std::max(a[a.ndim() - 2], a[a.ndim() - 1])) * eps;
}

}  // namespace strata::detail
