// SPDX-License-Identifier: MIT
// strata_bench: measures the machine's limits, runs the registered workloads
// (bench/workloads_*.cpp) and their peers in the same run, prints one table
// and writes it as JSON.
//
//   strata_bench [--filter SUBSTRING] [--reps N] [--threads N] [--out FILE]
//                [--no-torch] [--no-peers] [--no-limits] [--warmup-calls N] [--load]
//   strata_bench --print-isa               the instruction set strata's kernels use
//   strata_bench --merge OUT RUN.json...   runs of several instruction sets -> OUT
//
// `make bench` runs it once as the CPU allows and, on an AVX-512 CPU, once
// restricted to AVX2, then merges both runs into build/bench/results.json:
//   {"cpu", "isas": [...], "runs": [each run's header: cpu, isa, env, limits, ...],
//    "results": [every row of every run, each with its "isa" and "cpu"]}
//
// Interleaved: within each workload, strata and every peer take turns, one
// timed repetition each per round, the first contestant rotating from round
// to round (A B C, B C A, C A B, ...), so a host whose speed drifts within
// minutes slows every contestant alike. Each turn warms up first (100 ms of
// calls in the first round, then 20 ms, none for bodies over 50 ms): caches,
// the allocator's free lists, the last contestant's cold data. PyTorch is one
// persistent child process (bench/peers_torch.py --serve, bench/torch_peer.hpp)
// started once and driven row by row over pipes; when it is missing or
// breaks, its column is "-" and the run goes on. --no-peers times strata
// alone; --warmup-calls N replaces the timed warm-ups by N calls before each
// contestant's first turn and none after (a fixed amount of work, for
// bench/compare_instructions.sh's instruction counts). --load times every row while one
// thread spins on the last CPU (bench/load.hpp; `make bench-loaded`), the limits measured
// before it starts; the JSON's "load" says so.
//
// The JSON holds per row and per peer the median, min, max and quartiles
// (q1, q3) of the `reps` times in milliseconds, the machine (cpu) and the
// instruction set strata's kernels use (isa, at the top and in every row):
//   {"cpu", "isa", "onednn_isa", "env", "method", "limits": {...},
//    "results": [{"name", "unit": "ms", "median", "min", "max", "q1", "q3",
//    "isa", "cpu", ..., "peers": [{"name", "median", "min", "max", "q1", "q3"}]}]}
// Rows with a flop count carry "gflops"; rows with a byte count (read +
// written) carry "gb_per_s", "limit_ms" (the time the measured bandwidth
// allows for those bytes) and "of_limit" (limit_ms / median); rows that count
// primitive ops carry "us_per_op"; rows with `relative_to` peers carry
// "strata_over_<peer>" (the median over rounds of strata's time / the peer's).
// Rows that count runs as steps carry "steps_per_s", strata's and each
// peer's. Rows with a check of their result against a peer's carry "check"
// ("ok", "MISMATCH" or "unchecked (why)") and its numbers, printed after the
// rate; a mismatch is reported, never fatal. Files a row shares with the
// PyTorch child (makemore_train_step's weights and batches) are written
// beside strata_bench, a directory exported to the child as STRATA_BENCH_DIR.
// "ratio" is the fastest peer's median over strata's, the `relative_to`
// references left out (they are marks such as a contiguous copy, not rival
// libraries): above 1, strata is faster. A workload or peer that throws is
// reported with its message ("error") and the run goes on to the next.
//
// STRATA_ISA=avx2 (make bench-avx2) restricts the peers too, unless already
// set: DNNL_MAX_CPU_ISA=AVX2, OPENBLAS_CORETYPE=Haswell,
// ATEN_CPU_CAPABILITY=avx2, and the Eigen peer built with -march=haswell.
// Speed is measured here, never asserted in tests.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bench/bench.hpp"
#include "bench/load.hpp"
#include "bench/peers.hpp"
#include "bench/torch_peer.hpp"

namespace bench {

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

st::RawTensor g_sink;

namespace {
std::string g_work_dir = ".";
}  // namespace

const std::string& work_dir() { return g_work_dir; }

st::Tensor scaled_matrix(int64_t n, uint64_t seed, st::DType dtype) {
  return st::randn({n, n}, seed, dtype) * (1.0 / std::sqrt(double(n)));
}

TrainingFile load_training_file(const std::string& path) {
  TrainingFile f{st::load_safetensors(path), {}, {}};
  const st::Tensor bx = f.params.at("batch_x"), by = f.params.at("batch_y");
  f.params.erase("batch_x");
  f.params.erase("batch_y");
  for (int64_t i = 0; i < bx.shape()[0]; ++i) {
    f.x.push_back(bx.ix(i));
    f.y.push_back(by.ix(i));
  }
  return f;
}

std::string exact(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

Check compare_peer_loss(double strata_loss, const std::string& peer_json, const std::string& key,
                        double tol) {
  Check c;
  c.values.push_back({"strata_" + key, strata_loss});
  std::ifstream in(peer_json);
  if (!in) {
    c.verdict = "unchecked (no PyTorch loss)";
    return c;
  }
  double torch_loss = NAN;
  try {
    torch_loss = nlohmann::json::parse(in).at(key).get<double>();
  } catch (const std::exception& e) {
    c.verdict = std::string("unchecked (") + e.what() + ")";
    return c;
  }
  const double diff = std::fabs(strata_loss - torch_loss);
  c.values.push_back({"pytorch_" + key, torch_loss});
  c.values.push_back({"loss_abs_diff", diff});
  c.verdict = diff <= tol ? "ok" : "MISMATCH";
  return c;
}

}  // namespace bench

namespace {

namespace st = strata;
using bench::Workload;

// The type-7 (linear) quantile of sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const std::size_t lo = std::size_t(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile(v, 0.5);
}

struct Timing {
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0;
  explicit Timing(std::vector<double> t = {0}) {
    std::sort(t.begin(), t.end());
    median = quantile(t, 0.5), q1 = quantile(t, 0.25), q3 = quantile(t, 0.75);
    min = t.front(), max = t.back();
  }
  // Half the interquartile range, as a fraction of the median.
  double spread() const { return median > 0 ? 0.5 * (q3 - q1) / median : 0; }
  nlohmann::json json() const {
    return {{"median", median}, {"min", min}, {"max", max}, {"q1", q1}, {"q3", q3}};
  }
};

std::vector<Workload> workloads() {
  std::vector<bench::Entry> entries = bench::registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.group < b.group; });
  std::vector<Workload> w;
  for (auto& e : entries) w.push_back(std::move(e.workload));
  return w;
}

// Pause before each workload: OpenBLAS's worker threads keep spinning
// (sched_yield) after its last call (OPENBLAS_THREAD_TIMEOUT, set below, cuts
// that to about 2^20 cycles) and libgomp's for a while too, so the next row
// would share its 2 cores with them. 300 ms outlasts both.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

// Warm-up per turn. After the cores idled (settle), a 2-core KVM guest runs
// the first milliseconds of two-threaded work up to 2x slow; 100 ms of calls
// before a contestant's first timing made sub-millisecond rows
// (matmul_f32_bt_n256) steady. Later turns follow another contestant's work
// on busy cores and only reload their own data: 20 ms, nothing for bodies
// whose last timing took longer than 50 ms.
constexpr double kFirstWarmMs = 100, kTurnWarmMs = 20, kLongBodyMs = 50;

// One turn of a C++ body: warm-up for warm_ms (at least one call; none when
// 0; exactly -warm_ms calls when negative), then `reps` timed calls.
std::vector<double> cpp_turn(const bench::Body& body, int reps, double warm_ms) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < int(-warm_ms); ++i) body();
  if (warm_ms > 0) {
    const auto until = clock::now() + std::chrono::duration<double, std::milli>(warm_ms);
    do {
      body();
    } while (clock::now() < until);
  }
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = clock::now();
    body();
    const auto t1 = clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return times;
}

// strata or one peer within a workload: one timed repetition per turn.
struct Contestant {
  std::string name;
  std::function<std::vector<double>(double warm_ms, std::string& error)> turn;
  std::vector<double> times;
  std::string error;
};

// Runs `reps` rounds over the contestants, each round starting one later.
// warmup_calls >= 0: that many calls before the first turn, none after.
void interleave(std::vector<Contestant>& cs, int reps, int warmup_calls) {
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < cs.size(); ++k) {
      Contestant& c = cs[(std::size_t(r) + k) % cs.size()];
      if (!c.error.empty()) continue;
      double warm = c.times.empty()                 ? kFirstWarmMs
                    : c.times.back() >= kLongBodyMs ? 0.0
                                                    : kTurnWarmMs;
      if (warmup_calls >= 0) warm = c.times.empty() ? -double(warmup_calls) : 0.0;
      std::vector<double> t = c.turn(warm, c.error);
      if (t.empty() && c.error.empty()) c.error = "no time";
      if (!t.empty()) c.times.push_back(t.front());
    }
  }
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 1 ? "%.4f" : ms < 100 ? "%.3f" : "%.1f", ms);
  return buf;
}

// "median ±s%": s is half the interquartile range in % of the median.
std::string fmt_cell(const Timing& t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s ±%2.0f%%", fmt_ms(t.median).c_str(), 100 * t.spread());
  return buf;
}

// The instruction set oneDNN's JIT uses (DNNL_MAX_CPU_ISA caps it), when strata
// links oneDNN: the value of dnnl_get_effective_cpu_isa() by name.
std::string onednn_isa() {
  using Query = int (*)();
  auto q = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa"));
  if (!q) return "";
  switch (q()) {
    case 0x1:
      return "sse41";
    case 0x3:
      return "avx";
    case 0x7:
      return "avx2";
    case 0x407:
      return "avx2_vnni";
    case 0x27:
      return "avx512_core";
    case 0x67:
      return "avx512_core_vnni";
    case 0xe7:
      return "avx512_core_bf16";
    case 0x3e7:
      return "avx512_core_amx";
    default: {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%x", unsigned(q()));
      return buf;
    }
  }
}

// Merges the JSON of several runs (one per instruction set) into out: the runs'
// headers under "runs", all their rows under "results". 0, or 1 with a message for
// a file that cannot be read or is not a run's JSON.
int merge_runs(const std::string& out, const std::vector<std::string>& inputs) {
  nlohmann::json runs = nlohmann::json::array(), rows = nlohmann::json::array();
  nlohmann::json isas = nlohmann::json::array();
  std::string cpu;
  for (const std::string& path : inputs) {
    std::ifstream in(path);
    nlohmann::json run = in.is_open()
                             ? nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false)
                             : nlohmann::json(nlohmann::json::value_t::discarded);
    if (run.is_discarded() || !run.is_object() || !run.contains("results") ||
        !run["results"].is_array() || !run.contains("isa") || !run["isa"].is_string() ||
        !run.contains("cpu") || !run["cpu"].is_string()) {
      std::cerr << "strata_bench --merge: " << path
                << " is not the JSON of a strata_bench run (cpu, isa, results)\n";
      return 1;
    }
    if (cpu.empty()) cpu = run["cpu"].get<std::string>();
    isas.push_back(run["isa"]);
    for (auto& row : run["results"]) rows.push_back(std::move(row));
    run.erase("results");
    runs.push_back(std::move(run));
  }
  std::ofstream file(out);
  file << nlohmann::json{{"cpu", cpu}, {"isas", isas}, {"runs", runs}, {"results", rows}}.dump(2)
       << "\n";
  if (!file) {
    std::cerr << "strata_bench --merge: cannot write " << out << "\n";
    return 1;
  }
  std::cout << "wrote " << out << " (" << rows.size() << " rows; instruction sets " << isas.dump()
            << ")\n";
  return 0;
}

// The environment that selects instruction sets and threads, as the run saw it.
nlohmann::json isa_env() {
  nlohmann::json env = nlohmann::json::object();
  for (const char* k : {"STRATA_ISA", "DNNL_MAX_CPU_ISA", "OPENBLAS_CORETYPE",
                        "ATEN_CPU_CAPABILITY", "OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY"}) {
    if (const char* v = std::getenv(k)) env[k] = v;
  }
  return env;
}

}  // namespace

int main(int argc, char** argv) {
  // The two modes that run no workload, before anything starts a library.
  if (argc == 2 && std::strcmp(argv[1], "--print-isa") == 0) {
    std::cout << bench::isa_in_use() << "\n";
    return 0;
  }
  if (argc >= 4 && std::strcmp(argv[1], "--merge") == 0) {
    return merge_runs(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  }
  // Restricted to AVX2 (make bench-avx2): the peers likewise, unless set already.
  // All are read when each library loads or first runs, after this point.
  if (const char* isa = std::getenv("STRATA_ISA"); isa && std::strcmp(isa, "avx2") == 0) {
    setenv("DNNL_MAX_CPU_ISA", "AVX2", 0);
    setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    setenv("ATEN_CPU_CAPABILITY", "avx2", 0);
  }
  // OpenBLAS's threads spin for 2^28 cycles (about 0.1 s) after each call by
  // default; interleaved, that would steal a core from the next contestant's
  // turn. 2^20 cycles (under 1 ms) still spans the gap between its back-to-back
  // calls within a turn. The PyTorch child inherits it.
  setenv("OPENBLAS_THREAD_TIMEOUT", "20", 0);
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
  signal(SIGPIPE, SIG_IGN);  // a dead PyTorch child is an error reply, not our death
  // Default output: results.json beside the executable (build/bench/results.json).
  std::string out_path = std::string(argv[0]);
  out_path = out_path.substr(0, out_path.find_last_of('/') + 1) + "results.json";
  std::string filter;
  int reps = 10, threads = 2;
  int warmup_calls = -1;  // -1: timed warm-ups
  bool torch_on = true, peers_on = true, limits_on = true, load_on = false;
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
      torch_on = false;
    else if (arg == "--no-peers")
      peers_on = false, torch_on = false;
    else if (arg == "--no-limits")
      limits_on = false;
    else if (arg == "--warmup-calls")
      warmup_calls = std::max(0, std::atoi(next().c_str()));
    else if (arg == "--load")
      load_on = true;
    else {
      std::cerr << "usage: strata_bench [--filter S] [--reps N] [--threads N] [--out FILE]"
                   " [--no-torch] [--no-peers] [--no-limits] [--warmup-calls N] [--load]\n"
                   "       strata_bench --print-isa\n"
                   "       strata_bench --merge OUT RUN.json...\n";
      return 2;
    }
  }
  st::set_num_threads(threads);
  const std::string cpu = bench::cpu_model(), isa = bench::isa_in_use(), dnnl = onednn_isa();
  const nlohmann::json env = isa_env();
  std::cout << "strata_bench: " << threads << " threads, " << reps
            << " rounds, strata and its peers interleaved (median ms ±half the interquartile "
               "range, in % of the median)\n";
  std::printf("cpu: %s; isa: %s (strata's kernels)%s%s; env: %s\n", cpu.c_str(), isa.c_str(),
              dnnl.empty() ? "" : ", oneDNN ", dnnl.c_str(), env.dump().c_str());

  bench::Limits lim;
  nlohmann::json limits_json;
  if (limits_on) {
    lim = bench::measure_limits(threads, isa);
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
  try {
    std::printf("peer eigen: %s\n", bench::eigen_lib().path.c_str());
  } catch (const std::exception& e) {
    std::printf("peer eigen: skipped (%s)\n", e.what());
  }

  if (peers_on) bench::load_blas_peers();

  // Files a row shares with its peers (makemore_train_step's weights and
  // batches) go beside the executable; the PyTorch child finds them there.
  {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::canonical("/proc/self/exe", ec);
    if (!ec) bench::g_work_dir = exe.parent_path().string();
    setenv("STRATA_BENCH_DIR", bench::g_work_dir.c_str(), 1);
  }

  std::unique_ptr<bench::TorchPeer> torch;
  std::set<std::string> torch_rows;
  if (torch_on) {
    const char* python = std::getenv("STRATA_BENCH_PYTHON");
    const std::string py = python && *python ? python : "/usr/bin/python3";
    std::printf("peer pytorch: starting %s %s --serve\n", py.c_str(), STRATA_BENCH_TORCH_SCRIPT);
    std::fflush(stdout);
    torch = std::make_unique<bench::TorchPeer>(py, STRATA_BENCH_TORCH_SCRIPT);
    if (torch->ok()) {
      for (const std::string& r : torch->rows()) torch_rows.insert(r);
    }
    if (torch->ok()) {
      std::printf("peer pytorch: %s\n", torch->config().dump().c_str());
    } else {
      std::printf("peer pytorch: skipped (%s)\n", torch->why().c_str());
    }
  }

  std::unique_ptr<bench::CompetingLoad> load;
  if (load_on) {
    load = std::make_unique<bench::CompetingLoad>();
    std::printf("load: %s, for every row\n", load->describe().c_str());
  }
  std::vector<std::string> peer_names = {"eigen", "openblas", "blis"};
  if (torch && torch->ok()) peer_names.push_back("pytorch");
  constexpr int kCell = 16;
  std::printf("\n%-28s %*s", "workload", kCell, "strata");
  for (const auto& p : peer_names) std::printf(" %*s", kCell, p.c_str());
  std::printf(" %7s  %s\n", "ratio", "strata rate");

  nlohmann::json results = nlohmann::json::array();
  for (const Workload& w : workloads()) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    torch_rows.erase(w.name);
    settle();
    // Each workload starts from an empty allocator cache, as in a fresh
    // process: blocks cached by earlier (GB-sized) workloads would otherwise
    // fill the cache's limit and send this one's frees back to the system.
    st::cpu_allocator().empty_cache();
    std::vector<Contestant> cs;
    nlohmann::json peer_errors = nlohmann::json::object();
    try {
      bench::Body body = w.setup();
      cs.push_back(
          {"strata", [body](double warm, std::string&) { return cpp_turn(body, 1, warm); }});
    } catch (const std::exception& e) {
      std::printf("%-28s error: %s\n", w.name.c_str(), e.what());
      std::fflush(stdout);
      results.push_back({{"name", w.name}, {"error", e.what()}, {"isa", isa}, {"cpu", cpu}});
      continue;
    }
    for (const bench::Peer& p : peers_on ? w.peers : std::vector<bench::Peer>{}) {
      try {
        bench::Body body = p.setup();
        if (body) {
          cs.push_back(
              {p.name, [body](double warm, std::string&) { return cpp_turn(body, 1, warm); }});
        }
      } catch (const std::exception& e) {
        peer_errors[p.name] = e.what();
      }
    }
    if (torch && torch->ok()) {
      std::string error;
      if (torch->setup(w.name, error)) {
        bench::TorchPeer* t = torch.get();
        const std::string row = w.name;
        cs.push_back({"pytorch", [t, row](double warm, std::string& err) {
                        return t->run(row, 1, warm, err);
                      }});
      } else if (!error.empty()) {
        peer_errors["pytorch"] = error;
      }
    }
    // Contestants that throw while timed are reported like a failed setup.
    auto turn_guard = [](Contestant& c) {
      auto inner = c.turn;
      c.turn = [inner](double warm, std::string& err) -> std::vector<double> {
        try {
          return inner(warm, err);
        } catch (const std::exception& e) {
          err = e.what();
          return {};
        }
      };
    };
    for (Contestant& c : cs) turn_guard(c);
    interleave(cs, reps, warmup_calls);
    if (!cs[0].error.empty()) {
      std::printf("%-28s error: %s\n", w.name.c_str(), cs[0].error.c_str());
      std::fflush(stdout);
      results.push_back({{"name", w.name}, {"error", cs[0].error}, {"isa", isa}, {"cpu", cpu}});
      continue;
    }
    const Timing t(cs[0].times);
    nlohmann::json row{{"name", w.name},     {"unit", "ms"}, {"reps", reps},
                       {"threads", threads}, {"isa", isa},   {"cpu", cpu}};
    row.update(t.json());
    std::map<std::string, Timing> peer_t;
    for (std::size_t k = 1; k < cs.size(); ++k) {
      if (!cs[k].error.empty()) {
        peer_errors[cs[k].name] = cs[k].error;
      } else {
        peer_t[cs[k].name] = Timing(cs[k].times);
      }
    }
    if (!peer_errors.empty()) row["peer_errors"] = peer_errors;
    nlohmann::json peers = nlohmann::json::array();
    double best_peer = 0;
    for (const auto& [name, pt] : peer_t) {
      nlohmann::json pr{{"name", name}};
      pr.update(pt.json());
      if (w.flops > 0) pr["gflops"] = w.flops / (pt.median * 1e-3) / 1e9;
      if (!w.per_run.empty()) pr[w.per_run + "s_per_s"] = 1e3 / pt.median;
      peers.push_back(pr);
      // References (relative_to) are marks, not rivals: the ratio is against the rest.
      const bool reference =
          std::find(w.relative_to.begin(), w.relative_to.end(), name) != w.relative_to.end();
      if (!reference && (best_peer == 0 || pt.median < best_peer)) best_peer = pt.median;
    }
    row["peers"] = peers;
    std::printf("%-28s %*s", w.name.c_str(), kCell, fmt_cell(t).c_str());
    for (const auto& p : peer_names) {
      auto it = peer_t.find(p);
      std::printf(" %*s", kCell, it == peer_t.end() ? "-" : fmt_cell(it->second).c_str());
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
    if (!w.per_run.empty()) {
      // Runs per second, strata's and then each peer's: " 310.2 steps/s (pytorch 150.3)".
      row[w.per_run + "s_per_s"] = 1e3 / t.median;
      std::printf(" %.1f %ss/s", 1e3 / t.median, w.per_run.c_str());
      for (const auto& [name, pt] : peer_t)
        std::printf(" (%s %.1f)", name.c_str(), 1e3 / pt.median);
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
    // strata / a peer, paired round by round (both timed within the same round).
    for (const std::string& rel : w.relative_to) {
      auto it = std::find_if(cs.begin(), cs.end(), [&](const Contestant& c) {
        return c.name == rel && c.error.empty() && c.times.size() == cs[0].times.size();
      });
      if (it == cs.end()) continue;
      std::vector<double> q;
      for (std::size_t r = 0; r < cs[0].times.size(); ++r)
        q.push_back(cs[0].times[r] / it->times[r]);
      const double m = median(q);
      row["strata_over_" + rel] = m;
      std::printf(" strata/%s %.3gx", rel.c_str(), m);
    }
    for (const auto& [name, measure] : w.measures) {
      const double v = measure();
      row[name] = v;
      std::printf(" %s %.3g", name.c_str(), v);
    }
    // The check of the result against a peer's, after all timing: a mismatch
    // is printed as such ("MISMATCH") and recorded, never fatal.
    if (w.check) {
      bench::Check c;
      try {
        c = w.check();
      } catch (const std::exception& e) {
        c.verdict = std::string("unchecked (") + e.what() + ")";
      }
      row["check"] = c.verdict;
      std::printf(" check:");
      for (const auto& [name, v] : c.values) {
        row[name] = v;
        std::printf(" %s %.7g", name.c_str(), v);
      }
      std::printf(" %s", c.verdict.c_str());
    }
    // Peers of this workload only (a copy of the same bytes, a hand-written loop, ...).
    for (const auto& [name, pt] : peer_t) {
      if (std::find(peer_names.begin(), peer_names.end(), name) == peer_names.end()) {
        std::printf("  [%s %s]", name.c_str(), fmt_cell(pt).c_str());
      }
    }
    for (const auto& [name, message] : peer_errors.items()) {
      std::printf("  [%s error: %s]", name.c_str(), message.get<std::string>().c_str());
    }
    std::printf("\n");
    std::fflush(stdout);
    results.push_back(row);
  }
  // PyTorch rows strata has no workload for (yet), timed alone.
  for (const std::string& name : torch_rows) {
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    if (!torch->ok()) break;
    std::string error;
    if (!torch->setup(name, error)) continue;
    std::vector<Contestant> cs{{"pytorch", [&torch, name](double warm, std::string& err) {
                                  return torch->run(name, 1, warm, err);
                                }}};
    interleave(cs, reps, warmup_calls);
    if (!cs[0].error.empty()) continue;
    const Timing pt(cs[0].times);
    std::printf("%-28s %*s", name.c_str(), kCell, "-");
    for (const auto& p : peer_names) {
      std::printf(" %*s", kCell, p == "pytorch" ? fmt_cell(pt).c_str() : "-");
    }
    std::printf("\n");
    nlohmann::json pr{{"name", "pytorch"}};
    pr.update(pt.json());
    results.push_back({{"name", name},
                       {"unit", "ms"},
                       {"isa", isa},
                       {"cpu", cpu},
                       {"peers", nlohmann::json::array({pr})}});
  }
  nlohmann::json doc{{"cpu", cpu},   {"isa", isa},        {"env", env}, {"method", "interleaved"},
                     {"reps", reps}, {"results", results}};
  if (!dnnl.empty()) doc["onednn_isa"] = dnnl;
  if (load) doc["load"] = load->describe();
  if (limits_on) doc["limits"] = limits_json;
  if (torch && !torch->config().is_null()) doc["pytorch_config"] = torch->config();
  if (torch && !torch->ok() && !torch->why().empty()) doc["pytorch_skipped"] = torch->why();
  std::ofstream(out_path) << doc.dump(2) << "\n";
  std::cout << "wrote " << out_path << "\n";
  return 0;
}
