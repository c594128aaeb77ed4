// SPDX-License-Identifier: MIT
// CUDA fold (col2im), the kernel of raw::fold: deterministic, no atomics.
//
// Letters as on the CPU (raw/cpu/fold.cpp): y is [B..., O1..Ok, K1..Kk] with
// any strides, out [B..., S1..Sk] contiguous. One thread per output element
// p gathers the windows that cover it: for each kernel position k in row-major
// order, the window o = (p - k dilation) / stride when that is a whole number
// in [0, O) on every axis, adding y[b, o, k] in that order from 0: the CPU's
// order, so the sums are its bits. The per-axis geometry sits in a small
// device array (any number of axes); y's batch axes are a strided walk.
#include <type_traits>
#include <vector>

#include "raw/cuda/common.cuh"

namespace strata::detail {
namespace {

/// Entries per windowed axis in the geometry array: S, O, K, stride, dilation, y's stride
/// along O, y's stride along K.
constexpr int kGeo = 7;

/// a + b, wrapping for integers (as every integer add in strata).
template <class T>
__device__ T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) + U(b));
  } else {
    return a + b;
  }
}

/// out[t] for t < total = batch * sn (sn outputs per batch element, kn kernel positions).
template <class T>
__global__ void fold_kernel(Walk<1> batch, int64_t total, int64_t sn, int64_t kn, int k,
                            const int64_t* geo, T* out, const T* y) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t r = t % sn;
    const int64_t base = batch.at(t / sn).v[0];
    T acc = T(0);
    for (int64_t q = 0; q < kn; ++q) {
      int64_t pr = r, kr = q, off = base;
      bool hit = true;
      for (int i = k - 1; i >= 0 && hit; --i) {
        const int64_t* g = geo + kGeo * i;
        const int64_t p = pr % g[0], kk = kr % g[2];
        pr /= g[0];
        kr /= g[2];
        const int64_t u = p - kk * g[4];
        hit = u >= 0 && u % g[3] == 0 && u / g[3] < g[1];
        off += (u / g[3]) * g[5] + kk * g[6];
      }
      if (hit) acc = wrapping_add(acc, y[off]);
    }
    out[t] = acc;
  }
}

/// y's batch axes (its leading ones) as a Walk<1>, or false when they do not merge into
/// kWalkDims dims.
bool batch_walk(const RawTensor& y, int64_t lead, Walk<1>& w) {
  const Layout batch{Shape(y.shape().begin(), y.shape().begin() + lead),
                     Strides(y.strides().begin(), y.strides().begin() + lead), y.offset()};
  const StridedPlan<1> p = make_plan<1>(batch.shape, {&batch});
  if (p.shape.size() > std::size_t(kWalkDims)) return false;
  w.ndim = int(p.shape.size());
  for (int d = 0; d < w.ndim; ++d) {
    w.shape[d] = p.shape[std::size_t(d)];
    w.strides[0][d] = p.strides[0][std::size_t(d)];
  }
  w.base[0] = p.offsets[0];
  return true;
}

template <class T>
void fold_t(CudaBackend& be, const RawTensor& out, const RawTensor& y0, const Window& w) {
  const int64_t k = w.kernel.ndim(), lead = y0.ndim() - 2 * k;
  RawTensor y = y0;
  Walk<1> walk;
  if (!batch_walk(y, lead, walk)) {
    y = backend_contiguous(be, y0);
    batch_walk(y, lead, walk);
  }
  std::vector<int64_t> geo;
  int64_t sn = 1, kn = 1;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t s = out.shape()[lead + i];
    geo.insert(geo.end(), {s, y.shape()[lead + i], w.kernel[i], w.stride[i], w.dilation[i],
                           y.strides()[lead + i], y.strides()[lead + k + i]});
    sn *= s;
    kn *= w.kernel[i];
  }
  const RawTensor g = backend_empty(be, {int64_t(geo.size())}, DType::i64);
  be.from_host(g, geo.data());
  const int64_t total = out.numel();
  fold_kernel<T><<<blocks_for(total), kThreads>>>(
      walk, total, sn, kn, int(k), device_ptr<int64_t>(g) + g.offset(),
      device_ptr<T>(out) + out.offset(), device_ptr<T>(y));
  STRATA_CUDA_LAUNCHED();
}

}  // namespace

void CudaBackend::fold(const RawTensor& out, const RawTensor& y, const Window& w) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "fold", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) fold_t<T>(*this, out, y, w);
  });
}

}  // namespace strata::detail
