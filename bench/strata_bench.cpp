// SPDX-License-Identifier: MIT
// strata_bench: measures the machine's limits, runs the registered workloads
// (bench/workloads_*.cpp) and their peers in the same run, prints one table
// and writes it as JSON.
//
//   strata_bench [--filter SUBSTRING] [--reps N] [--threads N] [--out FILE]
//                [--no-torch] [--no-limits]
//
// Each workload and each peer warms up (at least one call and 100 ms: caches,
// the allocator's free lists, idle cores), then `reps` timed repetitions; the
// JSON holds the median, min and max in milliseconds:
//   {"limits": {...}, "results": [{"name", "unit": "ms", "median", "min",
//    "max", ..., "peers": [{"name", "median", "min", "max"}, ...]}]}
// Rows with a flop count carry "gflops"; rows with a byte count (read +
// written) carry "gb_per_s", "limit_ms" (the time the measured bandwidth
// allows for those bytes) and "of_limit" (limit_ms / median); rows that count
// primitive ops carry "us_per_op". PyTorch's rows come from
// bench/peers_torch.py run with $STRATA_BENCH_PYTHON, default /usr/bin/python3
// (skipped with a message when torch is not installed), matched by workload
// name. "ratio" is the fastest peer's median over strata's: above 1, strata is
// faster. A workload or peer that throws is reported with its message
// ("error") and the run goes on to the next.
// Speed is measured here, never asserted in tests.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench.hpp"
#include "bench/peers.hpp"

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

struct Timing {
  double median = 0, min = 0, max = 0;
  int reps = 0;
};

// Pause before each timed body: OpenBLAS's worker threads keep spinning
// (sched_yield) for about 2^28 cycles after its last call, and libgomp's for
// a while too, so without it the row timed right after a BLAS peer (e.g.
// strata's matmul_f32_bt_n256 after matmul_f32_n256's peers) shares its 2
// cores with them. 300 ms outlasts both spins.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

// Warm-up: at least one call and at least 100 ms of calls. After the cores
// idled (settle), a 2-core KVM guest runs the first milliseconds of
// two-threaded work up to 2x slow; one warm-up call left sub-millisecond rows
// (matmul_f32_bt_n256) bimodal between runs, 100 ms makes them steady.
constexpr auto kWarmup = std::chrono::milliseconds(100);

Timing time_body(const bench::Body& body, int reps) {
  settle();
  const auto warm_until = std::chrono::steady_clock::now() + kWarmup;
  do {
    body();
  } while (std::chrono::steady_clock::now() < warm_until);
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return {median(times), *std::min_element(times.begin(), times.end()),
          *std::max_element(times.begin(), times.end()), reps};
}

// Runs bench/peers_torch.py; its rows by name (empty when torch is missing).
std::map<std::string, Timing> run_torch(const std::string& filter, int reps,
                                        nlohmann::json& config) {
  std::map<std::string, Timing> rows;
  const std::string out = "/tmp/strata_bench_torch_" + std::to_string(getpid()) + ".json";
  const char* python = std::getenv("STRATA_BENCH_PYTHON");
  std::string cmd = std::string(python && *python ? python : "/usr/bin/python3") + " " +
                    std::string(STRATA_BENCH_TORCH_SCRIPT) + " --out " + out + " --reps " +
                    std::to_string(reps);
  if (!filter.empty()) cmd += " --filter '" + filter + "'";
  std::printf("peer pytorch: running %s\n", cmd.c_str());
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  if (rc != 0 || !in) {
    std::printf("peer pytorch: skipped (script exit status %d)\n", rc);
    return rows;
  }
  const nlohmann::json j = nlohmann::json::parse(in);
  std::remove(out.c_str());
  config = j["config"];
  std::printf("peer pytorch: %s\n", config.dump().c_str());
  for (const auto& r : j["results"]) {
    if (r.contains("error")) {
      std::printf("peer pytorch: %s: %s\n", r["name"].get<std::string>().c_str(),
                  r["error"].get<std::string>().c_str());
      continue;
    }
    rows[r["name"]] = {r["median"], r["min"], r["max"], r["reps"]};
  }
  return rows;
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 1 ? "%.4f" : ms < 100 ? "%.3f" : "%.1f", ms);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  // Passive OpenMP waiting for every library in this process (oneDNN's and
  // BLIS's libgomp): an actively spinning OpenMP team left behind by one
  // peer otherwise steals a core from the next row (matmul_f32_bt_n256 ran
  // 8x slow after BLIS). libgomp reads the variable when it loads, before
  // main, so set it and start again.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);
    std::perror("strata_bench: execv");  // not reached on success; run on regardless
  }
  // Default output: results.json beside the executable (build/bench/results.json).
  std::string out_path = std::string(argv[0]);
  out_path = out_path.substr(0, out_path.find_last_of('/') + 1) + "results.json";
  std::string filter;
  int reps = 10, threads = 2;
  bool torch = true, limits_on = true;
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
    else if (arg == "--no-torch")
      torch = false;
    else if (arg == "--no-limits")
      limits_on = false;
    else {
      std::cerr << "usage: strata_bench [--filter S] [--reps N] [--threads N] [--out FILE]"
                   " [--no-torch] [--no-limits]\n";
      return 2;
    }
  }
  st::set_num_threads(threads);
  std::cout << "strata_bench: " << threads << " threads, " << reps << " reps (medians in ms)\n";

  bench::Limits lim;
  nlohmann::json limits_json;
  if (limits_on) {
    lim = bench::measure_limits(threads);
    std::printf(
        "limits: copy %.1f GB/s, triad %.1f GB/s (read + written, %d threads); "
        "f32 peak %.0f GFLOP/s (%s)\n",
        lim.copy_gbps, lim.triad_gbps, threads, lim.fma_gflops, lim.fma_isa);
    limits_json = {{"copy_gb_per_s", lim.copy_gbps},
                   {"triad_gb_per_s", lim.triad_gbps},
                   {"bandwidth_gb_per_s", lim.bandwidth_gbps()},
                   {"f32_peak_gflops", lim.fma_gflops},
                   {"f32_peak_isa", lim.fma_isa},
                   {"threads", threads}};
  }
  nlohmann::json torch_config;
  std::map<std::string, Timing> torch_rows;
  if (torch) torch_rows = run_torch(filter, reps, torch_config);

  std::vector<std::string> peer_names = {"eigen", "openblas", "blis"};
  if (!torch_rows.empty()) peer_names.push_back("pytorch");
  std::printf("\n%-28s %10s", "workload", "strata");
  for (const auto& p : peer_names) std::printf(" %10s", p.c_str());
  std::printf(" %7s  %s\n", "ratio", "strata rate");

  nlohmann::json results = nlohmann::json::array();
  for (const Workload& w : workloads()) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    // Each workload starts from an empty allocator cache, as in a fresh
    // process: blocks cached by earlier (GB-sized) workloads would otherwise
    // fill the cache's limit and send this one's frees back to the system.
    st::cpu_allocator().empty_cache();
    Timing t;
    try {
      t = time_body(w.setup(), reps);
    } catch (const std::exception& e) {
      std::printf("%-28s error: %s\n", w.name.c_str(), e.what());
      std::fflush(stdout);
      results.push_back({{"name", w.name}, {"error", e.what()}});
      torch_rows.erase(w.name);
      continue;
    }
    nlohmann::json row{{"name", w.name}, {"unit", "ms"}, {"median", t.median}, {"min", t.min},
                       {"max", t.max},   {"reps", reps}, {"threads", threads}};
    std::map<std::string, Timing> peer_t;
    nlohmann::json peer_errors = nlohmann::json::object();
    for (const bench::Peer& p : w.peers) {
      try {
        const bench::Body body = p.setup();
        if (body) peer_t[p.name] = time_body(body, reps);
      } catch (const std::exception& e) {
        peer_errors[p.name] = e.what();
      }
    }
    if (!peer_errors.empty()) row["peer_errors"] = peer_errors;
    if (auto it = torch_rows.find(w.name); it != torch_rows.end()) {
      peer_t["pytorch"] = it->second;
      torch_rows.erase(it);
    }
    nlohmann::json peers = nlohmann::json::array();
    double best_peer = 0;
    for (const auto& [name, pt] : peer_t) {
      nlohmann::json pr{{"name", name}, {"median", pt.median}, {"min", pt.min}, {"max", pt.max}};
      if (w.flops > 0) pr["gflops"] = w.flops / (pt.median * 1e-3) / 1e9;
      peers.push_back(pr);
      if (best_peer == 0 || pt.median < best_peer) best_peer = pt.median;
    }
    row["peers"] = peers;
    std::printf("%-28s %10s", w.name.c_str(), fmt_ms(t.median).c_str());
    for (const auto& p : peer_names) {
      auto it = peer_t.find(p);
      std::printf(" %10s", it == peer_t.end() ? "-" : fmt_ms(it->second.median).c_str());
    }
    if (best_peer > 0) {
      row["ratio"] = best_peer / t.median;
      std::printf(" %7.2f ", best_peer / t.median);
    } else {
      std::printf(" %7s ", "-");
    }
    if (w.flops > 0) {
      const double gflops = w.flops / (t.median * 1e-3) / 1e9;
      row["gflops"] = gflops;
      std::printf(" %.1f GFLOP/s", gflops);
      if (lim.fma_gflops > 0) std::printf(" (%.0f%% of peak)", 100 * gflops / lim.fma_gflops);
    }
    if (w.bytes > 0) {
      const double gbps = w.bytes / (t.median * 1e-3) / 1e9;
      row["gb_per_s"] = gbps;
      std::printf(" %.1f GB/s", gbps);
      if (lim.bandwidth_gbps() > 0) {
        const double limit_ms = w.bytes / (lim.bandwidth_gbps() * 1e9) * 1e3;
        row["limit_ms"] = limit_ms;
        row["of_limit"] = limit_ms / t.median;
        std::printf(" (%.2f of limit, %s ms)", limit_ms / t.median, fmt_ms(limit_ms).c_str());
      }
    }
    if (w.ops > 0) {
      const double us_per_op = t.median * 1e3 / w.ops;
      row["us_per_op"] = us_per_op;
      std::printf(" %.3f us/op", us_per_op);
    }
    for (const auto& [name, measure] : w.measures) {
      const double v = measure();
      row[name] = v;
      std::printf(" %s %.3g", name.c_str(), v);
    }
    // Peers of this workload only (a copy of the same bytes, a hand-written loop, ...).
    for (const auto& [name, pt] : peer_t) {
      if (std::find(peer_names.begin(), peer_names.end(), name) == peer_names.end()) {
        std::printf("  [%s %s ms]", name.c_str(), fmt_ms(pt.median).c_str());
      }
    }
    for (const auto& [name, message] : peer_errors.items()) {
      std::printf("  [%s error: %s]", name.c_str(), message.get<std::string>().c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
    results.push_back(row);
  }
  for (const auto& [name, pt] : torch_rows) {  // PyTorch rows strata has no workload for (yet)
    std::printf("%-28s %10s", name.c_str(), "-");
    for (const auto& p : peer_names) {
      std::printf(" %10s", p == "pytorch" ? fmt_ms(pt.median).c_str() : "-");
    }
    std::printf("\n");
    results.push_back(
        {{"name", name},
         {"unit", "ms"},
         {"peers",
          {{{"name", "pytorch"}, {"median", pt.median}, {"min", pt.min}, {"max", pt.max}}}}});
  }
  nlohmann::json doc{{"results", results}};
  if (limits_on) doc["limits"] = limits_json;
  if (!torch_config.is_null()) doc["pytorch_config"] = torch_config;
  std::ofstream(out_path) << doc.dump(2) << "\n";
  std::cout << "wrote " << out_path << "\n";
  return 0;
}
