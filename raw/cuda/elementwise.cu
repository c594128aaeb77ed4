// SPDX-License-Identifier: MIT
// CUDA elementwise kernels: fill, copy (with cast), arange, random, unary,
// binary, where. Same contract and the same arithmetic as raw/cpu/elementwise.cpp:
// signed integers wrap, maximum/minimum let NaN win, integer division
// truncates and reports division by zero, casts saturate.
#include "core/random.hpp"
#include "raw/cuda/common.cuh"

namespace strata::detail {
namespace {

template <class T>
using Unsigned = std::make_unsigned_t<T>;

template <class T>
__device__ T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(Unsigned<T>(a) + Unsigned<T>(b));
  else
    return a + b;
}
template <class T>
__device__ T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(Unsigned<T>(a) - Unsigned<T>(b));
  else
    return a - b;
}
template <class T>
__device__ T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(Unsigned<T>(a) * Unsigned<T>(b));
  else
    return a * b;
}
template <class T>
__device__ T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>)
    return T(Unsigned<T>(0) - Unsigned<T>(a));
  else
    return -a;
}
template <class T>
__device__ bool nan(T v) {
  return v != v;
}

template <class T>
__device__ T unary_value(UnaryOp op, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return !v;  // logical_not is the only bool unary op (checked in raw/ops.cpp)
  } else {
    switch (op) {
      case UnaryOp::neg:
        return wrap_neg(v);
      case UnaryOp::abs:
        return v < T(0) ? wrap_neg(v) : v;
      case UnaryOp::sign:
        return nan(v) ? v : T((T(0) < v) - (v < T(0)));
      default:
        break;
    }
    if constexpr (std::is_same_v<T, float>) {
      switch (op) {
        case UnaryOp::exp:
          return expf(v);
        case UnaryOp::log:
          return logf(v);
        case UnaryOp::sin:
          return sinf(v);
        case UnaryOp::cos:
          return cosf(v);
        case UnaryOp::sqrt:
          return sqrtf(v);
        case UnaryOp::tanh:
          return tanhf(v);
        default:
          break;
      }
    } else if constexpr (std::is_same_v<T, double>) {
      switch (op) {
        case UnaryOp::exp:
          return ::exp(v);
        case UnaryOp::log:
          return ::log(v);
        case UnaryOp::sin:
          return ::sin(v);
        case UnaryOp::cos:
          return ::cos(v);
        case UnaryOp::sqrt:
          return ::sqrt(v);
        case UnaryOp::tanh:
          return ::tanh(v);
        default:
          break;
      }
    }
    return v;  // unreachable: raw/ops.cpp rejects the op for this dtype
  }
}

/// a op b for the non-comparison ops; integer division by zero raises *error.
template <class T>
__device__ T binary_value(BinaryOp op, T a, T b, int* error) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == BinaryOp::logical_and ? (a && b) : (a || b);
  } else {
    switch (op) {
      case BinaryOp::add:
        return wrap_add(a, b);
      case BinaryOp::sub:
        return wrap_sub(a, b);
      case BinaryOp::mul:
        return wrap_mul(a, b);
      case BinaryOp::maximum:
        if (nan(a) || nan(b)) return a + b;
        return a < b ? b : a;
      case BinaryOp::minimum:
        if (nan(a) || nan(b)) return a + b;
        return b < a ? b : a;
      case BinaryOp::div:
        if constexpr (std::is_integral_v<T>) {
          if (b == 0) {
            atomicExch(error, 1);
            return T(0);
          }
          return b == T(-1) ? wrap_neg(a) : T(a / b);
        } else {
          return a / b;
        }
      case BinaryOp::pow:
        if constexpr (std::is_same_v<T, float>)
          return powf(a, b);
        else if constexpr (std::is_same_v<T, double>)
          return ::pow(a, b);
        else
          return a;  // unreachable: pow is float-only
      default:
        return a;  // unreachable
    }
  }
}

template <class T>
__device__ bool compare_value(BinaryOp op, T a, T b) {
  switch (op) {
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
    default:
      return a >= b;
  }
}

// --- typed launches (named templates: CUDA wants extended lambdas in them) ---------
template <class T>
void fill_t(const RawTensor& out, double value) {
  T* o = device_ptr<T>(out);
  const T v = convert_to<T>(value);
  launch_walk<1>(out.shape(), {&out.layout()}, [=] __device__(Offsets<1> at) { o[at.v[0]] = v; });
}

template <class TO, class TI>
void copy_t(const RawTensor& out, const RawTensor& x) {
  TO* o = device_ptr<TO>(out);
  const TI* in = device_ptr<TI>(x);
  launch_walk<2>(out.shape(), {&out.layout(), &x.layout()},
                 [=] __device__(Offsets<2> at) { o[at.v[0]] = convert_to<TO>(in[at.v[1]]); });
}

template <class T>
void arange_t(const RawTensor& out, double start, double step) {
  T* o = device_ptr<T>(out);
  const int64_t first = out.offset();
  launch_walk<1>(out.shape(), {&out.layout()}, [=] __device__(Offsets<1> at) {
    o[at.v[0]] = convert_to<T>(start + double(at.v[0] - first) * step);
  });
}

template <class T>
void random_t(const RawTensor& out, RandomKind kind, uint64_t seed) {
  T* o = device_ptr<T>(out);
  const int64_t first = out.offset();
  const bool uniform = kind == RandomKind::uniform;
  launch_walk<1>(out.shape(), {&out.layout()}, [=] __device__(Offsets<1> at) {
    const uint64_t i = uint64_t(at.v[0] - first);
    o[at.v[0]] = uniform ? philox_uniform<T>(seed, i) : philox_normal<T>(seed, i);
  });
}

template <class T>
void unary_t(UnaryOp op, const RawTensor& out, const RawTensor& x) {
  T* o = device_ptr<T>(out);
  const T* in = device_ptr<T>(x);
  launch_walk<2>(out.shape(), {&out.layout(), &x.layout()},
                 [=] __device__(Offsets<2> at) { o[at.v[0]] = unary_value<T>(op, in[at.v[1]]); });
}

template <class T>
void binary_t(CudaBackend& be, BinaryOp op, const RawTensor& out, const RawTensor& a,
              const RawTensor& b) {
  const T* pa = device_ptr<T>(a);
  const T* pb = device_ptr<T>(b);
  const std::array<const Layout*, 3> layouts{&out.layout(), &a.layout(), &b.layout()};
  if (is_comparison(op)) {
    bool* o = device_ptr<bool>(out);
    launch_walk<3>(out.shape(), layouts, [=] __device__(Offsets<3> at) {
      o[at.v[0]] = compare_value<T>(op, pa[at.v[1]], pb[at.v[2]]);
    });
    return;
  }
  const bool checked = std::is_integral_v<T> && !std::is_same_v<T, bool> && op == BinaryOp::div;
  int* error = checked ? be.error_flag() : nullptr;
  if (checked) STRATA_CUDA_CHECK(cudaMemset(error, 0, sizeof(int)));
  T* o = device_ptr<T>(out);
  launch_walk<3>(out.shape(), layouts, [=] __device__(Offsets<3> at) {
    o[at.v[0]] = binary_value<T>(op, pa[at.v[1]], pb[at.v[2]], error);
  });
  if (checked) {
    int flag = 0;
    STRATA_CUDA_CHECK(cudaMemcpy(&flag, error, sizeof(int), cudaMemcpyDeviceToHost));
    if (flag) fail<ValueError>("div", "integer division by zero");
  }
}

template <class T>
void where_t(const RawTensor& out, const RawTensor& cond, const RawTensor& a, const RawTensor& b) {
  T* o = device_ptr<T>(out);
  const bool* pc = device_ptr<bool>(cond);
  const T* pa = device_ptr<T>(a);
  const T* pb = device_ptr<T>(b);
  launch_walk<4>(
      out.shape(), {&out.layout(), &cond.layout(), &a.layout(), &b.layout()},
      [=] __device__(Offsets<4> at) { o[at.v[0]] = pc[at.v[1]] ? pa[at.v[2]] : pb[at.v[3]]; });
}

}  // namespace

void CudaBackend::fill(const RawTensor& out, double value) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "fill", [&]<class T>(type_tag<T>) { fill_t<T>(out, value); });
}

void CudaBackend::copy(const RawTensor& out, const RawTensor& x) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "copy", [&]<class TO>(type_tag<TO>) {
    visit_dtype(x.dtype(), "copy", [&]<class TI>(type_tag<TI>) { copy_t<TO, TI>(out, x); });
  });
}

void CudaBackend::arange(const RawTensor& out, double start, double step) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "arange", [&]<class T>(type_tag<T>) { arange_t<T>(out, start, step); });
}

void CudaBackend::random(const RawTensor& out, RandomKind kind, uint64_t seed) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "random",
              [&]<std::floating_point T>(type_tag<T>) { random_t<T>(out, kind, seed); });
}

void CudaBackend::unary(UnaryOp op, const RawTensor& out, const RawTensor& x) {
  DeviceGuard guard(index_);
  visit_dtype(x.dtype(), op_name(op), [&]<class T>(type_tag<T>) { unary_t<T>(op, out, x); });
}

void CudaBackend::binary(BinaryOp op, const RawTensor& out, const RawTensor& a,
                         const RawTensor& b) {
  DeviceGuard guard(index_);
  visit_dtype(a.dtype(), op_name(op),
              [&]<class T>(type_tag<T>) { binary_t<T>(*this, op, out, a, b); });
}

void CudaBackend::where(const RawTensor& out, const RawTensor& cond, const RawTensor& a,
                        const RawTensor& b) {
  DeviceGuard guard(index_);
  visit_dtype(a.dtype(), "where", [&]<class T>(type_tag<T>) { where_t<T>(out, cond, a, b); });
}

}  // namespace strata::detail
