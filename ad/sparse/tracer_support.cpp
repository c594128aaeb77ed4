// SPDX-License-Identifier: MIT
// What the sparsity tracer's primitives share (ad/sparse/tracer_support.hpp): the checks that
// mirror the raw primitives' own, the positions by which the movement ops learn where each
// element goes, and the error for reading a traced value.
#include "ad/sparse/tracer_support.hpp"

namespace strata {

using detail::fail;
using S = SparsityTracer;

namespace detail {

void tracer_has_no_values(std::string_view what) {
  fail<ValueError>("sparsity tracer", what,
                   " needs the value of a tensor computed from the traced input, but the sparsity "
                   "tracer carries no values (st::jacobian_sparsity and st::hessian_sparsity run f "
                   "once for every input value at once), so control flow that depends on values "
                   "cannot be traced: select between both branches with st::where(cond, a, b)");
}

namespace sparsity {

void require_where_operands(DType cond_dtype, const Shape& cond_shape, const S& a, const S& b) {
  require_same_device(a, b, "where");
  if (cond_dtype != DType::b8) {
    fail<DTypeError>("where", "condition has dtype ", dtype_name(cond_dtype), ", needs bool");
  }
  if (cond_shape != a.shape() || a.shape() != b.shape()) {
    fail<ShapeError>("where", "shapes ", cond_shape, ", ", a.shape(), " and ", b.shape(),
                     " differ (the primitive does not broadcast)");
  }
  require_same_dtype(a, b, "where");
}

Tensor positions(const Shape& shape, int64_t offset) {
  const int64_t n = checked_numel(shape, "sparsity tracer");
  return reshape(arange(double(offset), double(offset + n), 1, DType::i64, Device::cpu()), shape);
}

std::vector<int64_t> host_positions(const Tensor& t) { return t.to_vector<int64_t>(); }

S moved(const S& x, const Shape& shape, const std::vector<int64_t>& from) {
  return S(shape, x.dtype(), x.device(), gather(x.deps(), from), gather(x.pairs(), from),
           x.second_order());
}

std::vector<int64_t> matrix_of_each(int64_t batch, int64_t rows, int64_t cols) {
  std::vector<int64_t> m(static_cast<std::size_t>(batch * rows * cols));
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = int64_t(i) / (rows * cols);
  return m;
}

}  // namespace sparsity
}  // namespace detail
}  // namespace strata
