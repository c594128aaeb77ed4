// SPDX-License-Identifier: MIT
// Stress test of the thread pool (core/parallel.cpp) under the transforms and
// a training step: several user threads run grad, hessian and SGD steps at
// once while another thread keeps resizing the pool. Since results never
// depend on the thread count (DESIGN §8), every result must equal, bit for
// bit, the one computed beforehand on a single thread. Bounded in iterations
// and in time, so the ThreadSanitizer build (make test-tsan), many times
// slower, still finishes; the time bound never decides pass or fail.
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "support/device.hpp"
#include "tests/nn/helpers.hpp"

namespace {

using namespace nn_test;

/// Restores the pool size a test found.
struct KeepThreads {
  int saved = st::num_threads();
  ~KeepThreads() { st::set_num_threads(saved); }
};

/// The elements of t, exactly (f32 values are exact in double).
Vec values(const st::Tensor& t) { return t.to_vector<double>(); }

/// Every tensor of a parameter map, flattened in name order.
Vec values(const st::nn::Params& p) {
  Vec out;
  for (const auto& [name, t] : p) {
    const Vec v = values(t);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Sizes above the kernels' grain (2^15 elements), so that the ops do split
// across the pool: [256, 192] hidden activations, [48, 1024] batched rows.
const st::nn::MLP kModel({24, 192, 192, 10}, st::nn::Activation::tanh);
constexpr int64_t kBatch = 256;

struct Problem {
  st::Tensor x = tensor(random_values(kBatch * 24, 11), {kBatch, 24}).to(st::f32);
  st::Tensor labels = st::from_vector(
      [] {
        std::vector<int64_t> l(kBatch);
        for (int64_t i = 0; i < kBatch; ++i) l[std::size_t(i)] = (i * 7 + 3) % 10;
        return l;
      }(),
      {kBatch});
  st::Tensor a = tensor(random_values(1024 * 48, 12), {1024, 48});  // f64
  st::Tensor h_at = tensor(random_values(48, 13), {48});

  /// The gradient of the cross-entropy at the initial parameters.
  Vec grad() const {
    const st::nn::Params p = kModel.init(/*seed=*/5);
    auto loss = [&](const auto& q) { return st::nn::cross_entropy(kModel(q, x), labels); };
    return values(st::grad(loss, p));
  }
  /// The Hessian of mean(tanh(a v)^2) at v = h_at.
  Vec hessian() const {
    auto f = [&](const auto& v) {
      const auto t = st::tanh(st::matmul(a, v));
      return st::mean(t * t);
    };
    return values(st::hessian(f, h_at));
  }
  /// The parameters after three SGD steps (momentum 0.9) from the initial ones.
  Vec train() const {
    st::nn::Params p = kModel.init(/*seed=*/5);
    st::nn::SGD opt(0.1, 0.9);
    auto loss = [&](const auto& q) { return st::nn::cross_entropy(kModel(q, x), labels); };
    for (int step = 0; step < 3; ++step) opt.step(p, st::grad(loss, p));
    return values(p);
  }
};

}  // namespace

TEST_CASE(
    "grad, hessian and SGD steps in several threads while the pool is resized match one thread",
    "[nn][parallel][stress][threads]") {
  KeepThreads keep;
  const Problem problem;
  st::set_num_threads(1);
  const Vec grad_ref = problem.grad(), hessian_ref = problem.hessian(), train_ref = problem.train();
  REQUIRE(grad_ref.size() == std::size_t(st::nn::num_parameters(kModel.init(5))));
  REQUIRE(hessian_ref.size() == 48 * 48);

  constexpr int kIterations = 6;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::atomic<int> running{0};
  std::atomic<int> resizes{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<int> iterations(6, 0);

  auto user = [&](int id, Vec (Problem::*compute)() const, const Vec& reference) {
    const st::DefaultDevice on(st::testing::test_device());  // a new thread starts on the CPU
    try {
      for (int i = 0; i < kIterations; ++i) {
        if (i > 0 && std::chrono::steady_clock::now() > deadline) break;
        if ((problem.*compute)() != reference) {
          std::lock_guard lock(mutex);
          failures.push_back("user thread " + std::to_string(id) + ", iteration " +
                             std::to_string(i) + ": result differs from the 1-thread reference");
        }
        ++iterations[std::size_t(id)];
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      failures.push_back("user thread " + std::to_string(id) + " threw: " + e.what());
    }
    --running;
  };

  st::set_num_threads(3);
  std::vector<std::thread> threads;
  const std::vector<std::pair<Vec (Problem::*)() const, const Vec*>> jobs = {
      {&Problem::grad, &grad_ref},       {&Problem::hessian, &hessian_ref},
      {&Problem::train, &train_ref},     {&Problem::grad, &grad_ref},
      {&Problem::hessian, &hessian_ref}, {&Problem::train, &train_ref}};
  running = int(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    threads.emplace_back(user, int(i), jobs[i].first, std::cref(*jobs[i].second));
  }
  std::thread resizer([&] {
    // Sizes 1 to 4 in turn, while any user thread still runs.
    int k = 0;
    do {
      st::set_num_threads(1 + (k++ % 4));
      ++resizes;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } while (running > 0);
  });
  for (auto& t : threads) t.join();
  resizer.join();

  INFO("pool resized " << resizes.load() << " times");
  for (const std::string& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  for (int n : iterations) CHECK(n >= 1);
}
