// SPDX-License-Identifier: MIT
// The collectives (dist/process_group.hpp) against a one-process reference: every rank
// builds every rank's input from (rank, seed) itself and combines them with strata's own
// ops, for every dtype and several shapes, empty and non-contiguous ones included.
#include <catch2/catch.hpp>
#include <dist/dist.hpp>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/device.hpp"

namespace st = strata;
using st::dist::Reduction;

namespace {

const std::vector<st::DType> kDTypes{st::bool_, st::i32, st::i64, st::f32, st::f64};

// Rank r's input: normal values (f32/f64), multiples of ten truncated (ints), their signs
// (bool), from a seed that depends on r and the case. Not contiguous: a transposed view
// (rank >= 2) or every second element (rank 1).
st::Tensor input(st::DType dtype, const st::Shape& shape, int r, uint64_t salt,
                 bool contiguous = true) {
  auto values = [&](const st::Shape& s) {
    const st::Tensor z = st::randn(s, 1000 * salt + uint64_t(r), st::f64);
    switch (dtype) {
      case st::DType::b8:
        return z > 0.0;
      case st::DType::i32:
      case st::DType::i64:
        return (z * 10.0).to(dtype);
      default:
        return z.to(dtype);
    }
  };
  if (contiguous || shape.ndim() == 0) return values(shape);
  if (shape.ndim() == 1) return values({2 * shape[0]}).ix(st::slice(st::none, st::none, 2));
  st::Shape swapped = shape;
  std::swap(swapped[0], swapped[1]);
  return values(swapped).transpose(0, 1);
}

// Every rank's input stacked: [world, ...shape].
st::Tensor stacked(st::DType dtype, const st::Shape& shape, uint64_t salt, bool contiguous = true) {
  std::vector<st::Tensor> xs;
  for (int r = 0; r < st::dist::world_size(); ++r) {
    xs.push_back(input(dtype, shape, r, salt, contiguous));
  }
  return st::stack(xs, 0);
}

// The reference reduction over axis 0 of the stacked inputs.
st::Tensor reduced(const st::Tensor& all, Reduction op) {
  if (all.dtype() == st::bool_) return st::max(all.to(st::i32), {0}) > 0;  // logical or
  switch (op) {
    case Reduction::sum:
      return st::sum(all, {0}).to(all.dtype());  // sum promotes ints to i64
    case Reduction::max:
      return st::max(all, {0});
    case Reduction::mean:
      return st::sum(all, {0}) / double(st::dist::world_size());
  }
  return {};
}

// Exact for ints, bools and max; for float sums, within the rounding of another order.
void require_equal(const st::Tensor& got, const st::Tensor& want, bool exact) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.device() == st::testing::test_device());
  const auto g = got.to(st::f64).to_vector<double>();
  const auto w = want.to(st::f64).to_vector<double>();
  const double tol = exact ? 0 : (got.dtype() == st::f32 ? 1e-5 : 1e-13);
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i])));
  }
}

const std::vector<st::Shape> kShapes{{}, {0}, {7}, {3, 4}, {2, 0, 3}, {2, 3, 5}};

// The message of the DistError f throws ("" when it throws none, which fails the test).
template <class F>
std::string dist_error(F f) {
  try {
    f();
  } catch (const st::DistError& e) {
    return e.what();
  }
  FAIL("no DistError");
  return "";
}

}  // namespace

TEST_CASE("dist: ranks and world size", "[dist]") {
  const int world = st::dist::world_size();
  REQUIRE(world >= 1);
  REQUIRE(st::dist::rank() >= 0);
  REQUIRE(st::dist::rank() < world);
  REQUIRE(st::dist::local_rank() <= st::dist::rank());  // one host in the tests
  const st::Tensor ranks = st::dist::all_gather(st::full({}, st::dist::rank(), st::i64));
  REQUIRE(ranks.shape() == st::Shape{world});
  REQUIRE(ranks.to_vector<int64_t>() == st::arange(0, world).to_vector<int64_t>());
}

TEST_CASE("dist: all_reduce against a one-process reference", "[dist]") {
  uint64_t salt = 1;
  for (st::DType dtype : kDTypes) {
    for (const st::Shape& shape : kShapes) {
      for (bool contiguous : {true, false}) {
        for (Reduction op : {Reduction::sum, Reduction::max, Reduction::mean}) {
          if (op == Reduction::mean && !st::is_floating(dtype)) continue;
          ++salt;
          INFO(st::dtype_name(dtype)
               << shape << (contiguous ? "" : " strided") << " op " << int(op));
          const st::Tensor x = input(dtype, shape, st::dist::rank(), salt, contiguous);
          if (!contiguous && shape.ndim() > 0 && x.numel() > 1)
            REQUIRE_FALSE(x.raw().is_contiguous());
          const st::Tensor got = st::dist::all_reduce(x, op);
          require_equal(got, reduced(stacked(dtype, shape, salt, contiguous), op),
                        op == Reduction::max || !st::is_floating(dtype));
        }
      }
    }
  }
}

TEST_CASE("dist: broadcast, all_gather and reduce_scatter against a one-process reference",
          "[dist]") {
  const int world = st::dist::world_size();
  uint64_t salt = 500;
  for (st::DType dtype : kDTypes) {
    for (const st::Shape& shape : kShapes) {
      for (bool contiguous : {true, false}) {
        ++salt;
        INFO(st::dtype_name(dtype) << shape << (contiguous ? "" : " strided"));
        const st::Tensor x = input(dtype, shape, st::dist::rank(), salt, contiguous);
        const st::Tensor all = stacked(dtype, shape, salt, contiguous);
        for (int root : {0, world - 1}) {
          require_equal(st::dist::broadcast(x, root), all.ix(root), true);
        }
        require_equal(st::dist::all_gather(x), all, true);
      }
      // reduce_scatter: the first axis holds world parts of shape[0] rows each.
      if (shape.ndim() == 0) continue;
      st::Shape big = shape;
      big[0] *= world;
      for (Reduction op : {Reduction::sum, Reduction::max, Reduction::mean}) {
        if (op == Reduction::mean && !st::is_floating(dtype)) continue;
        ++salt;
        INFO(st::dtype_name(dtype) << big << " reduce_scatter op " << int(op));
        const st::Tensor x = input(dtype, big, st::dist::rank(), salt);
        const st::Tensor full = reduced(stacked(dtype, big, salt), op);
        const int64_t part = shape[0], r = st::dist::rank();
        require_equal(st::dist::reduce_scatter(x, op), full.ix(st::slice(r * part, (r + 1) * part)),
                      op == Reduction::max || !st::is_floating(dtype));
      }
    }
  }
}

TEST_CASE("dist: asynchronous collectives complete in any wait order", "[dist]") {
  const int world = st::dist::world_size();
  std::vector<st::dist::Work> works;
  for (int k = 0; k < 4; ++k) {
    works.push_back(st::dist::all_reduce_async(st::full({5}, k + st::dist::rank(), st::f64)));
  }
  st::dist::Work gathered = st::dist::all_gather_async(st::full({2}, st::dist::rank(), st::i32));
  st::dist::Work fence = st::dist::barrier_async();
  for (int k = 3; k >= 0; --k) {
    const double want = k * world + world * (world - 1) / 2.0;
    const st::Tensor got = works[std::size_t(k)].wait();
    REQUIRE(got.to_vector<double>() == std::vector<double>(5, want));
    REQUIRE(works[std::size_t(k)].done());
    REQUIRE(works[std::size_t(k)].wait().to_vector<double>() == got.to_vector<double>());
  }
  REQUIRE(st::dist::all_gather(st::full({}, 1, st::i32)).numel() == world);
  REQUIRE(gathered.wait().shape() == st::Shape{world, 2});
  REQUIRE_FALSE(fence.wait().defined());
  st::dist::barrier();
  REQUIRE_THROWS_AS(st::dist::Work().wait(), st::ValueError);
}

TEST_CASE("dist: bad arguments are errors on every rank, before any communication", "[dist]") {
  const int world = st::dist::world_size();
  REQUIRE_THROWS_AS(st::dist::all_reduce(st::ones({2}, st::i32), Reduction::mean), st::DTypeError);
  if (world > 1) REQUIRE_THROWS_AS(st::dist::reduce_scatter(st::ones({world + 1})), st::ShapeError);
  REQUIRE_THROWS_AS(st::dist::reduce_scatter(st::ones({}), Reduction::sum), st::ShapeError);
  REQUIRE_THROWS_AS(st::dist::broadcast(st::ones({2}), world), st::ValueError);
  REQUIRE_THROWS_AS(st::dist::broadcast(st::ones({2}), -1), st::ValueError);
  REQUIRE_THROWS_AS(st::dist::all_gather(st::Tensor()), st::ValueError);
  REQUIRE_THROWS_AS(st::dist::set_timeout(std::chrono::milliseconds(0)), st::ValueError);
  // Nothing was sent: the next collective still matches on every rank.
  REQUIRE(st::dist::all_reduce(st::ones({}, st::i64)).item<int64_t>() == world);
}

TEST_CASE("dist: tensors that differ across ranks are reported on every rank", "[dist]") {
  const int world = st::dist::world_size();
  if (world < 2) return;  // one rank cannot disagree with itself
  const int r = st::dist::rank();
  SECTION("shapes, checked before an all_reduce") {
    const st::Tensor x = st::ones({r == 1 ? 3 : 4});
    REQUIRE_THAT(dist_error([&] { st::dist::all_reduce(x); }),
                 Catch::Matchers::Contains("rank 0 passed f32[4], rank 1 f32[3]") &&
                     Catch::Matchers::Contains("all_reduce(sum)"));
  }
  SECTION("dtypes, checked before a broadcast even with the checks off") {
    st::dist::set_check_collectives(false);
    const st::Tensor x = st::ones({2, 2}, r == world - 1 ? st::f64 : st::f32);
    REQUIRE_THAT(dist_error([&] { st::dist::broadcast(x, 0); }),
                 Catch::Matchers::Contains("rank " + std::to_string(world - 1) + " f64[2, 2]"));
    st::dist::set_check_collectives(true);
  }
  SECTION("different collectives") {
    const st::Tensor x = st::ones({2});
    REQUIRE_THAT(dist_error([&] { r == 1 ? st::dist::all_gather(x) : st::dist::all_reduce(x); }),
                 Catch::Matchers::Contains("rank 1 called all_gather"));
  }
  // The group is still usable: a mismatch is found before any data moves.
  REQUIRE(st::dist::all_reduce(st::ones({}, st::i64)).item<int64_t>() == world);
}
