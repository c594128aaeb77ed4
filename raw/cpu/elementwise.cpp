// SPDX-License-Identifier: MIT
// CPU elementwise kernels: fill, copy (with cast), creation, unary, binary, where.
// Contract: raw/ops.cpp has validated shapes and dtypes; `out` is written,
// never read (except binary with out aliasing a, which reads before writing).
// Signed integer arithmetic wraps (two's complement), as in NumPy and PyTorch.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/random.hpp"
#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/loops.hpp"
#include "raw/cpu/vmath.hpp"

namespace strata::detail {
namespace {

[[noreturn]] void unsupported(std::string_view op, DType t) {
  fail<DTypeError>(op, "dtype ", dtype_name(t), " is not supported");
}

template <class T>
using Unsigned = std::make_unsigned_t<T>;

// Wrapping integer arithmetic (signed overflow would be undefined behaviour).
template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(a) + Unsigned<T>(b));
  return a + b;
}
template <class T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(a) - Unsigned<T>(b));
  return a - b;
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(a) * Unsigned<T>(b));
  return a * b;
}
template <class T>
T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) return T(Unsigned<T>(0) - Unsigned<T>(a));
  return -a;
}

// NaN-propagating maximum/minimum (numpy.maximum): a NaN operand wins.
template <class T>
T nan_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return a < b ? b : a;
}
template <class T>
T nan_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return b < a ? b : a;
}

// The vmath function computing op, or -1 when op has none.
int vmath_fn(UnaryOp op) {
  switch (op) {
    case UnaryOp::exp:
      return vmath::kExp;
    case UnaryOp::log:
      return vmath::kLog;
    case UnaryOp::sin:
      return vmath::kSin;
    case UnaryOp::cos:
      return vmath::kCos;
    case UnaryOp::tanh:
      return vmath::kTanh;
    case UnaryOp::sqrt:
      return vmath::kSqrt;
    default:
      return -1;
  }
}

// out = f(x) with a vectorised contiguous kernel: unit-stride blocks go to it
// directly, a transposed x tile by tile through a transposed staging buffer,
// other strided blocks (sliced, flipped, broadcast) through a small buffer,
// gathered and scattered.
template <class T, class Kernel>
void vmath_map(Kernel kernel, const RawTensor& out, const RawTensor& x) {
  T* ob = base_ptr<T>(out);
  const T* xb = base_ptr<T>(x);
  parallel_walk_staged<2>(out.shape(), {&out.layout(), &x.layout()}, {ob, xb},
                          {int(sizeof(T)), int(sizeof(T))},
                          [&](const auto& off, int64_t n, const auto& st, int sk, const void* row) {
                            T* o = ob + off[0];
                            const T* p = sk == 1 ? static_cast<const T*>(row) : xb + off[1];
                            if (st[0] == 1 && st[1] == 1) return kernel(p, o, n);
                            constexpr int64_t kBuf = 256;
                            T buf[kBuf];
                            for (int64_t i0 = 0; i0 < n; i0 += kBuf) {
                              const int64_t m = std::min(kBuf, n - i0);
                              for (int64_t i = 0; i < m; ++i) buf[i] = p[(i0 + i) * st[1]];
                              if (st[0] == 1) {
                                kernel(buf, o + i0, m);
                              } else {
                                kernel(buf, buf, m);
                                for (int64_t i = 0; i < m; ++i) o[(i0 + i) * st[0]] = buf[i];
                              }
                            }
                          });
}

template <class T>
void unary_typed(UnaryOp op, const RawTensor& out, const RawTensor& x) {
  if constexpr (std::is_floating_point_v<T>) {
    const vmath::Kernels* k = vmath::best();
    if (const int fn = vmath_fn(op); k && fn >= 0) {
      if constexpr (std::is_same_v<T, float>) return vmath_map<T>(k->f32[fn], out, x);
      if constexpr (std::is_same_v<T, double>) return vmath_map<T>(k->f64[fn], out, x);
    }
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (op == UnaryOp::logical_not)
      return map<T, T>(
          out, [](T v) { return !v; }, x);
  } else {
    switch (op) {
      case UnaryOp::neg:
        return map<T, T>(
            out, [](T v) { return wrap_neg(v); }, x);
      case UnaryOp::abs:
        return map<T, T>(
            out, [](T v) { return v < T(0) ? wrap_neg(v) : v; }, x);
      case UnaryOp::sign:
        return map<T, T>(
            out, [](T v) { return v != v ? v : T((T(0) < v) - (v < T(0))); }, x);
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
        case UnaryOp::exp:
          return map<T, T>(
              out, [](T v) { return std::exp(v); }, x);
        case UnaryOp::log:
          return map<T, T>(
              out, [](T v) { return std::log(v); }, x);
        case UnaryOp::sin:
          return map<T, T>(
              out, [](T v) { return std::sin(v); }, x);
        case UnaryOp::cos:
          return map<T, T>(
              out, [](T v) { return std::cos(v); }, x);
        case UnaryOp::sqrt:
          return map<T, T>(
              out, [](T v) { return std::sqrt(v); }, x);
        case UnaryOp::tanh:
          return map<T, T>(
              out, [](T v) { return std::tanh(v); }, x);
        default:
          break;
      }
    }
  }
  unsupported(op_name(op), x.dtype());
}

template <class T>
void compare_typed(BinaryOp op, const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  switch (op) {
    case BinaryOp::eq:
      return map<bool, T, T>(
          out, [](T x, T y) { return x == y; }, a, b);
    case BinaryOp::ne:
      return map<bool, T, T>(
          out, [](T x, T y) { return x != y; }, a, b);
    case BinaryOp::lt:
      return map<bool, T, T>(
          out, [](T x, T y) { return x < y; }, a, b);
    case BinaryOp::le:
      return map<bool, T, T>(
          out, [](T x, T y) { return x <= y; }, a, b);
    case BinaryOp::gt:
      return map<bool, T, T>(
          out, [](T x, T y) { return x > y; }, a, b);
    case BinaryOp::ge:
      return map<bool, T, T>(
          out, [](T x, T y) { return x >= y; }, a, b);
    default:
      break;
  }
  unsupported(op_name(op), a.dtype());
}

template <class T>
void binary_typed(BinaryOp op, const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  if (is_comparison(op)) return compare_typed<T>(op, out, a, b);
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case BinaryOp::logical_and:
        return map<T, T, T>(
            out, [](T x, T y) { return x && y; }, a, b);
      case BinaryOp::logical_or:
        return map<T, T, T>(
            out, [](T x, T y) { return x || y; }, a, b);
      default:
        break;
    }
  } else {
    switch (op) {
      case BinaryOp::add:
        return map<T, T, T>(
            out, [](T x, T y) { return wrap_add(x, y); }, a, b);
      case BinaryOp::sub:
        return map<T, T, T>(
            out, [](T x, T y) { return wrap_sub(x, y); }, a, b);
      case BinaryOp::mul:
        return map<T, T, T>(
            out, [](T x, T y) { return wrap_mul(x, y); }, a, b);
      case BinaryOp::maximum:
        return map<T, T, T>(
            out, [](T x, T y) { return nan_max(x, y); }, a, b);
      case BinaryOp::minimum:
        return map<T, T, T>(
            out, [](T x, T y) { return nan_min(x, y); }, a, b);
      case BinaryOp::div:
        if constexpr (std::is_integral_v<T>) {
          // Truncating division; x / 0 has no value, and MIN / -1 wraps.
          return map<T, T, T>(
              out,
              [](T x, T y) {
                if (y == 0) fail<ValueError>("div", "integer division by zero");
                return y == T(-1) ? wrap_neg(x) : T(x / y);
              },
              a, b);
        } else {
          return map<T, T, T>(
              out, [](T x, T y) { return x / y; }, a, b);
        }
      case BinaryOp::pow:
        if constexpr (std::is_floating_point_v<T>) {
          return map<T, T, T>(
              out, [](T x, T y) { return std::pow(x, y); }, a, b);
        }
        break;
      default:
        break;
    }
  }
  unsupported(op_name(op), a.dtype());
}

// Contiguous fills from this size up stream past the caches: larger than both
// cores' L2 together, the data would be evicted before anyone reads it.
constexpr int64_t kStreamFillBytes = int64_t{8} << 20;

// o[0..n) = v: the 64-byte-aligned middle with non-temporal stores, split into
// one contiguous range per thread (whole 64-byte blocks); the unaligned head
// and tail with ordinary stores. Each piece fences its own stores.
template <class T>
void stream_fill(T* o, int64_t n, T v, vmath::StreamFill kernel) {
  static_assert(64 % sizeof(T) == 0);
  alignas(64) unsigned char pattern[64];
  for (std::size_t i = 0; i < 64; i += sizeof(T)) std::memcpy(pattern + i, &v, sizeof(T));
  const auto addr = reinterpret_cast<std::uintptr_t>(o);
  int64_t head = int64_t((64 - addr % 64) % 64);
  if (head % int64_t(sizeof(T)) != 0) {  // not element-aligned to 64 bytes: no streaming
    std::fill(o, o + n, v);
    return;
  }
  head = std::min(n, head / int64_t(sizeof(T)));
  constexpr int64_t kPerBlock = 64 / int64_t(sizeof(T));
  const int64_t blocks = (n - head) / kPerBlock;
  std::fill(o, o + head, v);
  T* body = o + head;
  std::fill(body + blocks * kPerBlock, o + n, v);
  // Pieces of at least 1 MiB so a small fill does not wake the other thread.
  parallel_for(0, blocks, (int64_t{1} << 20) / 64,
               [&](int64_t lo, int64_t hi) { kernel(body + lo * kPerBlock, hi - lo, pattern); });
}

}  // namespace

CachingAllocator& CpuBackend::allocator() { return cpu_allocator(); }

void CpuBackend::fill(const RawTensor& out, double value) {
  visit_dtype(out.dtype(), "fill", [&]<class T>(type_tag<T>) {
    const T v = convert<T>(value);
    if (out.is_contiguous() && out.numel() * int64_t(sizeof(T)) >= kStreamFillBytes) {
      if (const vmath::Kernels* k = vmath::best()) {
        return stream_fill(base_ptr<T>(out) + out.offset(), out.numel(), v, k->stream_fill);
      }
    }
    parallel_walk<1>(out.shape(), {&out.layout()}, [&](const auto& off, int64_t n, const auto& st) {
      T* o = base_ptr<T>(out) + off[0];
      for (int64_t i = 0; i < n; ++i) o[i * st[0]] = v;
    });
  });
}

void CpuBackend::copy(const RawTensor& out, const RawTensor& x) {
  visit_dtype(out.dtype(), "copy", [&]<class TO>(type_tag<TO>) {
    visit_dtype(x.dtype(), "copy", [&]<class TI>(type_tag<TI>) {
      map<TO, TI>(
          out, [](TI v) { return convert<TO>(v); }, x);
    });
  });
}

void CpuBackend::arange(const RawTensor& out, double start, double step) {
  visit_dtype(out.dtype(), "arange", [&]<class T>(type_tag<T>) {
    T* o = base_ptr<T>(out) + out.offset();
    parallel_for(0, out.numel(), kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) o[i] = convert<T>(start + double(i) * step);
    });
  });
}

void CpuBackend::random(const RawTensor& out, RandomKind kind, uint64_t seed) {
  visit_dtype(out.dtype(), "random", [&]<std::floating_point T>(type_tag<T>) {
    T* o = base_ptr<T>(out) + out.offset();
    parallel_for(0, out.numel(), kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        o[i] = kind == RandomKind::uniform ? philox_uniform<T>(seed, uint64_t(i))
                                           : philox_normal<T>(seed, uint64_t(i));
      }
    });
  });
}

void CpuBackend::from_host(const RawTensor& out, const void* src) {
  auto* dst = static_cast<char*>(out.storage()->data()) + out.offset() * dtype_size(out.dtype());
  std::memcpy(dst, src, std::size_t(out.numel()) * dtype_size(out.dtype()));
}

void CpuBackend::to_host(const RawTensor& x, void* dst) {
  visit_dtype(x.dtype(), "to_host", [&]<class T>(type_tag<T>) {
    const Layout dense = Layout::contiguous(x.shape());
    map_into<T, T>(
        static_cast<T*>(dst), dense, [](T v) { return v; },
        std::pair<const T*, const Layout*>{base_ptr<T>(x), &x.layout()});
  });
}

void CpuBackend::unary(UnaryOp op, const RawTensor& out, const RawTensor& x) {
  visit_dtype(x.dtype(), op_name(op), [&]<class T>(type_tag<T>) { unary_typed<T>(op, out, x); });
}

void CpuBackend::binary(BinaryOp op, const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  visit_dtype(a.dtype(), op_name(op),
              [&]<class T>(type_tag<T>) { binary_typed<T>(op, out, a, b); });
}

void CpuBackend::where(const RawTensor& out, const RawTensor& cond, const RawTensor& a,
                       const RawTensor& b) {
  visit_dtype(a.dtype(), "where", [&]<class T>(type_tag<T>) {
    if constexpr (std::is_same_v<T, bool>) {
      map<T, bool, T, T>(
          out, [](bool c, T x, T y) { return c ? x : y; }, cond, a, b);
    } else {
      // A select through bit masks: no branch on the (often random) condition,
      // so nothing to mispredict, and the loop vectorises.
      using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
      map<T, bool, T, T>(
          out,
          [](bool c, T x, T y) {
            const U m = U(0) - U(c);
            return std::bit_cast<T>(U((std::bit_cast<U>(x) & m) | (std::bit_cast<U>(y) & U(~m))));
          },
          cond, a, b);
    }
  });
}

}  // namespace strata::detail

namespace strata {
Backend& cpu_backend() {
  static detail::CpuBackend instance;
  return instance;
}
}  // namespace strata
