// SPDX-License-Identifier: MIT
// The protocol of a primitive with several outputs (docs/adding_a_primitive.md): one rule
// object whose primal returns an array, consumed by every level's apply_multi. A test-only
// rule, sin and cos of x in one primitive, is checked against st::sin and st::cos, to third
// order in every mode, under vmap, and for the NaN-safety of an unused output.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;

namespace {

// (sin x, cos x) as one primitive. `poison` makes the cosine's pullback throw, to show that
// an output without a cotangent never runs its pullbacks.
struct SinCos {
  static constexpr std::size_t outputs = 2;
  static constexpr bool linear = false;
  bool poison = false;

  std::string_view name() const { return "sincos"; }
  template <st::Diffable T>
  std::array<T, 2> operator()(const T& x) const {
    return {st::sin(x), st::cos(x)};
  }
  template <st::Diffable T>
  std::array<T, 2> jvp(int, const T&, const std::array<T, 2>& ys, const T& t) const {
    return {t * ys[1], -(t * ys[0])};
  }
  template <st::Diffable T>
  st::rules::Pullback<T> pullback(int, int output, const T&, const std::array<T, 2>& ys) const {
    if (output == 0) return {[c = ys[1]](const T& ct) { return ct * c; }, {}};
    if (poison) return {[](const T&) -> T { throw std::logic_error("cosine pullback ran"); }, {}};
    return {[s = ys[0]](const T& ct) { return -(ct * s); }, {}};
  }
  template <st::Diffable T>
  std::array<st::Batched<T>, 2> batch(const st::Batched<T>& x) const {
    return {st::Batched<T>(st::sin(x.value()), x.batched()),
            st::Batched<T>(st::cos(x.value()), x.batched())};
  }
};

// The largest |a - b| over the elements (equal shapes required).
double max_diff(const st::Tensor& a, const st::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> u = a.to_vector<double>(), v = b.to_vector<double>();
  double worst = 0;
  for (std::size_t i = 0; i < u.size(); ++i) worst = std::max(worst, std::abs(u[i] - v[i]));
  return worst;
}

template <class L>
std::array<L, 2> sincos(const L& x, bool poison = false) {
  if constexpr (std::is_same_v<L, st::Tensor>) {
    return SinCos{poison}(x);
  } else {
    return st::Prims<L>::apply_multi(SinCos{poison}, x);
  }
}

}  // namespace

TEST_CASE("a primitive with several outputs: derivatives to third order", "[ad][multi_output]") {
  const st::Tensor x = st::randn({5}, 7, st::f64);
  auto f = [](const auto& v) {
    const auto [s, c] = sincos(v);
    return s * c * c + s;
  };
  auto reference = [](const auto& v) { return st::sin(v) * st::cos(v) * st::cos(v) + st::sin(v); };
  CHECK(max_diff(f(x), reference(x)) == 0);
  check_grads<3>(f, {x});
  CHECK(max_diff(st::jacrev(f, x), st::jacrev(reference, x)) < 1e-14);
  CHECK(max_diff(st::jacfwd(f, x), st::jacfwd(reference, x)) < 1e-14);
  CHECK(max_diff(st::hessian([&](const auto& v) { return st::sum(f(v)); }, x),
                 st::hessian([&](const auto& v) { return st::sum(reference(v)); }, x)) < 1e-14);
}

TEST_CASE("a primitive with several outputs: vmap against a loop", "[ad][multi_output]") {
  const st::Tensor xs = st::randn({4, 3}, 8, st::f64);
  auto f = [](const auto& v) {
    const auto [s, c] = sincos(v);
    return st::sum(s * c);
  };
  const st::Tensor mapped = st::vmap(st::grad(f))(xs);
  for (int64_t i = 0; i < 4; ++i) {
    CHECK(max_diff(mapped.ix(i), st::grad(f, st::Tensor(xs.ix(i)))) < 1e-15);
  }
}

TEST_CASE("an output without a cotangent runs no pullback", "[ad][multi_output]") {
  const st::Tensor x = st::randn({3}, 9, st::f64);
  auto only_sine = [](const auto& v) { return st::sum(sincos(v, /*poison=*/true)[0]); };
  CHECK(max_diff(st::grad(only_sine, x), st::cos(x)) == 0);
  auto both = [](const auto& v) {
    const auto [s, c] = sincos(v, /*poison=*/true);
    return st::sum(s + c);
  };
  CHECK_THROWS_WITH(st::grad(both, x), "cosine pullback ran");
}
