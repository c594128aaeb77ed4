// SPDX-License-Identifier: MIT
// The sparsity tracer's movement and index primitives (ad/sparse/tracer.hpp has the table of
// what each propagates): each applies the raw primitive to the elements' positions, which
// checks its arguments as on a Tensor and says which input element each output element holds.
#include <algorithm>
#include <optional>

#include "ad/sparse/tracer_support.hpp"

namespace strata {

using detail::fail;
using detail::gather;
using detail::Sets;
using detail::unite;
using detail::sparsity::host_positions;
using detail::sparsity::moved;
using detail::sparsity::positions;
using detail::sparsity::require_same_device;
using detail::sparsity::require_same_dtype;
using S = SparsityTracer;
using T = Prims<Tensor>;

S Prims<S>::permute(const S& x, const Shape& dims) {
  if (x.known()) return S(T::permute(x.value(), dims));
  const Tensor from = T::permute(positions(x.shape()), dims);
  return moved(x, from.shape(), host_positions(from));
}

S Prims<S>::expand(const S& x, const Shape& shape) {
  if (x.known()) return S(T::expand(x.value(), shape));
  const Tensor from = T::expand(positions(x.shape()), shape);
  return moved(x, from.shape(), host_positions(from));
}

S Prims<S>::reshape(const S& x, const Shape& shape) {
  if (x.known()) return S(T::reshape(x.value(), shape));
  // Row-major order is kept: only the shape changes (checked, -1 inferred, by the positions).
  const Shape out = T::reshape(positions(x.shape()), shape).shape();
  return S(out, x.dtype(), x.device(), x.deps(), x.pairs(), x.second_order());
}

S Prims<S>::slice(const S& x, int64_t axis, std::optional<int64_t> start,
                  std::optional<int64_t> stop, int64_t step) {
  if (x.known()) return S(T::slice(x.value(), axis, start, stop, step));
  const Tensor from = T::slice(positions(x.shape()), axis, start, stop, step);
  return moved(x, from.shape(), host_positions(from));
}

S Prims<S>::pad(const S& x, const Pads& pads) {
  if (x.known()) return S(T::pad(x.value(), pads));
  // Positions from 1, so that the padding's zeros read as -1: no dependence.
  const Tensor from = T::pad(positions(x.shape(), 1), pads);
  std::vector<int64_t> f = host_positions(from);
  for (int64_t& i : f) --i;
  return moved(x, from.shape(), f);
}

S Prims<S>::concat(const std::vector<S>& xs, int64_t axis) {
  if (xs.empty()) fail<ValueError>("concat", "needs at least one tensor");
  if (std::all_of(xs.begin(), xs.end(), [](const S& x) { return x.known(); })) {
    std::vector<Tensor> values;
    for (const S& x : xs) values.push_back(x.value());
    return S(T::concat(values, axis));
  }
  std::vector<Tensor> ids;
  std::vector<int64_t> offsets{0};
  bool second = false;
  for (const S& x : xs) {
    require_same_device(xs[0], x, "concat");
    require_same_dtype(xs[0], x, "concat");
    ids.push_back(positions(x.shape(), offsets.back()));
    offsets.push_back(offsets.back() + x.numel());
    second = second || x.second_order();
  }
  const Tensor out = T::concat(ids, axis);
  const std::vector<int64_t> all = host_positions(out);
  std::vector<Sets> deps, pairs;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].deps() && !xs[k].pairs()) continue;
    std::vector<int64_t> from(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      const bool mine = all[i] >= offsets[k] && all[i] < offsets[k + 1];
      from[i] = mine ? all[i] - offsets[k] : -1;
    }
    deps.push_back(gather(xs[k].deps(), from));
    pairs.push_back(gather(xs[k].pairs(), from));
  }
  return S(out.shape(), xs[0].dtype(), xs[0].device(), detail::unite(deps), detail::unite(pairs),
           second);
}

S Prims<S>::cast(const S& x, DType dtype) {
  if (x.known()) return S(T::cast(x.value(), dtype));
  // Sets survive a cast between float dtypes; the constructor drops them for another.
  return S(x.shape(), dtype, x.device(), x.deps(), x.pairs(), x.second_order());
}

S Prims<S>::index_select(const S& x, int64_t axis, const Tensor& idx) {
  if (x.known()) return S(T::index_select(x.value(), axis, idx));
  if (idx.defined() && idx.device() != x.device()) {
    fail<DeviceError>("index_select", "tensors are on different devices (", to_string(x.device()),
                      " and ", to_string(idx.device()), "); move one with .to(device)");
  }
  const Tensor from = T::index_select(positions(x.shape()), axis, idx.to(Device::cpu()));
  return moved(x, from.shape(), host_positions(from));
}

S Prims<S>::index_add(const S& x, int64_t axis, const Tensor& idx, const S& src) {
  if (x.known() && src.known()) return S(T::index_add(x.value(), axis, idx, src.value()));
  require_same_device(x, src, "index_add");
  require_same_dtype(x, src, "index_add");
  const Tensor i = idx.to(Device::cpu());
  // The raw op on positions checks the axis, the index and src's shape as on a Tensor.
  (void)T::index_add(zeros(x.shape(), DType::i64, Device::cpu()), axis, i,
                     zeros(src.shape(), DType::i64, Device::cpu()));
  const std::vector<int64_t> dest = host_positions(T::index_select(positions(x.shape()), axis, i));
  const int64_t n = x.numel();
  return S(x.shape(), x.dtype(), x.device(), unite(x.deps(), detail::reduce(src.deps(), dest, n)),
           unite(x.pairs(), detail::reduce(src.pairs(), dest, n)),
           x.second_order() || src.second_order());
}

}  // namespace strata
