// SPDX-License-Identifier: MIT
// CUDA elementwise kernels: fill, copy (with cast), arange, random, unary,
// binary, axpby, adam_step, where. Same contract as raw/cpu/elementwise.cpp, and the same
// arithmetic: both instantiate raw/scalar_ops.hpp's functors and casts.
#include "core/random.hpp"
#include "raw/cuda/common.cuh"
#include "raw/scalar_ops.hpp"

namespace strata::detail {
namespace {

// --- typed launches (named templates: CUDA wants extended lambdas in them) ---------
template <class T>
void fill_t(const RawTensor& out, double value) {
  T* o = device_ptr<T>(out);
  const T v = scalar::convert<T>(value);
  launch_walk<1>(out.shape(), {&out.layout()}, [=] __device__(Offsets<1> at) { o[at.v[0]] = v; });
}

template <class TO, class TI>
void copy_t(const RawTensor& out, const RawTensor& x) {
  launch_map<TO, TI>([] __device__(TI v) { return scalar::convert<TO>(v); }, out, {&x});
}

template <class T>
void arange_t(const RawTensor& out, double start, double step) {
  T* o = device_ptr<T>(out);
  const int64_t first = out.offset();
  launch_walk<1>(out.shape(), {&out.layout()}, [=] __device__(Offsets<1> at) {
    o[at.v[0]] = scalar::convert<T>(scalar::arange_at(start, step, at.v[0] - first));
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
void where_t(const RawTensor& out, const RawTensor& cond, const RawTensor& a, const RawTensor& b) {
  launch_map<T, bool, T, T>([] __device__(bool c, T x, T y) { return c ? x : y; }, out,
                            {&cond, &a, &b});
}

template <class T>
void adam_step_t(const RawTensor& p, const RawTensor& m, const RawTensor& v, const RawTensor& g,
                 const scalar::AdamStep<T>& f) {
  T *pp = device_ptr<T>(p), *mp = device_ptr<T>(m), *vp = device_ptr<T>(v);
  const T* gp = device_ptr<T>(g);
  launch_walk<4>(
      p.shape(), {&p.layout(), &m.layout(), &v.layout(), &g.layout()},
      [=] __device__(Offsets<4> at) { f(pp[at.v[0]], mp[at.v[1]], vp[at.v[2]], gp[at.v[3]]); });
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
  visit_dtype(x.dtype(), op_name(op), [&]<class T>(type_tag<T>) {
    scalar::visit_unary<T>(op, [&](auto fn) { launch_map<T, T>(fn, out, {&x}); });
  });
}

void CudaBackend::binary(BinaryOp op, const RawTensor& out, const RawTensor& a,
                         const RawTensor& b) {
  DeviceGuard guard(index_);
  visit_dtype(a.dtype(), op_name(op), [&]<class T>(type_tag<T>) {
    // Out is bool for the comparisons.
    scalar::visit_binary<T>(op, [&](auto fn) {
      launch_map<decltype(fn(T{}, T{})), T, T>(fn, out, {&a, &b});
    });
  });
}

void CudaBackend::axpby(const RawTensor& out, double alpha, const RawTensor& x, double beta) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "axpby_", [&]<std::floating_point T>(type_tag<T>) {
    launch_map<T, T, T>(scalar::Axpby<T>{T(alpha), T(beta)}, out, {&out, &x});
  });
}

void CudaBackend::adam_step(const RawTensor& p, const RawTensor& m, const RawTensor& v,
                            const RawTensor& g, const AdamStepCoefficients& c) {
  DeviceGuard guard(index_);
  visit_dtype(p.dtype(), "adam_step_", [&]<std::floating_point T>(type_tag<T>) {
    adam_step_t<T>(p, m, v, g, scalar::AdamStep<T>(c));
  });
}

void CudaBackend::where(const RawTensor& out, const RawTensor& cond, const RawTensor& a,
                        const RawTensor& b) {
  DeviceGuard guard(index_);
  visit_dtype(a.dtype(), "where", [&]<class T>(type_tag<T>) { where_t<T>(out, cond, a, b); });
}

}  // namespace strata::detail
