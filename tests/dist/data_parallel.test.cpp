// SPDX-License-Identifier: MIT
// st::dist::DataParallel (dist/data_parallel.hpp): data-parallel training equals
// one-process training on the concatenated batches (every rank also runs that reference
// itself), runs repeat bit for bit, and the buckets start in reverse parameter order while
// the backward pass is still running (observed through the step trace).
#include <catch2/catch.hpp>
#include <chrono>
#include <dist/dist.hpp>
#include <memory>
#include <strata.hpp>
#include <thread>

#include "support/device.hpp"

namespace st = strata;
using st::nn::Params;

namespace {

const st::nn::MLP kModel({5, 16, 16, 3}, st::nn::Activation::tanh, st::f64);
constexpr int64_t kSamples = 96, kGlobalBatch = 24;

st::Tensor features() { return st::randn({kSamples, 5}, 11, st::f64); }
st::Tensor labels() {
  return st::argmax(st::matmul(features(), st::randn({5, 3}, 12, st::f64)), 1);
}

auto loss_on(const st::Tensor& x, const st::Tensor& y) {
  return [x, y](const auto& p) { return st::nn::cross_entropy(kModel(p, x), y); };
}

std::unique_ptr<st::nn::Optimizer> optimizer(int kind) {
  switch (kind) {
    case 0:
      return std::make_unique<st::nn::SGD>(0.1, 0.9);
    case 1:
      return std::make_unique<st::nn::Adam>(0.01);
    default:
      return std::make_unique<st::nn::AdamW>(0.01, 0.05);
  }
}

// steps of data-parallel training: this rank's rows of each global batch.
Params train_parallel(int kind, int steps, int64_t bucket_bytes) {
  Params p = kModel.init(st::dist::rank() == 0 ? 3 : 100 + uint64_t(st::dist::rank()));
  st::dist::DataParallel ddp(p, {.bucket_bytes = bucket_bytes});  // rank 0's values everywhere
  auto opt = optimizer(kind);
  st::dist::ShardedBatches batches(features(), labels(), kGlobalBatch, /*seed=*/5, true, true);
  for (int s = 0; s < steps; ++s) {
    auto b = batches.next();
    if (!b) b = batches.next();  // a new epoch
    // The features as a batch argument (a constant of the transform), the labels captured.
    const st::Tensor y = b->y;
    auto [loss, g] = ddp.value_and_grad(
        [&](const auto& q, const auto& x) { return st::nn::cross_entropy(kModel(q, x), y); }, p,
        b->x);
    opt->step(p, g);
  }
  return p;
}

// The same training in one process, on the whole global batches.
Params train_alone(int kind, int steps) {
  Params p = kModel.init(3);
  auto opt = optimizer(kind);
  st::nn::BatchIterator batches(features(), labels(), kGlobalBatch, /*seed=*/5, true, true);
  for (int s = 0; s < steps; ++s) {
    auto b = batches.next();
    if (!b) b = batches.next();
    auto [loss, g] = st::value_and_grad(loss_on(b->x, b->y), p);
    opt->step(p, g);
  }
  return p;
}

double relative_difference(const st::Tensor& a, const st::Tensor& b) {
  return st::max(st::abs(a - b)).item<double>() / (1e-300 + st::max(st::abs(b)).item<double>());
}

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

TEST_CASE("DataParallel: 20 steps equal one process on the concatenated batch", "[dist][ddp]") {
  if (st::dist::world_size() > 1) REQUIRE(kGlobalBatch % st::dist::world_size() == 0);
  for (int kind : {0, 1, 2}) {
    INFO("optimiser " << kind);
    for (int64_t bucket_bytes : {int64_t{25} << 20, int64_t{600}}) {
      const Params parallel = train_parallel(kind, 20, bucket_bytes);
      const Params alone = train_alone(kind, 20);
      for (const auto& [name, t] : alone) {
        INFO(name << " bucket_bytes " << bucket_bytes);
        REQUIRE(relative_difference(parallel.at(name), t) < 1e-6);
        // Every rank holds the same parameters, to the bit.
        const st::Tensor all = st::dist::all_gather(parallel.at(name));
        for (int r = 1; r < st::dist::world_size(); ++r) {
          REQUIRE(all.ix(r).to_vector<double>() == all.ix(0).to_vector<double>());
        }
      }
    }
  }
}

TEST_CASE("DataParallel: two runs with the same seed are identical to the bit", "[dist][ddp]") {
  const Params a = train_parallel(1, 6, 600), b = train_parallel(1, 6, 600);
  for (const auto& [name, t] : a) REQUIRE(t.to_vector<double>() == b.at(name).to_vector<double>());
}

TEST_CASE("DataParallel: buckets in reverse parameter order, started during backward",
          "[dist][ddp]") {
  Params p = kModel.init(3);
  // About one layer's weight per bucket: several buckets.
  st::dist::DataParallel ddp(p, {.bucket_bytes = 16 * 16 * 8});
  REQUIRE(ddp.num_buckets() >= 3);
  const int rank = st::dist::rank(), world = st::dist::world_size();
  // Rank 1 sleeps when its backward pass reaches the first layer: by then it has started
  // the last layers' buckets, which complete during its sleep, while rank 0's backward pass
  // ends long before rank 1 can start the first layer's bucket.
  bool sleepy = true;
  const auto slow = st::custom_vjp([](const auto& h) { return h; },
                                   [](const auto& h) {
                                     return std::pair{h, h};
                                   },
                                   [&](const auto&, const auto& g) {
                                     if (rank == 1 && sleepy) {
                                       std::this_thread::sleep_for(std::chrono::milliseconds(500));
                                     }
                                     return g;
                                   },
                                   "slow");
  const st::Tensor x = features().ix(st::slice(0, 8)), y = labels().ix(st::slice(0, 8));
  auto loss = [&](const auto& q) {
    const auto& layers = kModel.layers();
    auto h = slow(st::tanh(layers[0](q, x)));
    h = st::tanh(layers[1](q, h));
    return st::nn::cross_entropy(layers[2](q, h), y);
  };
  auto [value, g] = ddp.value_and_grad([&](const auto& q) { return loss(q); }, p);
  const st::dist::StepTrace& t = ddp.last_step();
  REQUIRE(t.buckets.size() == ddp.num_buckets());
  // Reverse parameter order: bucket 0 starts with the last parameter, and the buckets'
  // parameters read backwards run through every parameter once.
  std::vector<std::size_t> order;
  for (const auto& b : t.buckets) order.insert(order.end(), b.leaves.begin(), b.leaves.end());
  std::vector<std::size_t> reversed(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) reversed[i] = p.size() - 1 - i;
  REQUIRE(order == reversed);
  // Started in bucket order, the first while most gradients were still being computed.
  REQUIRE(t.buckets.front().leaves_pending_at_launch > 0);
  REQUIRE(t.buckets.back().leaves_pending_at_launch == 0);
  for (std::size_t i = 1; i < t.buckets.size(); ++i) {
    REQUIRE(t.buckets[i].leaves_pending_at_launch <= t.buckets[i - 1].leaves_pending_at_launch);
    REQUIRE(t.buckets[i].launch_s >= t.buckets[i - 1].launch_s);
  }
  for (const auto& b : t.buckets) {
    REQUIRE(b.launch_s <= b.done_s);
    REQUIRE(b.done_s <= t.end_s);
    // In flight at the end of backward: started before it and completed after it.
    if (b.in_flight_at_backward_end) REQUIRE(b.done_s >= t.backward_end_s);
  }
  if (world > 1 && rank == 0) {
    // Rank 1 starts the first layer's bucket only after its sleep: in flight here.
    REQUIRE(t.buckets.back().in_flight_at_backward_end);
  }
  if (world > 1 && rank == 1) {
    // The last layer's bucket completed during the sleep: hidden behind backward.
    REQUIRE_FALSE(t.buckets.front().in_flight_at_backward_end);
    REQUIRE(t.buckets.front().done_s < t.backward_end_s);
    REQUIRE(t.hidden_fraction() > 0.0);
  }
  // And the gradients are the average of the ranks' (the same batch on every rank here).
  sleepy = false;
  auto [v_ref, g_ref] = st::value_and_grad([&](const auto& q) { return loss(q); }, p);
  for (const auto& [name, gt] : g_ref) REQUIRE(relative_difference(g.at(name), gt) < 1e-12);
}

TEST_CASE("DataParallel: no_sync accumulates, the next step averages the sum", "[dist][ddp]") {
  Params p = kModel.init(3);
  st::dist::DataParallel ddp(p);
  const int world = st::dist::world_size();
  st::dist::ShardedBatches batches(features(), labels(), kGlobalBatch, 9, true, true);
  st::nn::BatchIterator global(features(), labels(), kGlobalBatch, 9, true, true);
  Params want;
  for (int micro = 0; micro < 3; ++micro) {
    auto b = batches.next();
    auto gb = global.next();
    const st::Tensor y = b->y;
    auto loss = [&](const auto& q, const auto& x) {
      return st::nn::cross_entropy(kModel(q, x), y);
    };
    auto [v, g_alone] = st::value_and_grad(loss_on(gb->x, gb->y), p);
    for (const auto& [name, t] : g_alone) want[name] = micro == 0 ? t : want[name] + t;
    if (micro < 2) {
      auto quiet = ddp.no_sync();
      auto [lv, local] = ddp.value_and_grad(loss, p, b->x);
      // Inside no_sync: this rank's own gradients, untouched.
      auto [rv, mine] = st::value_and_grad(loss, st::argnums<0>, p, b->x);
      for (const auto& [name, t] : mine)
        REQUIRE(local.at(name).to_vector<double>() == t.to_vector<double>());
    } else {
      auto [lv, synced] = ddp.value_and_grad(loss, p, b->x);
      for (const auto& [name, t] : want) {
        INFO(name << " world " << world);
        REQUIRE(relative_difference(synced.at(name), t) < 1e-12);
      }
    }
  }
}

TEST_CASE("DataParallel: parameters that differ in shape across ranks are a DistError",
          "[dist][ddp]") {
  if (st::dist::world_size() < 2) return;
  Params p{{"w", st::zeros({st::dist::rank() == 1 ? 3 : 2}, st::f64)}};
  REQUIRE_THAT(dist_error([&] { st::dist::DataParallel ddp(p); }),
               Catch::Matchers::Contains("rank 1 f64[3]"));
  Params ints{{"n", st::zeros({2}, st::i64)}};
  REQUIRE_THROWS_AS(st::dist::DataParallel(ints), st::DTypeError);
  REQUIRE_THROWS_AS(st::dist::DataParallel(p, {.bucket_bytes = 0}), st::ValueError);
}
