// SPDX-License-Identifier: MIT
// st::Key (core/key.hpp), st::bernoulli and st::dropout (diff/dropout.hpp): keys derived by
// their Philox definition, reproducible and independent masks, the drop rate and the inverted
// scaling, the same bits for any thread count, derivatives (finite differences, order 3), vmap,
// and the errors of bad p.
#include <catch2/catch.hpp>
#include <set>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"
#include "support/message_of.hpp"

namespace st = strata;
using Catch::Matchers::Contains;
using st::testing::message_of;
using st::testing::normal;

namespace {
double fraction_true(const st::Tensor& mask) {
  double n = 0;
  for (bool b : mask.to_vector<bool>()) n += b;
  return n / double(mask.numel());
}
}  // namespace

TEST_CASE("Key: split and fold_in follow their Philox definition", "[ad][random]") {
  const st::Key key(0x0123456789abcdefULL);
  const std::vector<st::Key> ks = st::split(key, 3);
  REQUIRE(ks.size() == 3);
  for (uint32_t i = 0; i < 3; ++i) {
    // Key i of split is Philox of the counter (i, 0, 1, 0) under the key: words 0 and 1.
    const auto w = st::detail::philox4x32({i, 0u, 1u, 0u}, {0x89abcdefu, 0x01234567u});
    CHECK(ks[i].bits() == ((uint64_t{w[1]} << 32) | w[0]));
  }
  const auto w = st::detail::philox4x32({7u, 0u, 2u, 0u}, {0x89abcdefu, 0x01234567u});
  CHECK(st::fold_in(key, 7).bits() == ((uint64_t{w[1]} << 32) | w[0]));
  // Deterministic, prefix-stable, and every derived key distinct.
  CHECK(st::split(key, 2)[1] == ks[1]);
  CHECK(st::split2(key).first == ks[0]);
  CHECK(st::split2(key).second == ks[1]);
  std::set<uint64_t> seen{key.bits()};
  for (st::Key k : st::split(key, 100)) seen.insert(k.bits());
  for (uint64_t d = 0; d < 100; ++d) seen.insert(st::fold_in(key, d).bits());
  CHECK(seen.size() == 201);
  CHECK(st::split(key, 0).empty());
  CHECK_THAT(message_of<st::ValueError>([&] { st::split(key, -1); }), Contains("split: n = -1"));
}

TEST_CASE("bernoulli and dropout: rates, reproducibility, independence", "[ad][random]") {
  const st::Key key(42);
  const st::Shape shape{200, 500};
  const st::Tensor m = st::bernoulli(key, 0.3, shape);
  CHECK(m.dtype() == st::bool_);
  CHECK(fraction_true(m) == Approx(0.3).margin(0.01));  // 100000 draws: std 0.0015
  CHECK(st::bernoulli(key, 0.3, shape).to_vector<bool>() == m.to_vector<bool>());
  CHECK(fraction_true(st::bernoulli(key, 0.0, shape)) == 0.0);
  CHECK(fraction_true(st::bernoulli(key, 1.0, shape)) == 1.0);
  // Masks from split keys are independent: both true at about p^2 of the places.
  const auto [k1, k2] = st::split2(key);
  const st::Tensor a = st::bernoulli(k1, 0.5, shape), b = st::bernoulli(k2, 0.5, shape);
  CHECK(fraction_true(st::logical_and(a, b)) == Approx(0.25).margin(0.01));
  CHECK(fraction_true(st::logical_and(a, m)) == Approx(0.15).margin(0.01));

  const st::Tensor x = normal(shape, 601);
  const st::Tensor y = st::dropout(x, 0.3, key);
  // Zero exactly where bernoulli(key, p) is true, x times 1 / (1 - p) (rounded once, as torch)
  // elsewhere; the mean is preserved.
  const st::Tensor want = st::where(m, 0.0, x * (1.0 / 0.7));
  CHECK(y.to_vector<double>() == want.to_vector<double>());
  CHECK(st::mean(st::dropout(st::ones(shape, st::f64), 0.3, key)).item<double>() ==
        Approx(1.0).margin(0.03));
  CHECK(st::dropout(x, 0.0, key).to_vector<double>() == x.to_vector<double>());
  CHECK(st::dropout(x, 0.3, k1).to_vector<double>() != y.to_vector<double>());
  // f32 keeps its dtype and the same mask; integer input gives f32.
  const st::Tensor y32 = st::dropout(x.to(st::f32), 0.3, key);
  CHECK(y32.dtype() == st::f32);
  CHECK((y32 == 0.0f).to_vector<bool>() == m.to_vector<bool>());
  CHECK(st::dropout(st::ones({3}, st::i64), 0.5, key).dtype() == st::f32);
  // A non-contiguous input gets the mask of its logical positions.
  const st::Tensor xt = st::from_vector(x.to_vector<double>(), {200, 500}).transpose(0, 1);
  CHECK(st::dropout(xt, 0.3, key).to_vector<double>() ==
        st::where(st::bernoulli(key, 0.3, {500, 200}), 0.0, xt * (1.0 / 0.7)).to_vector<double>());
}

TEST_CASE("dropout gives the same bits for any thread count", "[ad][random][threads]") {
  const st::Tensor x = normal({300, 700}, 602);  // 210000 elements: split over the pool
  const int before = st::num_threads();
  st::set_num_threads(1);
  const std::vector<double> one = st::dropout(x, 0.2, st::Key(7)).to_vector<double>();
  for (int n : {2, 3, 4}) {
    st::set_num_threads(n);
    CHECK(st::dropout(x, 0.2, st::Key(7)).to_vector<double>() == one);
  }
  st::set_num_threads(before);
}

TEST_CASE("dropout: derivatives, vmap, errors", "[ad][random]") {
  const st::Tensor x = normal({3, 4}, 603);
  const st::Key key(9);
  st::testing::check_grads<3>(
      [&](const auto& x) { return st::tanh(st::dropout(st::sin(x), 0.4, key)); }, {x});
  // The gradient is the mask times 1 / (1 - p).
  const st::Tensor g =
      st::grad([&](const auto& x) { return st::sum(st::dropout(x, 0.4, key)); }, x);
  CHECK(g.to_vector<double>() ==
        st::where(st::bernoulli(key, 0.4, {3, 4}), 0.0, st::ones({3, 4}, st::f64) / 0.6)
            .to_vector<double>());
  // Under vmap each example gets the mask of the example shape (the key is not mapped).
  const st::Tensor xs = normal({5, 3, 4}, 604);
  const st::Tensor mapped = st::vmap([&](const auto& x) { return st::dropout(x, 0.4, key); })(xs);
  for (int64_t i = 0; i < 5; ++i) {
    CHECK(st::Tensor(mapped.ix(i)).to_vector<double>() ==
          st::dropout(st::Tensor(xs.ix(i)), 0.4, key).to_vector<double>());
  }
  CHECK_THAT(message_of<st::ValueError>([&] { st::dropout(x, 1.0, key); }),
             Contains("dropout: p = 1 must be in [0, 1)"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::dropout(x, -0.1, key); }),
             Contains("dropout: p = -0.1"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::dropout(x, NAN, key); }), Contains("p = nan"));
  CHECK_THAT(message_of<st::ValueError>([&] { st::bernoulli(key, 1.5, {2}); }),
             Contains("bernoulli: p = 1.5 is not a probability in [0, 1]"));
}
