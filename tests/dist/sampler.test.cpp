// SPDX-License-Identifier: MIT
// st::dist::ShardedBatches (dist/sampler.hpp): the ranks' parts of each step, put back
// together, are st::nn::BatchIterator's batch for the same data and seed.
#include <catch2/catch.hpp>
#include <dist/dist.hpp>
#include <strata.hpp>

namespace st = strata;

TEST_CASE("ShardedBatches: the parts make up BatchIterator's batches", "[dist][sampler]") {
  const int world = st::dist::world_size();
  const st::Tensor x = st::arange(0, 2 * 37).reshape({37, 2}).to(st::f64);
  const st::Tensor y = st::arange(100, 137);
  for (bool shuffle : {true, false}) {
    for (bool drop_last : {true, false}) {
      // 10 rows per global batch: parts of 5 (2 ranks), 3, 3, 2, 2 (4 ranks).
      st::dist::ShardedBatches mine(x, y, 10, /*seed=*/4, shuffle, drop_last);
      st::nn::BatchIterator global(x, y, 10, 4, shuffle, drop_last);
      REQUIRE(mine.num_batches() == global.num_batches());
      for (int epoch = 0; epoch < 2; ++epoch) {
        while (auto g = global.next()) {
          auto part = mine.next();
          REQUIRE(part);
          const int64_t n = g->x.shape()[0];
          const auto [first, last] = st::dist::ShardedBatches::part(n, st::dist::rank(), world);
          REQUIRE(part->x.shape()[0] == last - first);
          REQUIRE(part->x.to_vector<double>() ==
                  g->x.ix(st::slice(first, last)).to_vector<double>());
          REQUIRE(part->y.to_vector<int64_t>() ==
                  g->y.ix(st::slice(first, last)).to_vector<int64_t>());
        }
        REQUIRE_FALSE(mine.next());
        REQUIRE(mine.epoch() == epoch + 1);
      }
    }
  }
}

TEST_CASE("ShardedBatches: parts as numpy.array_split", "[dist][sampler]") {
  using P = std::pair<int64_t, int64_t>;
  REQUIRE(st::dist::ShardedBatches::part(10, 0, 4) == P{0, 3});
  REQUIRE(st::dist::ShardedBatches::part(10, 1, 4) == P{3, 6});
  REQUIRE(st::dist::ShardedBatches::part(10, 2, 4) == P{6, 8});
  REQUIRE(st::dist::ShardedBatches::part(10, 3, 4) == P{8, 10});
  REQUIRE(st::dist::ShardedBatches::part(2, 3, 4) == P{2, 2});
  const st::Tensor x = st::zeros({4, 1});
  REQUIRE_THROWS_AS(st::dist::ShardedBatches(x, st::zeros({3}), 2, 0), st::ShapeError);
  REQUIRE_THROWS_AS(st::dist::ShardedBatches(x, st::zeros({4}), 0, 0), st::ValueError);
  REQUIRE_THROWS_AS(st::dist::ShardedBatches(x, st::zeros({4}), 2, 0, true, false, 2, 2),
                    st::ValueError);
}
