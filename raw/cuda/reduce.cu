// SPDX-License-Identifier: MIT
// CUDA reductions: sum, max, min, argmax, argmin over a set of axes.
//
// As on the CPU (raw/cpu/reduce.cpp), x is seen as [O kept] x [R reduced]
// positions, and the reducers are the CPU's own (raw/scalar_ops.hpp): floats
// accumulate in double, integers in wrapping int64; argmax and argmin give the
// first position of the extreme (or of the first NaN).
// Two kernels, both deterministic (a fixed combination order, whatever the
// scheduling), each running one job per (output, slice of R):
//   rows:    a block per job; threads stride over the slice, kInFlight
//            loads at a time, then a shared-memory tree combines them (used
//            when the reduced elements are close);
//   columns: a thread per job, walking the slice in order; consecutive threads
//            take consecutive outputs (used when the kept axes are the fast
//            ones, e.g. a sum over axis 0: coalesced).
// With many outputs each has one slice, all of R, and the job writes the
// output. With too few outputs to fill the GPU (a sum over a whole tensor, a
// bias gradient: [4096, 10] summed over axis 0), R is cut into slices, each
// job leaves its accumulator in a scratch buffer, and combine_kernel folds an
// output's accumulators in slice order.
// Layouts whose merged kept or reduced dims exceed what a kernel decodes are
// first copied to a contiguous [kept..., reduced...] permutation.
#include <algorithm>
#include <cstdlib>

#include "raw/cuda/common.cuh"
#include "raw/scalar_ops.hpp"

namespace strata::detail {
namespace {

/// Jobs and slices: job j is output j % outputs, slice j / outputs, covering
/// positions [slice * len, min(n, slice * len + len)) of R. With one slice a job
/// writes its output; with several, its accumulator for combine_kernel.
template <class R>
struct Jobs {
  int64_t outputs, n, len, count;
  typename R::Out* out;
  typename R::Acc* part;  // null with one slice

  __device__ int64_t output(int64_t j) const { return j % outputs; }
  __device__ int64_t lo(int64_t j) const { return j / outputs * len; }
  __device__ int64_t hi(int64_t j) const { return lo(j) + len < n ? lo(j) + len : n; }
  __device__ void put(int64_t j, const typename R::Acc& acc) const {
    if (part) {
      part[j] = acc;
    } else {
      out[j] = R::finish(acc);
    }
  }
};

/// Loads a rows_kernel thread issues before it folds them.
constexpr int kInFlight = 8;

template <class R, class T>
__global__ void rows_kernel(Walk<1> kept, Walk<1> red, const T* x, Jobs<R> jobs) {
  using Acc = typename R::Acc;
  __shared__ Acc tree[kThreads];
  const int t = int(threadIdx.x);
  for (int64_t j = blockIdx.x; j < jobs.count; j += gridDim.x) {
    const int64_t base = kept.at(jobs.output(j)).v[0], hi = jobs.hi(j);
    Acc acc = R::init();
    // kInFlight loads before their steps: with one at a time a warp waits out
    // each load's latency, and a whole-tensor sum reached a third of the
    // bandwidth (docs/CUDA.md). The steps keep the order of the plain loop.
    const int64_t b = blockDim.x;
    int64_t r = jobs.lo(j) + t;
    auto rounds = [&](auto offset) {
      for (; r + (kInFlight - 1) * b < hi; r += kInFlight * b) {
        T v[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) v[u] = x[offset(r + u * b)];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) R::step(acc, v[u], r + u * b);
      }
    };
    if (red.ndim == 1) {  // the usual case once dims are merged: one stride, no decoding
      const int64_t o = base + red.base[0], s = red.strides[0][0];
      rounds([&](int64_t i) { return o + i * s; });
    } else {
      rounds([&](int64_t i) { return base + red.at(i).v[0]; });
    }
    for (; r < hi; r += b) R::step(acc, x[base + red.at(r).v[0]], r);
    tree[t] = acc;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (t < s) R::combine(tree[t], tree[t + s]);
      __syncthreads();
    }
    if (t == 0) jobs.put(j, tree[0]);
    __syncthreads();
  }
}

template <class R, class T>
__global__ void columns_kernel(Walk<1> kept, Walk<1> red, const T* x, Jobs<R> jobs) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < jobs.count; j += step) {
    const int64_t base = kept.at(jobs.output(j)).v[0], hi = jobs.hi(j);
    typename R::Acc acc = R::init();
#pragma unroll 4
    for (int64_t r = jobs.lo(j); r < hi; ++r) R::step(acc, x[base + red.at(r).v[0]], r);
    jobs.put(j, acc);
  }
}

/// Folds each output's slice accumulators, in slice order (later positions last).
template <class R>
__global__ void combine_kernel(Jobs<R> jobs) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x, slices = jobs.count / jobs.outputs;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < jobs.outputs; o += step) {
    typename R::Acc acc = jobs.part[o];
    for (int64_t c = 1; c < slices; ++c) R::combine(acc, jobs.part[c * jobs.outputs + o]);
    jobs.out[o] = R::finish(acc);
  }
}

// Slicing: enough jobs to fill an H100/H200-sized GPU (132 multiprocessors of
// 2048 threads), with slices long enough that the accumulators written and
// read back stay a small part of the traffic.
constexpr int64_t kColumnJobs = int64_t(1) << 17;      // threads
constexpr int64_t kColumnSlice = 32;                   // elements a thread, at least
constexpr int64_t kRowJobs = 1024;                     // blocks
constexpr int64_t kRowSlice = int64_t(kThreads) * 16;  // elements a block, at least

/// How many slices to cut R (n positions) into for `outputs` outputs.
int64_t slices_for(int64_t outputs, int64_t n, bool columns) {
  const int64_t want = (columns ? kColumnJobs : kRowJobs) / outputs;
  const int64_t most = n / (columns ? kColumnSlice : kRowSlice);
  return std::max<int64_t>(1, std::min(want, most));
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
  using Acc = typename R::Acc;
  const bool columns = O > 1 && n > 1 && min_abs_stride(red) > min_abs_stride(kept);
  Jobs<R> jobs{O, n, n, O, device_ptr<typename R::Out>(out) + out.offset(), nullptr};
  RawTensor scratch;  // the slices' accumulators; freed in stream order
  if (const int64_t slices = slices_for(O, n, columns); slices > 1) {
    jobs.len = (n + slices - 1) / slices;
    jobs.count = O * ((n + jobs.len - 1) / jobs.len);  // no empty slice
    scratch = backend_empty(be, {jobs.count * int64_t(sizeof(Acc))}, DType::b8);
    jobs.part = static_cast<Acc*>(scratch.storage()->data());
  }
  const T* xb = device_ptr<T>(x);
  if (columns) {
    columns_kernel<R, T><<<blocks_for(jobs.count), kThreads>>>(wk, wr, xb, jobs);
  } else {
    const unsigned blocks = unsigned(std::min<int64_t>(jobs.count, 65536));
    rows_kernel<R, T><<<blocks, kThreads>>>(wk, wr, xb, jobs);
  }
  STRATA_CUDA_LAUNCHED();
  if (jobs.part) {
    combine_kernel<R><<<blocks_for(O), kThreads>>>(jobs);
    STRATA_CUDA_LAUNCHED();
  }
}

}  // namespace

void CudaBackend::reduce(ReduceOp op, const RawTensor& out, const RawTensor& x, const Shape& axes) {
  DeviceGuard guard(index_);
  visit_dtype(x.dtype(), op_name(op), [&]<class T>(type_tag<T>) {
    scalar::visit_reduce<T>(op, [&]<class R>(type_tag<R>) { run<R, T>(*this, out, x, axes); });
  });
}

}  // namespace strata::detail
