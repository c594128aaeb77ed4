// SPDX-License-Identifier: MIT
// NumPy-like printing of a RawTensor:
//   tensor([[1.5000, 2.0000],
//           [3.0000, 4.0000]], shape=[2, 2], dtype=f64)
// Floats share one style per tensor (as PyTorch does): "3." when every value
// is a whole number, else `precision` decimals, or scientific notation when
// magnitudes are very large, very small or spread over more than 3 decades.
// Once the tensor has more than `threshold` elements, every axis longer than
// 2 * edgeitems is abridged to its first and last edgeitems entries around
// "...", and the style and widths come from the shown elements only: the
// text NumPy's array2string gives (raw/print.hpp holds the settings).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "raw/ops.hpp"
#include "raw/print.hpp"
#include "raw/raw_tensor.hpp"

namespace strata {
namespace {

std::mutex options_mutex;
PrintOptions options;  // guarded by options_mutex

// How floats are written: one style for the whole tensor, like PyTorch.
enum class Style { whole, fixed, scientific };

Style choose_style(const std::vector<double>& values, DType t) {
  if (!is_floating(t)) return Style::whole;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  bool integral = true;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    const double a = std::fabs(v);
    integral = integral && v == std::nearbyint(v) && a < 1e16;
    if (a > 0) lo = std::min(lo, a);
    hi = std::max(hi, a);
  }
  if (integral) return Style::whole;  // written "3."
  if (hi >= 1e8 || lo < 1e-4 || hi / lo > 1e3) return Style::scientific;
  return Style::fixed;
}

std::string format_value(double v, DType t, Style style, int precision) {
  if (t == DType::b8) return v != 0 ? "true" : "false";
  std::ostringstream os;
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (style == Style::whole) {
    os << std::fixed << std::setprecision(0) << v << '.';
    return os.str();
  }
  if (precision == 0) os << std::showpoint;  // "3." and "3.e-06", as NumPy writes them
  if (style == Style::scientific) {
    os << std::scientific << std::setprecision(precision) << v;
  } else {
    os << std::fixed << std::setprecision(precision) << v;
  }
  return os.str();
}

struct Printer {
  const std::vector<double>& values;  // floats and bools
  const std::vector<int64_t>& ints;   // integers, exactly (doubles lose i64 digits)
  const Shape& shape;
  const Strides& strides;  // row-major strides of `values`
  DType dtype;
  bool summarise;
  PrintOptions opts;
  Style style = Style::fixed;
  std::size_t width = 0;

  std::string cell(int64_t i) const {
    if (is_integral(dtype)) return std::to_string(ints[std::size_t(i)]);
    return format_value(values[std::size_t(i)], dtype, style, opts.precision);
  }

  // Positions shown along axis d: all, or the first and last edgeitems (-1 marks "...").
  std::vector<int64_t> positions(int64_t d) const {
    std::vector<int64_t> p;
    const int64_t n = shape[d], edge = opts.edgeitems;
    if (!summarise || n <= 2 * edge) {
      for (int64_t i = 0; i < n; ++i) p.push_back(i);
    } else {
      for (int64_t i = 0; i < edge; ++i) p.push_back(i);
      p.push_back(-1);
      for (int64_t i = n - edge; i < n; ++i) p.push_back(i);
    }
    return p;
  }

  // The flat positions of every shown element, in order.
  void shown(int64_t d, int64_t base, std::vector<int64_t>& out) const {
    if (d == shape.ndim()) {
      out.push_back(base);
      return;
    }
    for (int64_t i : positions(d)) {
      if (i >= 0) shown(d + 1, base + i * strides[d], out);
    }
  }

  // The float style and the column width, from the shown elements only.
  void measure() {
    std::vector<int64_t> at;
    shown(0, 0, at);
    if (!is_integral(dtype)) {
      std::vector<double> v;
      v.reserve(at.size());
      for (int64_t i : at) v.push_back(values[std::size_t(i)]);
      style = choose_style(v, dtype);
    }
    for (int64_t i : at) width = std::max(width, cell(i).size());
  }

  void print(std::ostream& os, int64_t d, int64_t base, int indent) const {
    if (d == shape.ndim()) {
      std::string s = cell(base);
      os << std::string(width - s.size(), ' ') << s;
      return;
    }
    os << '[';
    const auto pos = positions(d);
    for (std::size_t j = 0; j < pos.size(); ++j) {
      if (j > 0) {
        os << ',';
        if (d + 1 == shape.ndim()) {
          os << ' ';
        } else {
          os << std::string(static_cast<std::size_t>(shape.ndim() - d - 1), '\n')
             << std::string(static_cast<std::size_t>(indent + 1), ' ');
        }
      }
      if (pos[j] < 0) {
        os << "...";
      } else {
        print(os, d + 1, base + pos[j] * strides[d], indent + 1);
      }
    }
    os << ']';
  }
};

}  // namespace

void set_print_options(const PrintOptions& o) {
  if (o.precision < 0 || o.precision > 30) {
    detail::fail<ValueError>("set_print_options", "precision must be in [0, 30], got ",
                             o.precision);
  }
  if (o.threshold < 0) {
    detail::fail<ValueError>("set_print_options", "threshold must be >= 0, got ", o.threshold);
  }
  if (o.edgeitems < 1) {
    detail::fail<ValueError>("set_print_options", "edgeitems must be >= 1, got ", o.edgeitems);
  }
  const std::lock_guard<std::mutex> lock(options_mutex);
  options = o;
}

PrintOptions print_options() {
  const std::lock_guard<std::mutex> lock(options_mutex);
  return options;
}

std::ostream& operator<<(std::ostream& os, const RawTensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  const RawTensor host = raw::to_device(t, Device::cpu());
  std::vector<double> values;
  std::vector<int64_t> ints;
  if (is_integral(t.dtype())) {
    ints.resize(std::size_t(t.numel()));
    raw::to_host(raw::cast(host, DType::i64), ints.data());
  } else {
    values.resize(std::size_t(t.numel()));
    raw::to_host(raw::cast(host, DType::f64), values.data());
  }
  const Strides strides = contiguous_strides(t.shape());
  const PrintOptions opts = print_options();
  Printer p{values, ints, t.shape(), strides, t.dtype(), t.numel() > opts.threshold, opts};
  constexpr int kPrefix = 7;  // "tensor("
  os << "tensor(";
  if (t.numel() == 0) {
    os << "[]";
  } else {
    p.measure();
    p.print(os, 0, 0, kPrefix);
  }
  os << ", shape=" << t.shape() << ", dtype=" << dtype_name(t.dtype());
  if (!t.device().is_cpu()) os << ", device=" << to_string(t.device());
  return os << ')';
}

}  // namespace strata
