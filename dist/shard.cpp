// SPDX-License-Identifier: MIT
// The untemplated parts of st::dist::vmap and st::dist::jacrev (dist/shard.hpp).
#include "dist/shard.hpp"

#include <algorithm>
#include <vector>

#include "raw/ops.hpp"

namespace strata::dist::detail {

namespace {
// k positions from `first`, each at most n - 1.
RawTensor clamped_positions(int64_t first, int64_t k, int64_t n, Device device) {
  std::vector<int64_t> idx(static_cast<std::size_t>(k));
  for (int64_t i = 0; i < k; ++i) idx[std::size_t(i)] = std::min(first + i, n - 1);
  return raw::from_host(idx.data(), {k}, DType::i64, device);
}
}  // namespace

int64_t normal_axis(std::string_view which, int64_t axis, const std::string& where,
                    const Shape& shape) {
  const int64_t r = shape.ndim();
  if (axis < -r || axis >= r) strata::detail::vmap_axis_range(which, axis, where, shape, r);
  return axis < 0 ? axis + r : axis;
}

Tensor shard_examples(const Tensor& x, int64_t axis, int64_t first, int64_t k, int64_t n) {
  return Tensor(raw::index_select(x.raw(), axis, clamped_positions(first, k, n, x.device())));
}

Tensor gather_examples(const Tensor& y, int64_t axis, int64_t n) {
  const int64_t r = y.ndim();
  const RawTensor front =
      axis == 0 ? y.raw() : y.raw().permute(strata::detail::move_axis(r, axis, 0));
  const RawTensor all = all_gather(Tensor(front)).raw();  // [world, k, rest...]
  Shape shape = front.shape();
  shape[0] *= all.shape()[0];
  const RawTensor kept = raw::reshape(all, shape).slice(0, 0, n);
  return Tensor(axis == 0 ? kept : kept.permute(strata::detail::move_axis(r, 0, axis)));
}

Tensor identity_rows(int64_t first, int64_t k, int64_t m, const Shape& shape, DType dtype,
                     Device device) {
  const Tensor rows = Tensor(clamped_positions(first, k, m, device)).reshape({k, 1});
  const Tensor cols = arange(0, double(m), 1, i64, device).reshape({1, m});
  Shape out{k};
  for (int64_t d : shape) out.push_back(d);
  return cast(eq(rows, cols), dtype).reshape(out);
}

}  // namespace strata::dist::detail
