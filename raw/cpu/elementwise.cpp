// SPDX-License-Identifier: MIT
// CPU elementwise kernels: fill, copy (with cast), creation, unary, binary,
// where (axpby and adam_step: optimizer_steps.cpp). Contract: the front end (raw/ops/) has
// validated shapes and dtypes (and integer divisors); `out` is written, never read
// (except binary with out aliasing a, and axpby and adam_step, which read each
// element before writing it). The arithmetic is raw/scalar_ops.hpp's, shared
// with CUDA; exp, log, sin, cos, tanh and sqrt of contiguous blocks go to
// raw/cpu/vmath.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/random.hpp"
#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/map.hpp"
#include "raw/cpu/staged_walk.hpp"
#include "raw/cpu/streaming.hpp"
#include "raw/cpu/transpose.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/vmath_of.hpp"
#include "raw/cpu/walk.hpp"
#include "raw/scalar_ops.hpp"

namespace strata::detail {
namespace {

// out = f(x) with a vectorised contiguous kernel: unit-stride blocks go to it
// directly; a transposed x into a large result straight from registers
// (stream_transposed), into a smaller one tile by tile through a transposed
// staging buffer; other strided blocks (sliced, flipped, broadcast) through a
// small buffer, gathered and scattered.
template <class T, class Kernel>
void vmath_map(Kernel kernel, vmath::StreamTranspose streamed, const RawTensor& out,
               const RawTensor& x) {
  T* ob = base_ptr<T>(out);
  const T* xb = base_ptr<T>(x);
  if (stream_transposed(reinterpret_cast<char*>(ob), out.layout(),
                        reinterpret_cast<const char*>(xb), x.layout(), int(sizeof(T)), streamed)) {
    return;
  }
  auto block = [&](const StagedBlock<2>& blk) {
    const int64_t n = blk.n;
    const std::array<int64_t, 2> st = blk.st;
    T* o = blk.result(ob);
    const T* p = blk.input(1, xb);
    if (st[0] == 1 && st[1] == 1) return kernel(p, o, n);
    constexpr int64_t kBuf = 256;
    alignas(64) T buf[kBuf];  // on a line: the kernel's vectors never span two
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
  };
  parallel_walk_staged<2>(out.shape(), {&out.layout(), &x.layout()}, {ob, xb},
                          {int(sizeof(T)), int(sizeof(T))}, block);
}

template <class T>
void unary_typed(UnaryOp op, const RawTensor& out, const RawTensor& x) {
  if constexpr (std::is_floating_point_v<T>) {
    const vmath::Kernels* k = vmath::best();
    if (const int fn = vmath_fn(op); k && fn >= 0) {
      if constexpr (std::is_same_v<T, float>) {
        return vmath_map<T>(k->f32[fn], k->stream_f32[fn], out, x);
      }
      if constexpr (std::is_same_v<T, double>) {
        return vmath_map<T>(k->f64[fn], k->stream_f64[fn], out, x);
      }
    }
  }
  scalar::visit_unary<T>(op, [&](auto fn) { map<T, T>(out, fn, x); });
}

// safe_mul / safe_div into a fresh output: the plain IEEE op, then, only when
// some value it wrote is not finite, one pass that recomputes the NaN
// elements with the functor, which differs from the plain op only there. The
// same values as mapping the functor, on any layout. vmath's product kernels
// compute the plain op and check finiteness in the same pass on every block
// whose operands step by 1 or 0, a transposed operand staged into a buffer
// first (parallel_walk_staged); blocks of other strides (both operands
// transposed, sliced steps) are computed and checked by a plain loop. Without
// vmath, or for small operands of such layouts, the plain op is mapped and the
// output summed to check it. False (the caller maps the functor) when out
// shares storage with an operand or is not contiguous.
template <class T, class Plain, class Safe>
bool safe_binary_fast(Plain plain, Safe safe, const RawTensor& out, const RawTensor& a,
                      const RawTensor& b) {
  if (!out.is_contiguous() || out.storage() == a.storage() || out.storage() == b.storage()) {
    return false;
  }
  bool (*kernel)(const T*, int64_t, const T*, int64_t, T*, int64_t) = nullptr;
  if (const vmath::Kernels* k = vmath::best()) {
    constexpr bool is_mul = std::is_same_v<Plain, scalar::Mul>;
    if constexpr (std::is_same_v<T, float>) kernel = is_mul ? k->mul_f32 : k->div_f32;
    if constexpr (std::is_same_v<T, double>) kernel = is_mul ? k->mul_f64 : k->div_f64;
  }
  auto unit_or_zero = [](int64_t s) { return s == 0 || s == 1; };
  // The stride along the last axis longer than 1 (the walk's innermost for a contiguous out).
  auto last_unit_or_zero = [&](const RawTensor& t) {
    for (int64_t d = t.ndim() - 1; d >= 0; --d) {
      if (t.shape()[std::size_t(d)] > 1) return unit_or_zero(t.strides()[std::size_t(d)]);
    }
    return true;
  };
  // A transposed operand is staged only past kTile * kTile elements (parallel_walk_staged);
  // below, the plain map and the vectorised sum check cost fewer instructions.
  const bool fused = kernel != nullptr && ((last_unit_or_zero(a) && last_unit_or_zero(b)) ||
                                           out.numel() > kTile * kTile);
  T* ob = base_ptr<T>(out);
  bool finite;
  if (fused) {
    const T* ab = base_ptr<T>(a);
    const T* bb = base_ptr<T>(b);
    std::atomic<bool> all_finite{true};
    auto block = [&](const StagedBlock<3>& blk) {
      const int64_t n = blk.n;
      const std::array<int64_t, 3> st = blk.st;
      T* o = blk.result(ob);
      const T* pa = blk.input(1, ab);
      const T* pb = blk.input(2, bb);
      bool ok = true;
      if (st[0] == 1 && unit_or_zero(st[1]) && unit_or_zero(st[2])) {
        ok = kernel(pa, st[1], pb, st[2], o, n);
      } else {
        bool bad = false;
        for (int64_t i = 0; i < n; ++i) {
          const T v = plain(pa[i * st[1]], pb[i * st[2]]);
          o[i * st[0]] = v;
          bad |= !(v - v == T(0));  // inf - inf and NaN - NaN are NaN
        }
        ok = !bad;
      }
      if (!ok) all_finite.store(false, std::memory_order_relaxed);
    };
    parallel_walk_staged<3>(out.shape(), {&out.layout(), &a.layout(), &b.layout()}, {ob, ab, bb},
                            {int(sizeof(T)), int(sizeof(T)), int(sizeof(T))}, block);
    finite = all_finite.load();
  } else {
    map<T, T, T>(out, plain, a, b);
    finite = std::isfinite(vmath::sum(ob + out.offset(), out.numel()));
  }
  if (finite) return true;
  map<T, T, T, T>(out, NanFixup<Safe>{safe}, out, a, b);
  return true;
}

// The plain add, sub, mul, div, maximum and minimum of floats by the instruction set's
// kernel (vmath's binary kernels, which a plan's fused blocks run too) on blocks whose
// operands step by 1 or 0: map_block's loop is compiled for SSE2, and the branch of maximum
// and minimum is not vectorised there at all. The bits are the functor's (vmath.hpp); a
// block where two NaNs meet, or of any other layout, runs the functor's map_block. False
// (the caller maps the functor) when out shares storage with an operand or is not
// contiguous.
template <class T>
bool plain_binary_fast(BinaryOp op, const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  const int fn = vmath_binary_fn(op);
  const vmath::Kernels* k = vmath::best();
  if (fn < 0 || k == nullptr || !out.is_contiguous() || out.storage() == a.storage() ||
      out.storage() == b.storage()) {
    return false;
  }
  bool (*kernel)(const T*, int64_t, const T*, int64_t, T*, int64_t) = nullptr;
  if constexpr (std::is_same_v<T, float>) kernel = k->binary_f32[fn];
  if constexpr (std::is_same_v<T, double>) kernel = k->binary_f64[fn];
  auto unit_or_zero = [](int64_t s) { return s == 0 || s == 1; };
  T* ob = base_ptr<T>(out);
  const T* ab = base_ptr<T>(a);
  const T* bb = base_ptr<T>(b);
  auto block = [&](const StagedBlock<3>& blk) {
    const std::array<int64_t, 3> st = blk.st;
    T* o = blk.result(ob);
    const T* pa = blk.input(1, ab);
    const T* pb = blk.input(2, bb);
    if (st[0] == 1 && unit_or_zero(st[1]) && unit_or_zero(st[2]) &&
        kernel(pa, st[1], pb, st[2], o, blk.n)) {
      return;
    }
    scalar::visit_binary<T>(op, [&](auto f) {
      if constexpr (std::is_same_v<decltype(f(T{}, T{})), T>) {
        map_block<T, T, T>(f, o, st[0], blk.n, std::pair{pa, st[1]}, std::pair{pb, st[2]});
      }
    });
  };
  parallel_walk_staged<3>(out.shape(), {&out.layout(), &a.layout(), &b.layout()}, {ob, ab, bb},
                          {int(sizeof(T)), int(sizeof(T)), int(sizeof(T))}, block);
  return true;
}

template <class T>
void binary_typed(BinaryOp op, const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (plain_binary_fast<T>(op, out, a, b)) return;
    if (op == BinaryOp::safe_mul &&
        safe_binary_fast<T>(scalar::Mul{}, scalar::SafeMul{}, out, a, b)) {
      return;
    }
    if (op == BinaryOp::safe_div &&
        safe_binary_fast<T>(scalar::Div{}, scalar::SafeDiv{}, out, a, b)) {
      return;
    }
  }
  scalar::visit_binary<T>(op, [&](auto fn) {
    using Out = decltype(fn(T{}, T{}));  // bool for the comparisons
    map<Out, T, T>(out, fn, a, b);
  });
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
    const T v = scalar::convert<T>(value);
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
  if (out.dtype() == x.dtype()) {
    auto* const ob = static_cast<char*>(out.storage()->data());
    const auto* const xb = static_cast<const char*>(x.storage()->data());
    const int size = int(dtype_size(x.dtype()));
    // A large transposed copy of 4- or 8-byte elements: streamed, bits unchanged.
    if (const vmath::Kernels* k = vmath::best()) {
      if (stream_transposed(ob, out.layout(), xb, x.layout(), size,
                            size == 4 ? k->stream_copy32 : k->stream_copy64)) {
        return;
      }
    }
    if (copy_transposed(ob, out.layout(), xb, x.layout(), size)) return;
  }
  visit_dtype(out.dtype(), "copy", [&]<class TO>(type_tag<TO>) {
    visit_dtype(x.dtype(), "copy",
                [&]<class TI>(type_tag<TI>) { map<TO, TI>(out, ConvertTo<TO>{}, x); });
  });
}

void CpuBackend::arange(const RawTensor& out, double start, double step) {
  visit_dtype(out.dtype(), "arange", [&]<class T>(type_tag<T>) {
    T* o = base_ptr<T>(out) + out.offset();
    parallel_for(0, out.numel(), kGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        o[i] = scalar::convert<T>(scalar::arange_at(start, step, i));
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
  if (x.numel() == 0) return;
  if (x.is_contiguous()) {
    // Bytes, not values: a bool buffer that was never written (raw::empty) copies without
    // loading its bytes as bools, which is undefined for values other than 0 and 1.
    const std::size_t size = dtype_size(x.dtype());
    const auto* src = static_cast<const char*>(x.storage()->data()) + x.offset() * size;
    std::memcpy(dst, src, std::size_t(x.numel()) * size);
    return;
  }
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
      map<T, bool, T, T>(out, BoolSelect{}, cond, a, b);
    } else {
      map_into<T, uint8_t, T, T>(
          base_ptr<T>(out), out.layout(), MaskSelect<T>{},
          std::pair{static_cast<const uint8_t*>(static_cast<const void*>(base_ptr<bool>(cond))),
                    &cond.layout()},
          std::pair{static_cast<const T*>(base_ptr<T>(a)), &a.layout()},
          std::pair{static_cast<const T*>(base_ptr<T>(b)), &b.layout()});
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
