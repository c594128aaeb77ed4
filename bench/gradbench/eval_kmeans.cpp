// SPDX-License-Identifier: MIT
// GradBench's `kmeans`: the cost sum_i min_j |C_j - P_i|^2 and a Newton direction for the
// centroids C. The Hessian is diagonal, so the direction is the gradient divided by the
// Hessian's diagonal, which is H 1: one forward-over-reverse product (st::jvp of st::grad
// along a vector of ones) gives the gradient and H 1 together, as JAX's tool does.
#include <memory>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

/// The cost of centroids c [k, d] for points p [n, d]: squared distances by one matmul.
template <class T>
T cost(const st::Tensor& p, const T& c) {
  const st::Tensor p2 = st::sum(p * p, 1, true);  // [n, 1]
  const T d2 = p2 + st::sum(c * c, 1).unsqueeze(0) - 2.0 * st::matmul(p, c.transpose(0, 1));
  return st::sum(st::min(d2, 1));
}

}  // namespace

void register_kmeans(Registry& r) {
  // Both functions under st::jit, traced while preparing (timed as "prepare", as a JAX tool's
  // compilation): the [n, k] distance table's elementwise ops, the minimum's derivative and
  // their tangents run as fused passes.
  r["kmeans"]["cost"] = [](const Json& input) {
    auto p = std::make_shared<st::Tensor>(mat(input.at("points")));
    auto c = std::make_shared<st::Tensor>(mat(input.at("centroids")));
    auto out = std::make_shared<st::Tensor>();
    auto f = st::jit([](const st::Tensor& p, const st::Tensor& c) { return cost(p, c); });
    warm(f, *p, *c);
    return Prepared{[=] { *out = f(*p, *c); }, [=] { return Json(number(*out)); }};
  };
  r["kmeans"]["dir"] = [](const Json& input) {
    auto p = std::make_shared<st::Tensor>(mat(input.at("points")));
    auto c = std::make_shared<st::Tensor>(mat(input.at("centroids")));
    auto out = std::make_shared<st::Tensor>();
    auto f = st::jit([](const st::Tensor& p, const st::Tensor& c) {
      auto gradient = st::grad([&](const auto& c) { return cost(p, c); });
      auto [g, h] = st::jvp(gradient, c, st::constant_like(c, 1.0));
      return g / h;
    });
    warm(f, *p, *c);
    return Prepared{[=] { *out = f(*p, *c); }, [=] { return to_json(*out); }};
  };
}

}  // namespace gradbench
