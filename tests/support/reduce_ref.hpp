// SPDX-License-Identifier: MIT
#pragma once
/// Test support for the reduce, matmul and indexing tests: naive reference
/// reductions and small comparison helpers.
///
/// Like naive.hpp, nothing here calls a strata kernel: inputs are read element
/// by element through their layouts (st::testing::get), outputs are computed
/// with plain loops over multi-indices, and copies are made byte by byte.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "support/naive.hpp"

namespace strata::testing {

/// A row-major contiguous copy of t on t's device, made by reading every element through
/// t's layout in a CPU copy of its storage (never through raw::contiguous or another
/// strata kernel).
inline RawTensor copy_of(const RawTensor& dev) {
  const RawTensor t = host_view(dev);
  RawTensor out = raw::empty(t.shape(), t.dtype(), Device::cpu());
  const std::size_t size = dtype_size(t.dtype());
  auto* dst = static_cast<unsigned char*>(out.storage()->data());
  const auto* src = static_cast<const unsigned char*>(t.storage()->data());
  std::size_t i = 0;
  for_each_index(t.shape(), [&](const std::vector<int64_t>& idx) {
    std::memcpy(dst + i * size, src + std::size_t(storage_index(t, idx)) * size, size);
    ++i;
  });
  return raw::to_device(out, dev.device());
}

/// The raw bytes of t's elements in row-major order (for bitwise comparisons).
inline std::vector<unsigned char> bytes_of(const RawTensor& t) {
  const RawTensor c = host_view(copy_of(t));
  const auto* p = static_cast<const unsigned char*>(c.storage()->data());
  return {p, p + std::size_t(c.numel()) * dtype_size(c.dtype())};
}

/// random_tensor, except that `sliced` steps only through the axes longer
/// than 1 (taking every other element of a base twice as long on those axes).
/// naive.hpp's sliced base has 2d + 1 elements on every axis, 3^12 or more
/// for rank 12; this keeps high-rank tests small.
inline RawTensor random_tensor_lean(const Shape& shape, DType dtype, LayoutKind kind,
                                    std::mt19937_64& rng) {
  if (kind != LayoutKind::sliced) return random_tensor(shape, dtype, kind, rng);
  Shape big = shape;
  for (auto& d : big) d = d > 1 ? 2 * d : d;
  RawTensor t = random_tensor(big, dtype, LayoutKind::contiguous, rng);
  for (int64_t i = 0; i < shape.ndim(); ++i) {
    const int64_t d = shape[std::size_t(i)];
    if (d > 1) t = t.slice(i, 1, 2 * d, 2);
  }
  return t;
}

/// The expected result of a reduction: shape, dtype and row-major values.
/// Integer results (integer sums, argmax, argmin, integer max/min) are exact
/// in `ints`; float results are in `vals`, with `scale` = sum of |x| over the
/// reduced elements (the size of a sum's rounding error bound).
struct ReduceExpected {
  Shape shape;
  DType dtype = DType::f32;
  std::vector<double> vals;
  std::vector<int64_t> ints;
  std::vector<double> scale;
};

/// Naive reduction: for every kept position, walk the reduced positions in
/// row-major order. `axes` may be negative and in any order (no repeats).
inline ReduceExpected reduce_ref(ReduceOp op, const RawTensor& dev,
                                 const std::vector<int64_t>& axes, bool keepdims) {
  const RawTensor x = host_view(dev);  // read on the CPU, whatever the device
  const int64_t nd = x.ndim();
  std::vector<bool> reduced(std::size_t(nd), false);
  for (int64_t a : axes) reduced[std::size_t(a < 0 ? a + nd : a)] = true;
  Shape kept_shape, red_shape, out_shape;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t n = x.shape()[std::size_t(d)];
    if (reduced[std::size_t(d)]) {
      red_shape.push_back(n);
      kept_shape.push_back(1);
      if (keepdims) out_shape.push_back(1);
    } else {
      kept_shape.push_back(n);
      out_shape.push_back(n);
    }
  }
  ReduceExpected e;
  e.shape = out_shape;
  const bool is_arg = op == ReduceOp::argmax || op == ReduceOp::argmin;
  const bool float_in = is_floating(x.dtype());
  e.dtype = is_arg || (op == ReduceOp::sum && !float_in) ? DType::i64 : x.dtype();
  const bool want_max = op == ReduceOp::max || op == ReduceOp::argmax;

  for_each_index(kept_shape, [&](const std::vector<int64_t>& k) {
    std::vector<int64_t> full = k;
    double fsum = 0, fabs_sum = 0, best = 0;
    int64_t isum = 0, ibest = 0, best_pos = -1, pos = 0;
    bool best_nan = false;
    for_each_index(red_shape, [&](const std::vector<int64_t>& r) {
      std::size_t j = 0;
      for (int64_t d = 0; d < nd; ++d) {
        if (reduced[std::size_t(d)]) full[std::size_t(d)] = r[j++];
      }
      if (float_in) {
        const double v = get(x, full);
        fsum += v;
        fabs_sum += std::fabs(v);
        if (best_pos < 0) {
          best = v, best_pos = pos, best_nan = std::isnan(v);
        } else if (!best_nan && (std::isnan(v) || (want_max ? v > best : v < best))) {
          best = v, best_pos = pos, best_nan = std::isnan(v);
        }
      } else {
        const int64_t v = get_int(x, full);
        isum += v;  // the test data is small: no overflow
        if (best_pos < 0 || (want_max ? v > ibest : v < ibest)) ibest = v, best_pos = pos;
      }
      ++pos;
    });
    switch (op) {
      case ReduceOp::sum:
        if (float_in) {
          e.vals.push_back(x.dtype() == DType::f32 ? double(float(fsum)) : fsum);
          e.scale.push_back(fabs_sum);
        } else {
          e.ints.push_back(isum);
        }
        break;
      case ReduceOp::max:
      case ReduceOp::min:
        if (float_in) {
          e.vals.push_back(best);
        } else {
          e.ints.push_back(ibest);
        }
        break;
      case ReduceOp::argmax:
      case ReduceOp::argmin:
        e.ints.push_back(best_pos);
        break;
    }
  });
  return e;
}

/// Compares raw::reduce(op, x, axes, keepdims) with reduce_ref; returns an
/// empty string when they agree, else a description of the first difference.
inline std::string check_reduce(ReduceOp op, const RawTensor& x, const std::vector<int64_t>& axes,
                                bool keepdims) {
  std::ostringstream os;
  os << op_name(op) << " of " << dtype_name(x.dtype()) << " " << x.shape() << " strides "
     << x.strides() << " axes " << Shape(axes) << " keepdims " << keepdims << ": ";
  const RawTensor got = host_view(raw::reduce(op, x, Shape(axes), keepdims));
  const ReduceExpected want = reduce_ref(op, x, axes, keepdims);
  if (got.shape() != want.shape) {
    os << "shape " << got.shape() << ", expected " << want.shape;
    return os.str();
  }
  if (got.dtype() != want.dtype) {
    os << "dtype " << dtype_name(got.dtype()) << ", expected " << dtype_name(want.dtype);
    return os.str();
  }
  std::size_t i = 0;
  std::string bad;
  for_each_index(got.shape(), [&](const std::vector<int64_t>& idx) {
    if (!bad.empty()) return;
    if (!want.ints.empty()) {
      const int64_t g = get_int(got, idx);
      if (g != want.ints[i]) {
        os << "element " << i << " is " << g << ", expected " << want.ints[i];
        bad = os.str();
      }
    } else {
      const double g = get(got, idx), w = want.vals[i];
      bool ok = false;
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else if (op == ReduceOp::sum) {
        const double eps = x.dtype() == DType::f32 ? 2e-7 : 1e-14;
        ok = std::fabs(g - w) <= eps * (want.scale[i] + std::fabs(w)) + 1e-300;
      } else {
        ok = g == w;
      }
      if (!ok) {
        os.precision(17);
        os << "element " << i << " is " << g << ", expected " << w;
        bad = os.str();
      }
    }
    ++i;
  });
  return bad;
}

}  // namespace strata::testing
