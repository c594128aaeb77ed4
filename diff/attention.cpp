// SPDX-License-Identifier: MIT
#include "diff/attention.hpp"

#include <cmath>

#include "core/error.hpp"

namespace strata::detail {

namespace {
Shape batch_of(const Shape& s) {
  Shape b;
  for (int64_t i = 0; i + 2 < s.ndim(); ++i) b.push_back(s[std::size_t(i)]);
  return b;
}
}  // namespace

Shape attention_scores_shape(std::string_view op, const Shape& q, const Shape& k, const Shape& v) {
  for (const Shape* s : {&q, &k, &v}) {
    if (s->ndim() < 2) {
      fail<ShapeError>(op, "q, k and v need rank >= 2 ([..., T, d]), got shapes ", q, ", ", k, ", ",
                       v);
    }
  }
  Shape out;
  try {
    out = broadcast_shapes(broadcast_shapes(batch_of(q), batch_of(k), op), batch_of(v), op);
  } catch (const ShapeError&) {
    fail<ShapeError>(op, "the batch dims of q ", q, ", k ", k, " and v ", v,
                     " do not broadcast together");
  }
  out.push_back(q[std::size_t(q.ndim() - 2)]);
  out.push_back(k[std::size_t(k.ndim() - 2)]);
  return out;
}

double check_attention(std::string_view op, const Shape& q, const Shape& k, const Shape& v,
                       const Tensor& mask, std::optional<double> scale) {
  const Shape scores = attention_scores_shape(op, q, k, v);
  const int64_t e = q[std::size_t(q.ndim() - 1)];
  if (k[std::size_t(k.ndim() - 1)] != e) {
    fail<ShapeError>(op, "q ", q, " and k ", k, " must have the same last dim (the query/key ",
                     "width E: q [..., L, E], k [..., S, E])");
  }
  if (k[std::size_t(k.ndim() - 2)] != v[std::size_t(v.ndim() - 2)]) {
    fail<ShapeError>(op, "k ", k, " and v ", v, " must have the same number of keys S ",
                     "(k [..., S, E], v [..., S, Ev])");
  }
  if (mask.defined()) {
    if (mask.dtype() != bool_ && !is_floating(mask.dtype())) {
      fail<DTypeError>(op, "mask has dtype ", dtype_name(mask.dtype()),
                       "; need bool (true: attend) or a float mask added to the scores");
    }
    bool fits = mask.shape().ndim() <= scores.ndim();
    for (int64_t i = 1; fits && i <= mask.shape().ndim(); ++i) {
      const int64_t m = mask.shape()[std::size_t(mask.shape().ndim() - i)];
      fits = m == 1 || m == scores[std::size_t(scores.ndim() - i)];
    }
    if (!fits) {
      fail<ShapeError>(op, "mask of shape ", mask.shape(), " does not broadcast to the scores' ",
                       "shape ", scores, " ([..., L, S])");
    }
  }
  if (scale && !std::isfinite(*scale)) fail<ValueError>(op, "scale = ", *scale, " is not finite");
  return scale ? *scale : 1.0 / std::sqrt(double(e == 0 ? 1 : e));
}

}  // namespace strata::detail
