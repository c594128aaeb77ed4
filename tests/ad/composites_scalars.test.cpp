// SPDX-License-Identifier: MIT
// Derivative tests for arithmetic mixing traced values with C++ scalars
// (diff/arithmetic.hpp): check_grads against central finite differences in f64, forward and reverse
// mode, up to order 3.
#include "support/composites_preamble.hpp"

TEST_CASE("composite derivatives: C++ scalars on either side of arithmetic", "[ad]") {
  const st::Tensor x = nonzero({2, 3}, 106);
  check_grads<3>([](const auto& x) { return st::sin(x + 1.5) * (2.5 + x); }, {x});
  check_grads<3>([](const auto& x) { return st::sin(x - 1.5) * (0.5 - x); }, {x});
  check_grads<3>([](const auto& x) { return st::sin(x * 2.0) * (3.0 * x); }, {x});
  check_grads<3>([](const auto& x) { return (x / 4.0) * (3.0 / x); }, {x});
  check_grads<3>([](const auto& x) { return 3.0 / x; }, {x});
  check_grads<3>([](const auto& x) { return st::sin(x * 2) + 3 * x - 1; }, {x});  // int scalars
  check_grads<3>([](const auto& x) { return st::pow(x, 2.5); }, {positive({2, 3}, 107)});
  check_grads<3>([](const auto& x) { return st::pow(2.0, x); }, {x});
  check_grads<3>([](const auto& x) { return st::pow(x, 3); }, {x});
  check_grads<2>([](const auto& x) { return st::sin(st::maximum(x, 0.1) + st::minimum(0.2, x)); },
                 {x});
}
