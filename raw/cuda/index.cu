// SPDX-License-Identifier: MIT
// CUDA index_select (gather) and index_add (scatter-add) along one axis.
//
// Letters as on the CPU (raw/cpu/index.cpp): x is [P..., A, Q...], idx has J
// entries, out / src are [P..., J, Q...]; the "rest" is [P..., Q...]. The
// front end hands over idx as contiguous i64 positions already in [0, A) and
// src contiguous (raw/backend.hpp), so nothing here reads indices back.
//   index_select: one thread per (j, rest) element.
//   index_add:    deterministic — a stable radix sort (CUB) of the j by
//                 destination row puts the sources of each row together, in
//                 index order; the thread of (k, rest), where k starts a run
//                 of one row in the sorted order, adds that run's sources in
//                 order. No atomics, so the sums are the CPU's, bit for bit.
#include <cub/device/device_radix_sort.cuh>

#include "raw/cuda/common.cuh"
#include "raw/index_support.hpp"

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

__global__ void iota_kernel(int64_t n, int64_t* out) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) out[i] = i;
}

/// rows: the J destination rows sorted (stably); order: the source j of each.
template <class T>
__global__ void add_kernel(Walk<2> rest, int64_t rest_n, int64_t J, const uint64_t* rows,
                           const int64_t* order, int64_t sa, int64_t sj, T* out, const T* src) {
  const int64_t total = J * rest_n, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t k = t / rest_n;
    const uint64_t row = rows[k];
    if (k > 0 && rows[k - 1] == row) continue;  // the run's first thread adds it all
    const Offsets<2> o = rest.at(t % rest_n);
    T* slot = out + o.v[0] + int64_t(row) * sa;
    T acc = *slot;
    for (int64_t q = k; q < J && rows[q] == row; ++q) {
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

/// The sources of index_add grouped by destination row, in index order.
struct SortedRows {
  RawTensor rows;   ///< [J] i64: the entries of idx, sorted
  RawTensor order;  ///< [J] i64: the j each sorted entry came from
};

/// Stable radix sort of (idx[j], j) by idx[j], entries in [0, size), on the device.
SortedRows sort_rows(Backend& be, const RawTensor& idx, int64_t size) {
  const int64_t J = idx.numel();
  const SortedRows s{backend_empty(be, {J}, DType::i64), backend_empty(be, {J}, DType::i64)};
  const RawTensor iota = backend_empty(be, {J}, DType::i64);
  iota_kernel<<<blocks_for(J), kThreads>>>(J, device_ptr<int64_t>(iota));
  STRATA_CUDA_LAUNCHED();
  // Entries are non-negative, so their order is that of their uint64 bits,
  // and only the bits of size - 1 need sorting.
  int bits = 1;
  while (bits < 63 && (uint64_t(size - 1) >> bits) != 0) ++bits;
  const auto* keys = reinterpret_cast<const uint64_t*>(device_ptr<int64_t>(idx) + idx.offset());
  auto* sorted = device_ptr<uint64_t>(s.rows);
  std::size_t temp_bytes = 0;
  STRATA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, sorted,
                                                    device_ptr<int64_t>(iota),
                                                    device_ptr<int64_t>(s.order), J, 0, bits));
  const RawTensor temp = backend_empty(be, {int64_t(temp_bytes > 0 ? temp_bytes : 1)}, DType::b8);
  STRATA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.storage()->data(), temp_bytes, keys,
                                                    sorted, device_ptr<int64_t>(iota),
                                                    device_ptr<int64_t>(s.order), J, 0, bits));
  return s;
}

template <class T>
void select_t(Backend& be, const RawTensor& out, const RawTensor& x0, int64_t axis,
              const RawTensor& idx) {
  const int64_t J = idx.numel();
  RawTensor x = x0;
  const Layout of = fold_index_dims(out, axis, idx.ndim(), J);
  const Layout out_rest = drop_axis(of, axis);
  Walk<2> w;
  if (!rest_walk(out_rest, drop_axis(x.layout(), axis), w)) {
    x = backend_contiguous(be, x0);
    rest_walk(out_rest, drop_axis(x.layout(), axis), w);
  }
  const int64_t rest = out_rest.numel();
  if (rest == 0) return;
  const int64_t* pos = device_ptr<int64_t>(idx) + idx.offset();
  select_kernel<T><<<blocks_for(J * rest), kThreads>>>(
      w, rest, J, of.strides[axis], x.strides()[axis], pos, device_ptr<T>(out), device_ptr<T>(x));
  STRATA_CUDA_LAUNCHED();
}

template <class T>
void add_t(Backend& be, const RawTensor& out, int64_t axis, const RawTensor& idx,
           const RawTensor& src) {
  const int64_t J = idx.numel();
  const Layout sf = fold_index_dims(src, axis, idx.ndim(), J);
  const Layout out_rest = drop_axis(out.layout(), axis);
  Walk<2> w;
  // out and src are contiguous: their rests always fit a kernel.
  if (!rest_walk(out_rest, drop_axis(sf, axis), w)) {
    fail<ValueError>("index_add", "internal: rest of shape ", out_rest.shape, " does not merge");
  }
  const int64_t rest = out_rest.numel();
  if (rest == 0) return;
  const SortedRows s = sort_rows(be, idx, out.shape()[axis]);
  add_kernel<T><<<blocks_for(J * rest), kThreads>>>(
      w, rest, J, device_ptr<uint64_t>(s.rows), device_ptr<int64_t>(s.order), out.strides()[axis],
      sf.strides[axis], device_ptr<T>(out), device_ptr<T>(src));
  STRATA_CUDA_LAUNCHED();
}

}  // namespace

void CudaBackend::index_select(const RawTensor& out, const RawTensor& x, int64_t axis,
                               const RawTensor& idx) {
  DeviceGuard guard(index_);
  visit_dtype(x.dtype(), "index_select",
              [&]<class T>(type_tag<T>) { select_t<T>(*this, out, x, axis, idx); });
}

void CudaBackend::index_add(const RawTensor& out, int64_t axis, const RawTensor& idx,
                            const RawTensor& src) {
  DeviceGuard guard(index_);
  visit_dtype(out.dtype(), "index_add", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) add_t<T>(*this, out, axis, idx, src);
  });
}

}  // namespace strata::detail
