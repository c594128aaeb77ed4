// SPDX-License-Identifier: MIT
#pragma once
/// Test support: independent reference machinery for the raw layer.
///
/// Nothing here calls a strata kernel. Values are read straight from storage
/// through the layout (offset + sum(i_k * stride_k)), multi-indices are walked
/// with a plain odometer, and random strided tensors are built by writing
/// storage bytes directly and then applying view transforms.
///
/// On any device: a tensor that is not on the CPU is read through a CPU copy of
/// its whole storage with the same layout (host_view, made by raw::to_device),
/// and make() fills a CPU buffer and moves it to the device under test, so the
/// views of random_tensor are applied, and exercised, on that device.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <strata.hpp>

#include "support/device.hpp"

namespace strata::testing {

inline constexpr DType kAllDTypes[] = {DType::b8, DType::i32, DType::i64, DType::f32, DType::f64};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
/// "f32" etc. as a std::string, for INFO messages.
inline std::string dname(DType t) { return std::string(dtype_name(t)); }

/// The number of elements of a shape.
inline int64_t numel_of(const Shape& shape) {
  int64_t c = 1;
  for (int64_t d : shape) c *= d;
  return c;
}

/// Calls fn(index) for every multi-index of shape in row-major order (once for rank 0).
inline void for_each_index(const Shape& shape,
                           const std::function<void(const std::vector<int64_t>&)>& fn) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  for (;;) {
    fn(idx);
    std::size_t d = shape.size();
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (shape.size() == 0) return;
  }
}

/// Storage position of a multi-index under t's layout.
inline int64_t storage_index(const RawTensor& t, const std::vector<int64_t>& idx) {
  int64_t pos = t.offset();
  for (std::size_t k = 0; k < idx.size(); ++k) pos += idx[k] * t.strides()[k];
  return pos;
}

/// The CPU copies host_view made of device storages, newest last: the element loops
/// of the tests read the same few tensors element by element, and one copy per
/// storage (and version: in-place updates bump it) keeps them fast off the CPU.
/// Holding the device storage keeps its address from being reused.
struct HostCopy {
  std::shared_ptr<Storage> device;
  uint64_t version = 0;
  DType dtype = DType::f32;
  RawTensor host;  ///< the whole storage, contiguous, on the CPU
};
inline thread_local std::vector<HostCopy> host_copies;

/// Forgets every cached CPU copy (after writing to a device storage behind its version).
inline void forget_host_copies() { host_copies.clear(); }

/// True when STRATA_TEST_HOST_COPIES=1: host_view and edit_storage then copy CPU
/// tensors too, so a CPU run checks the path every other device takes (ctest's
/// raw_host_copies).
inline bool copy_cpu_tensors() {
  static const bool on = [] {
    const char* v = std::getenv("STRATA_TEST_HOST_COPIES");
    return v && std::string(v) == "1";
  }();
  return on;
}

/// t when it is on the CPU; else a CPU tensor with t's layout over a CPU copy of
/// t's whole storage (so storage positions, and elements outside the view, match),
/// made by raw::to_host.
inline RawTensor host_view(const RawTensor& t) {
  if (!t.defined() || (t.device().is_cpu() && !copy_cpu_tensors())) return t;
  for (const HostCopy& c : host_copies) {
    if (c.device == t.storage() && c.version == t.version() && c.dtype == t.dtype()) {
      return c.host.view(t.layout());
    }
  }
  const int64_t n = int64_t(t.storage()->bytes() / dtype_size(t.dtype()));
  const RawTensor whole = t.view(Layout{Shape{n}, contiguous_strides(Shape{n}), 0});
  // A copy even on the CPU (raw::to_device would return t itself there).
  const RawTensor host = raw::empty(Shape{n}, t.dtype(), Device::cpu());
  if (n > 0) raw::to_host(whole, host.storage()->data());
  if (host_copies.size() >= 8) host_copies.erase(host_copies.begin());
  host_copies.push_back({t.storage(), t.version(), t.dtype(), host});
  return host.view(t.layout());
}

/// Element at a multi-index, read from storage and widened to double (through host_view
/// off the CPU).
inline double get(const RawTensor& dev, const std::vector<int64_t>& idx) {
  const RawTensor t = host_view(dev);
  const int64_t pos = storage_index(t, idx);
  const void* base = t.storage()->data();
  switch (t.dtype()) {
    case DType::b8:
      return static_cast<const bool*>(base)[pos] ? 1.0 : 0.0;
    case DType::i32:
      return static_cast<const int32_t*>(base)[pos];
    case DType::i64:
      return double(static_cast<const int64_t*>(base)[pos]);
    case DType::f32:
      return static_cast<const float*>(base)[pos];
    case DType::f64:
      return static_cast<const double*>(base)[pos];
  }
  return 0;
}

/// Element as int64 (exact for i64 values beyond 2^53).
inline int64_t get_int(const RawTensor& dev, const std::vector<int64_t>& idx) {
  const RawTensor t = host_view(dev);
  const int64_t pos = storage_index(t, idx);
  const void* base = t.storage()->data();
  if (t.dtype() == DType::i64) return static_cast<const int64_t*>(base)[pos];
  return int64_t(get(t, idx));
}

/// The elements of t (of element type T) in row-major order, copied by raw::to_host: the
/// exact bits the library produced, to compare two results for equality.
template <class T>
std::vector<T> host_elems(const RawTensor& t) {
  std::vector<T> v(std::size_t(t.numel()));
  raw::to_host(t, v.data());
  return v;
}

/// The bytes of t's elements in row-major order (raw::to_host): the exact bits the library
/// produced, to compare two results bit for bit.
inline std::vector<unsigned char> bits(const RawTensor& t) {
  std::vector<unsigned char> out(std::size_t(t.numel()) * dtype_size(t.dtype()));
  raw::to_host(t, out.data());
  return out;
}

/// Restores the library's thread count when a test ends, even on failure.
struct ThreadCountGuard {
  int saved = num_threads();
  ~ThreadCountGuard() { set_num_threads(saved); }
};

/// All elements in row-major order as doubles.
inline std::vector<double> values(const RawTensor& dev) {
  const RawTensor t = host_view(dev);
  std::vector<double> out;
  for_each_index(t.shape(), [&](const std::vector<int64_t>& i) { out.push_back(get(t, i)); });
  return out;
}

/// An all-zero contiguous tensor (raw::full on the default device): an operand for the checks
/// of bad input.
inline RawTensor raw_zeros(const Shape& shape, DType dtype = f32) {
  return raw::full(shape, 0.0, dtype);
}

/// A contiguous tensor on the device under test whose row-major elements are `vals` (cast
/// to dtype by C++ rules), filled on the CPU.
inline RawTensor make(const Shape& shape, DType dtype, const std::vector<double>& vals) {
  RawTensor t = raw::empty(shape, dtype, Device::cpu());
  void* base = t.storage()->data();
  for (std::size_t i = 0; i < vals.size(); ++i) {
    switch (dtype) {
      case DType::b8:
        static_cast<bool*>(base)[i] = vals[i] != 0;
        break;
      case DType::i32:
        static_cast<int32_t*>(base)[i] = int32_t(vals[i]);
        break;
      case DType::i64:
        static_cast<int64_t*>(base)[i] = int64_t(vals[i]);
        break;
      case DType::f32:
        static_cast<float*>(base)[i] = float(vals[i]);
        break;
      case DType::f64:
        static_cast<double*>(base)[i] = vals[i];
        break;
    }
  }
  return raw::to_device(t, test_device());
}

/// n random values fit for dtype: bool 0/1, integers in [-9, 9], floats normal.
inline std::vector<double> random_values(int64_t n, DType dtype, std::mt19937_64& rng) {
  std::vector<double> v(std::size_t(std::max<int64_t>(n, 0)));
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> small(-9, 9), coin(0, 1);
  for (double& x : v) {
    if (dtype == DType::b8)
      x = coin(rng);
    else if (is_integral(dtype))
      x = small(rng);
    else
      x = dtype == DType::f32 ? double(float(normal(rng))) : normal(rng);
  }
  return v;
}

/// How a test tensor's layout is made.
enum class LayoutKind { contiguous, permuted, sliced, flipped, broadcast, offset };
inline constexpr LayoutKind kAllLayouts[] = {LayoutKind::contiguous, LayoutKind::permuted,
                                             LayoutKind::sliced,     LayoutKind::flipped,
                                             LayoutKind::broadcast,  LayoutKind::offset};
inline std::string layout_name(LayoutKind k) {
  constexpr const char* names[] = {"contiguous", "permuted",  "sliced",
                                   "flipped",    "broadcast", "offset"};
  return names[int(k)];
}

/// A tensor of logical shape `shape` with random values and a layout of the
/// given kind, built from a larger or reordered base by view transforms:
///   permuted: a contiguous base of the permuted shape, permuted back;
///   sliced: every axis taken with step 2 from a base twice as large;
///   flipped: every axis reversed (negative strides);
///   broadcast: size-1 dims where the rng says so, expanded (zero strides);
///   offset: a contiguous view starting 5 elements into its storage.
inline RawTensor random_tensor(const Shape& shape, DType dtype, LayoutKind kind,
                               std::mt19937_64& rng) {
  const int64_t nd = shape.ndim();
  switch (kind) {
    case LayoutKind::contiguous: {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      return make(shape, dtype, random_values(n, dtype, rng));
    }
    case LayoutKind::permuted: {
      std::vector<int64_t> perm(static_cast<std::size_t>(nd));
      for (int64_t i = 0; i < nd; ++i) perm[std::size_t(i)] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      Shape base_shape(std::size_t(nd), 0);
      for (int64_t i = 0; i < nd; ++i)
        base_shape[std::size_t(perm[std::size_t(i)])] = shape[std::size_t(i)];
      RawTensor base = random_tensor(base_shape, dtype, LayoutKind::contiguous, rng);
      return base.permute(Shape(perm));
    }
    case LayoutKind::sliced: {
      Shape big = shape;
      for (auto& d : big) d = 2 * d + 1;
      RawTensor t = random_tensor(big, dtype, LayoutKind::contiguous, rng);
      for (int64_t i = 0; i < nd; ++i) t = t.slice(i, 1, 1 + 2 * shape[std::size_t(i)], 2);
      return t;
    }
    case LayoutKind::flipped: {
      RawTensor t = random_tensor(shape, dtype, LayoutKind::contiguous, rng);
      for (int64_t i = 0; i < nd; ++i) t = t.flip(i);
      return t;
    }
    case LayoutKind::broadcast: {
      Shape small = shape;
      std::bernoulli_distribution squash(0.5);
      for (auto& d : small) {
        if (squash(rng)) d = std::min<int64_t>(d, 1);
      }
      return random_tensor(small, dtype, LayoutKind::contiguous, rng).expand(shape);
    }
    case LayoutKind::offset: {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      RawTensor flat = make({n + 5}, dtype, random_values(n + 5, dtype, rng));
      return flat.view(Layout{shape, contiguous_strides(shape), 5});
    }
  }
  return {};
}

}  // namespace strata::testing
