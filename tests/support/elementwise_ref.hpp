// SPDX-License-Identifier: MIT
#pragma once
/// Test support for the raw elementwise, creation and movement tests: value
/// comparison with NaN/inf handling and dtype rounding, the shapes and layouts
/// the sweeps run over, and direct storage edits (NaNs, zeros, wide integers).
///
/// Like tests/support/naive.hpp, nothing here calls a strata kernel: values
/// are read and written straight through storage pointers and layouts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <strata.hpp>

#include "support/naive.hpp"

namespace strata::testing {

/// "[2, 3]" for messages.
inline std::string str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

/// A value as dtype `t` stores it: floats rounded to f32, bools to 0/1.
/// Integers are passed through (callers keep them in range).
inline double round_to(DType t, double v) {
  if (t == DType::f32) return double(float(v));
  if (t == DType::b8) return v != 0 ? 1.0 : 0.0;
  return v;
}

/// Relative tolerance for results of dtype t: f64 1e-12, f32 1e-6, exact otherwise.
inline double rel_tol(DType t) {
  if (t == DType::f64) return 1e-12;
  if (t == DType::f32) return 1e-6;
  return 0.0;
}

/// got matches want: NaN matches NaN, infinities match exactly, finite values
/// within rel * |want| (plus a denormal-sized absolute slack for floats).
inline bool same_value(double got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isnan(got)) return false;
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= rel * std::fabs(want) + (rel > 0 ? 1e-300 : 0.0);
}

inline std::string index_str(const std::vector<int64_t>& idx) {
  std::ostringstream os;
  os << '(';
  for (std::size_t i = 0; i < idx.size(); ++i) os << (i ? ", " : "") << idx[i];
  os << ')';
  return os.str();
}

/// "" when `got` has shape `shape`, dtype `dtype` and every element matches
/// want(index) (rounded to dtype) within rel_tol(dtype) * rel_scale; otherwise
/// a description of the first difference.
inline std::string first_mismatch(const RawTensor& got, const Shape& shape, DType dtype,
                                  const std::function<double(const std::vector<int64_t>&)>& want,
                                  double rel_scale = 1.0) {
  if (!got.defined()) return "result is undefined";
  if (got.shape() != shape) return "shape " + str(got.shape()) + ", expected " + str(shape);
  if (got.dtype() != dtype) {
    return "dtype " + std::string(dtype_name(got.dtype())) + ", expected " +
           std::string(dtype_name(dtype));
  }
  std::string bad;
  const RawTensor host = host_view(got);
  for_each_index(shape, [&](const std::vector<int64_t>& i) {
    if (!bad.empty()) return;
    const double w = round_to(dtype, want(i));
    const double g = get(host, i);
    if (!same_value(g, w, rel_tol(dtype) * rel_scale)) {
      std::ostringstream os;
      os.precision(17);
      os << "at " << index_str(i) << ": got " << g << ", expected " << w;
      bad = os.str();
    }
  });
  return bad;
}

/// The integer a float (or integer) value becomes in integer dtype `to`: floats
/// truncate toward zero and saturate at the type's range, NaN becomes 0.
inline int64_t convert_int_ref(double v, DType to) {
  const double lo = to == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = -lo;  // one past the largest value
  if (std::isnan(v)) return 0;
  if (v >= hi) return to == DType::i32 ? INT32_MAX : INT64_MAX;
  if (v <= lo) return to == DType::i32 ? INT32_MIN : INT64_MIN;
  return int64_t(std::trunc(v));
}

/// The value v becomes in dtype `to` (as a double): bool is "!= 0", f32 rounds,
/// integers as convert_int_ref.
inline double convert_ref(double v, DType to) {
  switch (to) {
    case DType::b8:
      return v != 0 ? 1.0 : 0.0;
    case DType::i32:
    case DType::i64:
      return double(convert_int_ref(v, to));
    case DType::f32:
      return double(float(v));
    case DType::f64:
      return v;
  }
  return v;
}

/// Number of elements in a storage buffer of t's dtype.
inline int64_t storage_elems(const RawTensor& t) {
  return int64_t(t.storage()->bytes() / dtype_size(t.dtype()));
}

/// edit_storage on a CPU tensor.
inline void edit_host_storage(const RawTensor& t,
                              const std::function<double(double, int64_t)>& fn) {
  void* base = t.storage()->data();
  for (int64_t p = 0; p < storage_elems(t); ++p) {
    switch (t.dtype()) {
      case DType::b8: {
        // Through unsigned char: the storage may be uninitialised (raw::empty).
        unsigned char& v = static_cast<unsigned char*>(base)[p];
        v = fn(v != 0 ? 1.0 : 0.0, p) != 0 ? 1 : 0;
        break;
      }
      case DType::i32: {
        int32_t& v = static_cast<int32_t*>(base)[p];
        v = int32_t(fn(v, p));
        break;
      }
      case DType::i64: {
        int64_t& v = static_cast<int64_t*>(base)[p];
        v = int64_t(fn(double(v), p));
        break;
      }
      case DType::f32: {
        float& v = static_cast<float*>(base)[p];
        v = float(fn(v, p));
        break;
      }
      case DType::f64: {
        double& v = static_cast<double*>(base)[p];
        v = fn(v, p);
        break;
      }
    }
  }
}

/// Rewrites every element of t's storage (every view of it sees the change):
/// v <- fn(v, position). Values are passed as double; integer dtypes must stay small.
/// Off the CPU, the storage is edited in a CPU copy (host_view) and written back.
inline void edit_storage(const RawTensor& dev, const std::function<double(double, int64_t)>& fn) {
  if (dev.device().is_cpu() && !copy_cpu_tensors()) return edit_host_storage(dev, fn);
  forget_host_copies();
  const RawTensor t = host_view(dev);  // a fresh copy, not shared with any other reader
  forget_host_copies();
  edit_host_storage(t, fn);
  if (storage_elems(dev) == 0) return;
  const Shape whole{storage_elems(dev)};
  const Layout all{whole, contiguous_strides(whole), 0};
  backend_for(dev.device()).from_host(dev.view(all), t.storage()->data());
}

/// Replaces zeros in t's storage by 1 (divisors for integer division).
inline void replace_zeros(const RawTensor& t) {
  edit_storage(t, [](double v, int64_t) { return v == 0 ? 1.0 : v; });
}

/// Rounds float storage to multiples of 1/2 so that comparisons meet ties.
inline void quantize(const RawTensor& t) {
  if (!is_floating(t.dtype())) return;
  edit_storage(t, [](double v, int64_t) { return std::round(2 * v) / 2; });
}

/// Puts NaN into about one float storage element in `every` (deterministically by position).
inline void sprinkle_nan(const RawTensor& t, int64_t every, int64_t phase = 0) {
  if (!is_floating(t.dtype())) return;
  edit_storage(t, [&](double v, int64_t p) {
    return (p + phase) % every == 0 ? std::numeric_limits<double>::quiet_NaN() : v;
  });
}

/// A contiguous tensor of integer dtype from exact int64 values (beyond 2^53 too), on the
/// device under test.
inline RawTensor make_int(const Shape& shape, DType dtype, const std::vector<int64_t>& vals) {
  RawTensor t = raw::empty(shape, dtype, Device::cpu());
  for (std::size_t i = 0; i < vals.size(); ++i) {
    if (dtype == DType::i64) {
      static_cast<int64_t*>(t.storage()->data())[i] = vals[i];
    } else {
      static_cast<int32_t*>(t.storage()->data())[i] = int32_t(vals[i]);
    }
  }
  return raw::to_device(t, test_device());
}

/// Elements of the base a layout of `kind` builds for `shape` (what random_tensor allocates).
inline int64_t layout_cost(const Shape& shape, LayoutKind kind) {
  int64_t n = 1;
  for (int64_t d : shape) n *= kind == LayoutKind::sliced ? 2 * d + 1 : std::max<int64_t>(d, 1);
  return n;
}

/// The layouts a sweep uses: every kind of naive.hpp whose base stays small,
/// plus "stepped": up to three axes taken with step -2 from a base twice as
/// large (negative steps and gaps at ranks where "sliced" would be huge).
struct LayoutVariant {
  std::string name;
  std::function<RawTensor(const Shape&, DType, std::mt19937_64&)> make;
};

inline RawTensor stepped_tensor(const Shape& shape, DType dtype, std::mt19937_64& rng) {
  Shape big = shape;
  int picked = 0;
  std::vector<bool> sliced(shape.size(), false);
  for (std::size_t i = 0; i < shape.size() && picked < 3; ++i) {
    if (shape[i] > 1) big[i] = 2 * shape[i], sliced[i] = true, ++picked;
  }
  RawTensor t = random_tensor(big, dtype, LayoutKind::contiguous, rng);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (sliced[i]) t = t.slice(int64_t(i), std::nullopt, std::nullopt, -2);
  }
  return t;
}

inline std::vector<LayoutVariant> layout_variants(const Shape& shape, int64_t max_cost = 40000) {
  std::vector<LayoutVariant> out;
  for (LayoutKind k : kAllLayouts) {
    if (layout_cost(shape, k) > max_cost) continue;
    out.push_back({layout_name(k), [k](const Shape& s, DType t, std::mt19937_64& rng) {
                     return random_tensor(s, t, k, rng);
                   }});
  }
  out.push_back({"stepped", stepped_tensor});
  return out;
}

/// The shapes elementwise sweeps run over: scalars, size-0 and size-1 dims,
/// small matrices, rank 9 and rank 12, and `n_random` random shapes of rank <= 4.
inline std::vector<Shape> sweep_shapes(uint64_t seed, int n_random = 6) {
  std::vector<Shape> shapes = {
      {},
      {1},
      {0},
      {7},
      {3, 0, 2},
      {1, 1, 1},
      {2, 3, 4},
      {5, 1, 3},
      {2, 2, 2, 2, 2, 2, 2, 2, 2},           // rank 9
      {1, 1, 1, 2, 1, 1, 1, 1, 1},           // rank 9, "sliced" affordable
      {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2},  // rank 12
      {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},  // rank 12, 4096 elements
  };
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> rank(0, 4), dim(0, 6);
  for (int i = 0; i < n_random; ++i) {
    Shape s;
    const int r = rank(rng);
    for (int k = 0; k < r; ++k) {
      const int d = dim(rng);  // 0 only on the first axis, else 1..6
      s.push_back(d == 0 && k > 0 ? 1 : d);
    }
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace strata::testing
