// SPDX-License-Identifier: MIT
// GradBench's `hello` (x^2 and its derivative) and `lse` (LogSumExp and its gradient,
// written from its primitive elements, max and sum, as the eval asks).
#include "bench/gradbench/tool.hpp"

namespace gradbench {

void register_hello(Registry& r) {
  auto square = [](const auto& x) { return x * x; };
  r["hello"]["square"] = [square](const Json& input) {
    auto x = std::make_shared<st::Tensor>(st::full({}, input.get<double>(), st::f64));
    auto y = std::make_shared<st::Tensor>();
    return Prepared{[=] { *y = square(*x); }, [y] { return Json(number(*y)); }};
  };
  r["hello"]["double"] = [square](const Json& input) {
    auto x = std::make_shared<st::Tensor>(st::full({}, input.get<double>(), st::f64));
    auto y = std::make_shared<st::Tensor>();
    return Prepared{[=] { *y = st::grad(square, *x); }, [y] { return Json(number(*y)); }};
  };
}

void register_lse(Registry& r) {
  // The LogSumExp trick: a = max(x), lse = a + log(sum(exp(x - a))).
  auto lse = [](const auto& x) {
    const auto a = st::max(x);
    return a + st::log(st::sum(st::exp(x - a)));
  };
  r["lse"]["primal"] = [lse](const Json& input) {
    auto x = std::make_shared<st::Tensor>(vec(input.at("x")));
    auto y = std::make_shared<st::Tensor>();
    return Prepared{[=] { *y = lse(*x); }, [y] { return Json(number(*y)); }};
  };
  r["lse"]["gradient"] = [lse](const Json& input) {
    auto x = std::make_shared<st::Tensor>(vec(input.at("x")));
    auto g = std::make_shared<st::Tensor>();
    return Prepared{[=] { *g = st::grad(lse, *x); }, [g] { return to_json(*g); }};
  };
}

}  // namespace gradbench
