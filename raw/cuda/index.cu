// SPDX-License-Identifier: MIT
// CUDA index_select (gather) and index_add (scatter-add) along one axis.
//
// Letters as on the CPU (raw/cpu/index.cpp): x is [P..., A, Q...], idx has J
// entries, out / src are [P..., J, Q...]; the "rest" is [P..., Q...].
// Indices are checked and normalised on the host (raw/index_support.hpp).
//   index_select: one thread per (j, rest) element.
//   index_add:    deterministic — the host groups the j of each destination
//                 row, in index order (a counting sort); one thread per
//                 (destination row, rest) element adds its sources in that
//                 order. No atomics, so the sums are the CPU's, bit for bit.
#include <vector>

#include "raw/cuda/common.cuh"
#include "raw/index_support.hpp"
#include "raw/ops.hpp"

namespace strata::detail {
namespace {

/// A Walk<2> over the rest layouts of two operands, or false when the merged
/// dims are too many for a kernel.
bool rest_walk(const Layout& a, const Layout& b, Walk<2>& w) {
  const StridedPlan<2> p = make_plan<2>(a.shape, {&a, &b});
  if (p.shape.size() > std::size_t(kWalkDims)) return false;
  w.ndim = int(p.shape.size());
  for (int d = 0; d < w.ndim; ++d) {
    w.shape[d] = p.shape[std::size_t(d)];
    for (int k = 0; k < 2; ++k) w.strides[k][d] = p.strides[k][std::size_t(d)];
  }
  for (int k = 0; k < 2; ++k) w.base[k] = p.offsets[k];
  return true;
}

/// Host int64 values as a device i64 tensor.
RawTensor upload(const std::vector<int64_t>& v, Device device) {
  return raw::from_host(v.data(), {int64_t(v.size())}, DType::i64, device);
}

template <class T>
__global__ void select_kernel(Walk<2> rest, int64_t rest_n, int64_t J, int64_t sj, int64_t sa,
                              const int64_t* pos, T* out, const T* x) {
  const int64_t total = J * rest_n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t j = t / rest_n;
    const Offsets<2> o = rest.at(t % rest_n);
    out[o.v[0] + j * sj] = x[o.v[1] + pos[j] * sa];
  }
}

template <class T>
__global__ void add_kernel(Walk<2> rest, int64_t rest_n, int64_t rows, const int64_t* dest,
                           const int64_t* starts, const int64_t* order, int64_t sa, int64_t sj,
                           T* out, const T* src) {
  const int64_t total = rows * rest_n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t u = t / rest_n;
    const Offsets<2> o = rest.at(t % rest_n);
    T* slot = out + o.v[0] + dest[u] * sa;
    T acc = *slot;
    for (int64_t q = starts[u]; q < starts[u + 1]; ++q) {
      const T v = src[o.v[1] + order[q] * sj];
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        acc = T(U(acc) + U(v));
      } else {
        acc += v;
      }
    }
    *slot = acc;
  }
}

template <class T>
void select_t(const RawTensor& out, const RawTensor& x0, int64_t axis, const RawTensor& idx) {
  const std::vector<int64_t> host = index_positions(idx, axis, x0.shape()[axis], "index_select");
  const int64_t J = idx.numel();
  RawTensor x = x0;
  const Layout of = fold_index_dims(out, axis, idx.ndim(), J);
  const Layout out_rest = drop_axis(of, axis);
  Walk<2> w;
  if (!rest_walk(out_rest, drop_axis(x.layout(), axis), w)) {
    x = raw::contiguous(x0);
    rest_walk(out_rest, drop_axis(x.layout(), axis), w);
  }
  const int64_t rest = out_rest.numel();
  if (rest == 0) return;
  const RawTensor pos = upload(host, out.device());
  select_kernel<T><<<blocks_for(J * rest), kThreads>>>(w, rest, J, of.strides[axis],
                                                       x.strides()[axis], device_ptr<int64_t>(pos),
                                                       device_ptr<T>(out), device_ptr<T>(x));
  STRATA_CUDA_LAUNCHED();
}

template <class T>
void add_t(const RawTensor& out, int64_t axis, const RawTensor& idx, const RawTensor& src) {
  const int64_t size = out.shape()[axis];
  const std::vector<int64_t> pos = index_positions(idx, axis, size, "index_add");
  const int64_t J = idx.numel();
  const RawTensor dense = raw::contiguous(src);
  const Layout sf = fold_index_dims(dense, axis, idx.ndim(), J);
  const Layout out_rest = drop_axis(out.layout(), axis);
  Walk<2> w;
  // out is contiguous and src dense: their rests always fit a kernel.
  if (!rest_walk(out_rest, drop_axis(sf, axis), w)) {
    fail<ValueError>("index_add", "internal: rest of shape ", out_rest.shape, " does not merge");
  }
  const int64_t rest = out_rest.numel();
  if (rest == 0) return;
  // Counting sort of j by destination: stable, so each row keeps index order.
  std::vector<int64_t> count(std::size_t(size) + 1, 0);
  for (int64_t p : pos) ++count[std::size_t(p) + 1];
  for (std::size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
  std::vector<int64_t> order(pos.size()), fill(count.begin(), count.end() - 1);
  for (int64_t j = 0; j < J; ++j) order[std::size_t(fill[std::size_t(pos[std::size_t(j)])]++)] = j;
  std::vector<int64_t> dest, starts;
  for (int64_t r = 0; r < size; ++r) {
    if (count[std::size_t(r) + 1] > count[std::size_t(r)]) {
      dest.push_back(r);
      starts.push_back(count[std::size_t(r)]);
    }
  }
  starts.push_back(J);
  const int64_t rows = int64_t(dest.size());
  const RawTensor d_dest = upload(dest, out.device()), d_starts = upload(starts, out.device()),
                  d_order = upload(order, out.device());
  add_kernel<T><<<blocks_for(rows * rest), kThreads>>>(
      w, rest, rows, device_ptr<int64_t>(d_dest), device_ptr<int64_t>(d_starts),
      device_ptr<int64_t>(d_order), out.strides()[axis], sf.strides[axis], device_ptr<T>(out),
      device_ptr<T>(dense));
  STRATA_CUDA_LAUNCHED();
}

}  // namespace

void CudaBackend::index_select(const RawTensor& out, const RawTensor& x, int64_t axis,
                               const RawTensor& idx) {
  DeviceGuard guard(index_);
  visit_dtype(x.dtype(), "index_select",
              [&]<class T>(type_tag<T>) { select_t<T>(out, x, axis, idx); });
}

void CudaBackend::index_add(const RawTensor& out, int64_t axis, const RawTensor& idx,
                            const RawTensor& src) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "index_add", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) add_t<T>(out, axis, idx, src);
  });
}

}  // namespace strata::detail
