// SPDX-License-Identifier: MIT
// strata_bench: runs named workloads and writes their timings as JSON.
//
//   strata_bench [--filter SUBSTRING] [--reps N] [--threads N] [--out FILE]
//
// Each workload runs once to warm up (caches, the allocator's free lists),
// then `reps` timed repetitions; the JSON holds the median, min and max in
// milliseconds: {"results":[{"name":..., "unit":"ms", "median":..., ...}]}.
// Rows that count their primitive ops also carry "us_per_op" (median
// microseconds per op). The ad_, jac* and hessian_ workloads time whole
// transforms, forward and backward passes together.
// Speed is measured here, never asserted in tests.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <strata.hpp>

namespace st = strata;
namespace raw = strata::raw;

namespace {

struct Workload {
  std::string name;
  std::function<std::function<void()>()> setup;  // builds inputs, returns the timed body
  double flops = 0;                              // per run, when meaningful
  double ops = 0;                                // primitive ops per run, for "us_per_op"
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Keeps results alive so the optimiser cannot drop the work.
st::RawTensor g_sink;

// A fixed random [n, n] matrix scaled by 1/sqrt(n), so tanh stays out of saturation.
st::Tensor scaled_matrix(int64_t n, uint64_t seed, st::DType dtype) {
  return st::randn({n, n}, seed, dtype) * (1.0 / std::sqrt(double(n)));
}

// The transforms: their cost over the raw kernels is the per-op bookkeeping
// (tape nodes, dual values), which the chain of tiny ops exposes, and one pass
// per basis vector in jacfwd, jacrev and hessian.
void ad_workloads(std::vector<Workload>& w) {
  // 1000 x (sin, mul, add) on one element: 3000 ops, forward and backward.
  Workload chain{"ad_overhead_chain_3000ops", [] {
                   const st::Tensor x = st::full({1}, 0.5, st::f32);
                   auto f = [](const auto& x0) {
                     auto x = x0;
                     for (int i = 0; i < 1000; ++i) x = st::sin(x) * x + 1.0;
                     return x;
                   };
                   return [=] { g_sink = st::value_and_grad(f, x).second.raw(); };
                 }};
  chain.ops = 3000;
  w.push_back(chain);
  // f(x) = sum(tanh(W x)^2) + sum(x^2) / 2: forward over reverse, n passes.
  for (const int64_t n : {16, 64, 256}) {
    w.push_back({"hessian_f64_n" + std::to_string(n), [n] {
                   const st::Tensor W = scaled_matrix(n, 11, st::f64);
                   const st::Tensor x = st::randn({n}, 12, st::f64);
                   auto f = [W](const auto& x) {
                     const auto t = st::tanh(st::matmul(W, x));
                     return st::sum(t * t) + 0.5 * st::sum(x * x);
                   };
                   return [=] { g_sink = st::hessian(f, x).raw(); };
                 }});
  }
  // g(x) = tanh(W2 tanh(W1 x)): a square [n, n] Jacobian, n jvps or n vjps.
  for (const bool forward : {true, false}) {
    for (const int64_t n : {64, 256}) {
      w.push_back(
          {std::string(forward ? "jacfwd" : "jacrev") + "_f32_n" + std::to_string(n), [n, forward] {
             const st::Tensor W1 = scaled_matrix(n, 21, st::f32);
             const st::Tensor W2 = scaled_matrix(n, 22, st::f32);
             const st::Tensor x = st::randn({n}, 23, st::f32);
             auto g = [W1, W2](const auto& x) {
               return st::tanh(st::matmul(W2, st::tanh(st::matmul(W1, x))));
             };
             return [=] { g_sink = (forward ? st::jacfwd(g, x) : st::jacrev(g, x)).raw(); };
           }});
    }
  }
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  const int64_t n = 1024, big = 4096;
  w.push_back({"matmul_f32_n1024",
               [=] {
                 auto a = raw::normal({n, n}, 1, st::f32), b = raw::normal({n, n}, 2, st::f32);
                 return [=] { g_sink = raw::matmul(a, b); };
               },
               2.0 * n * n * n});
  w.push_back({"matmul_f32_bt_n1024",
               [=] {
                 auto a = raw::normal({n, n}, 1, st::f32);
                 auto b = raw::normal({n, n}, 2, st::f32).transpose(0, 1);
                 return [=] { g_sink = raw::matmul(a, b); };
               },
               2.0 * n * n * n});
  w.push_back({"exp_f32_4096x4096", [=] {
                 auto x = raw::normal({big, big}, 3, st::f32);
                 return [=] { g_sink = raw::unary(st::UnaryOp::exp, x); };
               }});
  w.push_back({"exp_f32_4096x4096_t", [=] {
                 auto x = raw::normal({big, big}, 3, st::f32).transpose(0, 1);
                 return [=] { g_sink = raw::unary(st::UnaryOp::exp, x); };
               }});
  w.push_back(
      {"add_f32_4096x4096", [=] {
         auto x = raw::normal({big, big}, 4, st::f32), y = raw::normal({big, big}, 5, st::f32);
         return [=] { g_sink = raw::binary(st::BinaryOp::add, x, y); };
       }});
  w.push_back({"sum_axis1_f32_4096x4096", [=] {
                 auto x = raw::normal({big, big}, 6, st::f32);
                 return [=] { g_sink = raw::reduce(st::ReduceOp::sum, x, {1}); };
               }});
  w.push_back({"sum_axis0_f32_4096x4096", [=] {
                 auto x = raw::normal({big, big}, 6, st::f32);
                 return [=] { g_sink = raw::reduce(st::ReduceOp::sum, x, {0}); };
               }});
  ad_workloads(w);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  // Default output: results.json beside the executable (build/bench/results.json).
  std::string out_path = std::string(argv[0]);
  out_path = out_path.substr(0, out_path.find_last_of('/') + 1) + "results.json";
  std::string filter;
  int reps = 10, threads = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "strata_bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--filter")
      filter = next();
    else if (arg == "--reps")
      reps = std::max(1, std::atoi(next().c_str()));
    else if (arg == "--threads")
      threads = std::max(1, std::atoi(next().c_str()));
    else if (arg == "--out")
      out_path = next();
    else {
      std::cerr << "usage: strata_bench [--filter S] [--reps N] [--threads N] [--out FILE]\n";
      return 2;
    }
  }
  st::set_num_threads(threads);
  nlohmann::json results = nlohmann::json::array();
  std::cout << "strata_bench: " << threads << " threads, " << reps
            << " reps (median, min, max in ms)\n";
  for (const Workload& w : workloads()) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    auto body = w.setup();
    body();  // warm-up
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      body();
      const auto t1 = std::chrono::steady_clock::now();
      times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    nlohmann::json row{{"name", w.name},
                       {"unit", "ms"},
                       {"median", median(times)},
                       {"min", *std::min_element(times.begin(), times.end())},
                       {"max", *std::max_element(times.begin(), times.end())},
                       {"reps", reps},
                       {"threads", threads}};
    std::printf("  %-28s %9.3f %9.3f %9.3f", w.name.c_str(), median(times),
                *std::min_element(times.begin(), times.end()),
                *std::max_element(times.begin(), times.end()));
    if (w.flops > 0) {
      const double gflops = w.flops / (median(times) * 1e-3) / 1e9;
      row["gflops"] = gflops;
      std::printf("   %6.1f GFLOP/s", gflops);
    }
    if (w.ops > 0) {
      const double us_per_op = median(times) * 1e3 / w.ops;
      row["us_per_op"] = us_per_op;
      std::printf("   %6.3f us/op", us_per_op);
    }
    std::printf("\n");
    results.push_back(row);
  }
  std::ofstream(out_path) << nlohmann::json{{"results", results}}.dump(2) << "\n";
  std::cout << "wrote " << out_path << "\n";
  return 0;
}
