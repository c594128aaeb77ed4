// SPDX-License-Identifier: MIT
#include "core/shape.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "core/error.hpp"

namespace strata {

std::string to_string(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << '[';
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

int64_t checked_numel(const Shape& s, std::string_view op) {
  // The product of the nonzero dims must fit even when some dim is 0, so the
  // answer never depends on the order of the dims and strides never overflow.
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : s) {
    if (d < 0) detail::fail<ValueError>(op, "negative dimension ", d, " in shape ", s);
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(n, d, &n)) {
      detail::fail<ValueError>(op, "element count of shape ", s, " overflows int64");
    }
  }
  return empty ? 0 : n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size(), 1);
  int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

int64_t normalize_axis(int64_t axis, int64_t ndim, std::string_view op) {
  if (axis < -ndim || axis >= ndim) {
    detail::fail<IndexError>(op, "axis ", axis, " is out of range for a tensor of rank ", ndim);
  }
  return axis < 0 ? axis + ndim : axis;
}

int64_t normalize_axis(int64_t axis, const Shape& shape, std::string_view op) {
  const int64_t ndim = shape.ndim();
  if (axis < -ndim || axis >= ndim) {
    detail::fail<IndexError>(op, "axis ", axis, " is out of range for a tensor of shape ", shape,
                             " (rank ", ndim, ")");
  }
  return axis < 0 ? axis + ndim : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      detail::fail<ShapeError>(op, "shapes ", a, " and ", b, " do not broadcast (axis ", i, ": ",
                               da, " vs ", db, ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace strata
