// SPDX-License-Identifier: MIT
// strata_bench: runs the registered workloads (bench/workloads_*.cpp) and
// writes their timings as JSON.
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

#include "bench/bench.hpp"

namespace bench {

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

st::RawTensor g_sink;

st::Tensor scaled_matrix(int64_t n, uint64_t seed, st::DType dtype) {
  return st::randn({n, n}, seed, dtype) * (1.0 / std::sqrt(double(n)));
}

}  // namespace bench

namespace {

namespace st = strata;
using bench::Workload;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<Workload> workloads() {
  std::vector<bench::Entry> entries = bench::registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.group < b.group; });
  std::vector<Workload> w;
  for (auto& e : entries) w.push_back(std::move(e.workload));
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
    if (w.bytes > 0) {
      const double gbps = w.bytes / (median(times) * 1e-3) / 1e9;
      row["gb_per_s"] = gbps;
      std::printf("   %6.1f GB/s", gbps);
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
