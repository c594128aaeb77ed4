// SPDX-License-Identifier: MIT
#include "diff/normalization.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace strata::detail {

namespace {
void check_eps(double eps, std::string_view op) {
  if (!std::isfinite(eps) || eps < 0) {
    fail<ValueError>(op, "eps = ", eps, " must be finite and >= 0 (the default is 1e-5)");
  }
}
/// "2, 4, 8" for the divisors of c (at most a dozen), to suggest a group count.
std::string divisors(int64_t c) {
  std::string out;
  int shown = 0;
  for (int64_t d = 1; d <= c && shown < 12; ++d) {
    if (c % d == 0) {
      out += (shown++ ? ", " : "") + std::to_string(d);
    }
  }
  return out;
}
}  // namespace

Shape normalized_axes(const Shape& x, const Shape& normalized_shape, double eps,
                      std::string_view op) {
  const int64_t k = normalized_shape.ndim(), r = x.ndim();
  if (k == 0) {
    fail<ShapeError>(op,
                     "normalized_shape is empty; pass the trailing dims to normalise over, "
                     "e.g. [",
                     r > 0 ? x[std::size_t(r - 1)] : 1, "] for the last axis");
  }
  bool ends = k <= r;
  for (int64_t i = 0; ends && i < k; ++i) {
    ends = x[std::size_t(r - k + i)] == normalized_shape[std::size_t(i)];
  }
  if (!ends) {
    fail<ShapeError>(op, "input of shape ", x, " does not end with normalized_shape ",
                     normalized_shape, " (normalized_shape must be the input's last dims, e.g. [",
                     r > 0 ? x[std::size_t(r - 1)] : 1, "] to normalise over the last axis)");
  }
  check_eps(eps, op);
  Shape axes;
  for (int64_t i = r - k; i < r; ++i) axes.push_back(i);
  return axes;
}

void check_param(const Shape& got, const Shape& want, std::string_view what, std::string_view op) {
  if (got != want) {
    fail<ShapeError>(op, what, " has shape ", got, ", need ", want,
                     " (one value per normalised feature or channel)");
  }
}

void check_group_norm(const Shape& x, int64_t groups, double eps) {
  constexpr std::string_view op = "group_norm";
  if (x.ndim() < 2) {
    fail<ShapeError>(op, "input of shape ", x,
                     " needs rank >= 2, [N, C, *] (add a batch axis "
                     "with unsqueeze(x, 0))");
  }
  if (groups <= 0) fail<ValueError>(op, "groups = ", groups, " must be positive");
  const int64_t c = x[1];
  if (c % groups != 0) {
    fail<ShapeError>(op, "the ", c, " channels of input of shape ", x,
                     " do not divide into groups = ", groups, " (choose one of ", divisors(c), ")");
  }
  check_eps(eps, op);
}

int64_t check_batch_norm(const Shape& x, const Shape& mean, const Shape& var, bool training,
                         double momentum, double eps) {
  constexpr std::string_view op = "batch_norm";
  if (x.ndim() < 2) {
    fail<ShapeError>(op, "input of shape ", x,
                     " needs rank >= 2, [N, C, *] (add a batch axis "
                     "with unsqueeze(x, 0))");
  }
  const Shape c{x[1]};
  if (mean != c)
    fail<ShapeError>(op, "running_mean has shape ", mean, ", need ", c, " (input ", x, ")");
  if (var != c)
    fail<ShapeError>(op, "running_var has shape ", var, ", need ", c, " (input ", x, ")");
  int64_t n = 1;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (i != 1) n *= x[std::size_t(i)];
  }
  if (training && n <= 1) {
    fail<ValueError>(op, "training needs more than 1 value per channel, input of shape ", x,
                     " has ", n, " (use a larger batch, or training = false)");
  }
  if (!std::isfinite(momentum)) fail<ValueError>(op, "momentum = ", momentum, " is not finite");
  check_eps(eps, op);
  return x[1];
}

}  // namespace strata::detail
