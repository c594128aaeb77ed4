// SPDX-License-Identifier: MIT
// The benchmark registry shared by the bench/workloads_*.cpp files.
//
// A workload is a name and a setup function that builds its inputs and returns
// the timed body. Each workloads_*.cpp file registers its rows with a static
// `Register` object; strata_bench runs them in (group, registration) order.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <strata.hpp>

namespace bench {

namespace st = strata;

using Body = std::function<void()>;
using Setup = std::function<Body()>;

/// The outcome of a workload's check of its result against a peer's
/// (Workload::check): reported in the row, never failing the run.
struct Check {
  /// Numbers reported under their names (the JSON at full precision).
  std::vector<std::pair<std::string, double>> values;
  /// "ok", "MISMATCH", or why nothing was compared ("unchecked (...)").
  std::string verdict;
};

// The same work done by another library, timed in the same run.
struct Peer {
  std::string name;
  Setup setup;
};

struct Workload {
  std::string name;
  Setup setup;
  double flops = 0;  // per run, when meaningful: the row reports GFLOP/s
  double ops = 0;    // primitive ops per run: the row reports "us_per_op"
  double bytes = 0;  // bytes read + written per run: the row reports GB/s
  // Measurements other than time, each run once after the timing and
  // reported under its name in the row (for example the MiB a tape retains).
  std::vector<std::pair<std::string, std::function<double()>>> measures;
  std::vector<Peer> peers;
  // Peers the row also reports strata against as "strata_over_<peer>": the
  // median over the turns of strata's time / that peer's time in the same turn.
  // They are references (a bound such as a closed form or a plain copy), left
  // out of the row's "ratio" to the fastest peer.
  std::vector<std::string> relative_to;
  /// When set ("step"): one run is one such unit, and the row reports
  /// "<unit>s_per_s" (1000 / median ms) for strata and for every peer.
  std::string per_run;
  /// When set: run once after the timing (and the measures); its values and
  /// verdict go into the row as "check" and the values' names.
  std::function<Check()> check;
};

// Every registered workload with its group (lower groups run first).
struct Entry {
  int group;
  Workload workload;
};
std::vector<Entry>& registry();

struct Register {
  Register(int group, std::function<void(std::vector<Workload>&)> add) {
    std::vector<Workload> w;
    add(w);
    for (auto& x : w) registry().push_back({group, std::move(x)});
  }
};

/// The directory for files a workload shares with its peers' processes: the
/// one holding strata_bench (build/bench/), absolute. strata_bench exports it
/// to the PyTorch child as STRATA_BENCH_DIR.
const std::string& work_dir();

/// x in decimal, exactly ("%.17g"): for the metadata of a file a peer reads.
std::string exact(double x);

/// The check of a training row against its PyTorch peer: strata's loss after the row's check
/// steps against the number `key` of the JSON file the peer wrote at `peer_json` (absent: no
/// PyTorch). Reports both losses under "strata_<key>" and "pytorch_<key>", their difference,
/// and "ok" when it is at most `tol`, else "MISMATCH".
Check compare_peer_loss(double strata_loss, const std::string& peer_json, const std::string& key,
                        double tol);

/// A training row's file, loaded: its parameters, and its stacked batches "batch_x" and
/// "batch_y" [n, ...] split into n batches each.
struct TrainingFile {
  std::map<std::string, st::Tensor> params;  ///< every tensor but the batches
  std::vector<st::Tensor> x, y;              ///< the batches, in order
};
/// Reads a training row's safetensors file (throws as st::load_safetensors, and for a file
/// without the batches).
TrainingFile load_training_file(const std::string& path);

// Keeps results alive so the optimiser cannot drop the work.
extern st::RawTensor g_sink;

// A fixed random [n, n] matrix scaled by 1/sqrt(n), so tanh stays out of saturation.
st::Tensor scaled_matrix(int64_t n, uint64_t seed, st::DType dtype);

}  // namespace bench
