// SPDX-License-Identifier: MIT
// CUDA reductions: sum, max, min, argmax, argmin over a set of axes.
//
// As on the CPU (raw/cpu/reduce.cpp), x is seen as [O kept] x [R reduced]
// positions, and the reducers are the CPU's own (raw/scalar_ops.hpp): floats
// accumulate in double, integers in wrapping int64; argmax and argmin give the
// first position of the extreme (or of the first NaN).
// Two kernels, both deterministic (a fixed combination order, whatever the
// scheduling):
//   rows:    one block per output; threads stride over R, then a shared-memory
//            tree combines them (used when the reduced elements are close);
//   columns: one thread per output walking R in order (used when the kept
//            axes are the fast ones, e.g. a sum over axis 0: coalesced).
// Layouts whose merged kept or reduced dims exceed what a kernel decodes are
// first copied to a contiguous [kept..., reduced...] permutation.
#include <algorithm>
#include <cstdlib>

#include "raw/cuda/common.cuh"
#include "raw/scalar_ops.hpp"

namespace strata::detail {
namespace {

template <class R, class T>
__global__ void rows_kernel(Walk<1> kept, Walk<1> red, int64_t O, int64_t n, const T* x,
                            typename R::Out* out) {
  using Acc = typename R::Acc;
  __shared__ Acc part[kThreads];
  const int t = int(threadIdx.x);
  for (int64_t o = blockIdx.x; o < O; o += gridDim.x) {
    const int64_t base = kept.at(o).v[0];
    Acc acc = R::init();
    for (int64_t r = t; r < n; r += blockDim.x) R::step(acc, x[base + red.at(r).v[0]], r);
    part[t] = acc;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (t < s) R::combine(part[t], part[t + s]);
      __syncthreads();
    }
    if (t == 0) out[o] = R::finish(part[0]);
    __syncthreads();
  }
}

template <class R, class T>
__global__ void columns_kernel(Walk<1> kept, Walk<1> red, int64_t O, int64_t n, const T* x,
                               typename R::Out* out) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < O; o += step) {
    const int64_t base = kept.at(o).v[0];
    typename R::Acc acc = R::init();
    for (int64_t r = 0; r < n; ++r) R::step(acc, x[base + red.at(r).v[0]], r);
    out[o] = R::finish(acc);
  }
}

/// A Walk<1> over `l` (merged), or false when it has too many merged dims.
bool to_walk(const Layout& l, Walk<1>& w) {
  const StridedPlan<1> p = make_plan<1>(l.shape, {&l});
  if (p.shape.size() > std::size_t(kWalkDims)) return false;
  w.ndim = int(p.shape.size());
  for (int d = 0; d < w.ndim; ++d) {
    w.shape[d] = p.shape[std::size_t(d)];
    w.strides[0][d] = p.strides[0][std::size_t(d)];
  }
  w.base[0] = p.offsets[0];
  return true;
}

int64_t min_abs_stride(const Layout& l) {
  int64_t best = INT64_MAX;
  for (int64_t i = 0; i < l.ndim(); ++i) {
    if (l.shape[i] > 1) best = std::min(best, std::abs(l.strides[i]));
  }
  return best;
}

template <class R, class T>
void run(Backend& be, const RawTensor& out, const RawTensor& x0, const Shape& axes) {
  RawTensor x = x0;
  Layout kept, red;
  auto split = [&] {
    kept = Layout{};
    red = Layout{};
    kept.offset = x.offset();
    std::size_t a = 0;
    for (int64_t d = 0; d < x.ndim(); ++d) {
      Layout& part = a < axes.size() && axes[a] == d ? (++a, red) : kept;
      part.shape.push_back(x.shape()[d]);
      part.strides.push_back(x.strides()[d]);
    }
  };
  split();
  Walk<1> wk, wr;
  if (!to_walk(kept, wk) || !to_walk(red, wr)) {
    // Too many merged dims for the kernels: copy to [kept..., reduced...].
    Shape dims;
    for (int64_t d = 0; d < x.ndim(); ++d) {
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) dims.push_back(d);
    }
    for (int64_t d : axes) dims.push_back(d);
    const RawTensor dense = backend_contiguous(be, x.permute(dims));
    // Back in the original axis order (a view), now with mergeable strides.
    Shape inverse(dims.size(), 0);
    for (std::size_t i = 0; i < dims.size(); ++i) inverse[std::size_t(dims[i])] = int64_t(i);
    x = dense.permute(inverse);
    split();
    to_walk(kept, wk);
    to_walk(red, wr);
  }
  const int64_t O = kept.numel(), n = red.numel();
  if (O == 0) return;
  using Out = typename R::Out;
  Out* o = device_ptr<Out>(out) + out.offset();
  const T* xb = device_ptr<T>(x);
  if (O > 1 && n > 1 && min_abs_stride(red) > min_abs_stride(kept)) {
    columns_kernel<R, T><<<blocks_for(O), kThreads>>>(wk, wr, O, n, xb, o);
  } else {
    const unsigned blocks = unsigned(O < 65536 ? O : 65536);
    rows_kernel<R, T><<<blocks, kThreads>>>(wk, wr, O, n, xb, o);
  }
  STRATA_CUDA_LAUNCHED();
}

}  // namespace

void CudaBackend::reduce(ReduceOp op, const RawTensor& out, const RawTensor& x, const Shape& axes) {
  DeviceGuard guard(index_);
  visit_dtype(x.dtype(), op_name(op), [&]<class T>(type_tag<T>) {
    scalar::visit_reduce<T>(op, [&]<class R>(type_tag<R>) { run<R, T>(*this, out, x, axes); });
  });
}

}  // namespace strata::detail
