// SPDX-License-Identifier: MIT
// The data-parallel benchmark row ddp_mlp_step_<N>ranks, run under mpirun by
// `make bench-dist` (strata_bench is one process and cannot be a rank of an MPI job).
//
// One step is DataParallel::value_and_grad of an MLP's cross-entropy on this rank's 64 rows
// plus an SGD step. The model, [1024, 2048, 2048, 2048, 2048, 10] in f32 (14.7 M parameters,
// 59 MB of gradients), fills three buckets at the default 25 MiB, so the first two can be
// reduced while the backward pass computes the rest. The row reports the median step, the
// median time some all-reduce was running, the mean share of that time hidden behind the
// backward pass (StepTrace::hidden_fraction), and for scaling the median step of one process
// alone on the whole global batch (N x 64 rows, rank 0, with the same threads).
//   mpirun -np N strata_bench_ddp [--steps S] [--out results_dist.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <dist/dist.hpp>
#include <nlohmann/json.hpp>
#include <strata.hpp>

namespace st = strata;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The time some all-reduce of the step was running (the union of the buckets' spans).
double allreduce_seconds(const st::dist::StepTrace& t) {
  std::vector<std::pair<double, double>> spans;
  for (const auto& b : t.buckets) spans.emplace_back(b.launch_s, b.done_s);
  std::sort(spans.begin(), spans.end());
  double busy = 0, start = 0, end = -1;
  for (const auto& [a, b] : spans) {
    if (a > end) {
      if (end > start) busy += end - start;
      start = a;
      end = b;
    } else {
      end = std::max(end, b);
    }
  }
  if (end > start) busy += end - start;
  return busy;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 10;
  std::string out;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--out") == 0) out = argv[i + 1];
  }
  st::dist::init();
  const int rank = st::dist::rank(), world = st::dist::world_size();
  const int64_t rows = 64, classes = 10;
  const st::nn::MLP model({1024, 2048, 2048, 2048, 2048, classes}, st::nn::Activation::relu);
  st::nn::Params params = model.init(1);
  st::dist::DataParallel ddp(params);
  st::nn::SGD opt(1e-3);
  const st::Tensor x = st::randn({rows, 1024}, 10 + uint64_t(rank));
  const st::Tensor y = st::argmax(st::randn({rows, classes}, 20 + uint64_t(rank)), 1);
  auto loss = [&](const auto& p) { return st::nn::cross_entropy(model(p, x), y); };

  std::vector<double> step_s, comm_s, hidden;
  for (int s = -2; s < steps; ++s) {  // two warm-up steps
    st::dist::barrier();
    const auto start = std::chrono::steady_clock::now();
    auto [value, grads] = ddp.value_and_grad(loss, params);
    opt.step(params, grads);
    const double t = seconds_since(start);
    if (s < 0) continue;
    step_s.push_back(t);
    comm_s.push_back(allreduce_seconds(ddp.last_step()));
    hidden.push_back(ddp.last_step().hidden_fraction());
  }
  // One process alone on the global batch, for scaling (the other ranks wait).
  std::vector<double> alone_s;
  if (rank == 0) {
    const st::Tensor xg = st::randn({rows * world, 1024}, 30);
    const st::Tensor yg = st::argmax(st::randn({rows * world, classes}, 31), 1);
    auto global_loss = [&](const auto& p) { return st::nn::cross_entropy(model(p, xg), yg); };
    for (int s = -2; s < steps; ++s) {
      const auto start = std::chrono::steady_clock::now();
      auto [value, grads] = st::value_and_grad(global_loss, params);
      opt.step(params, grads);
      if (s >= 0) alone_s.push_back(seconds_since(start));
    }
  }
  st::dist::barrier();
  if (rank == 0) {
    double mean_hidden = 0;
    for (double h : hidden) mean_hidden += h / double(hidden.size());
    const std::string name = "ddp_mlp_step_" + std::to_string(world) + "ranks";
    const double ms = 1e3 * median(step_s), comm_ms = 1e3 * median(comm_s);
    const double alone_ms = 1e3 * median(alone_s);
    std::vector<double> all_ms;
    for (double t : step_s) all_ms.push_back(1e3 * t);
    std::printf("%-28s %9s %12s %8s %16s %8s\n", "workload", "step ms", "allreduce ms", "hidden",
                "one process ms", "speedup");
    std::printf("%-28s %9.1f %12.1f %7.0f%% %16.1f %7.2fx\n", name.c_str(), ms, comm_ms,
                100 * mean_hidden, alone_ms, alone_ms / ms);
    std::printf("(%d ranks x %d threads, %lld rows per rank, %zu buckets, %d steps)\n", world,
                st::num_threads(), (long long)rows, ddp.num_buckets(), steps);
    if (!out.empty()) {
      nlohmann::json row = {{"name", name},
                            {"ranks", world},
                            {"threads_per_rank", st::num_threads()},
                            {"rows_per_rank", rows},
                            {"buckets", ddp.num_buckets()},
                            {"steps", steps},
                            {"step_ms", ms},
                            {"allreduce_ms", comm_ms},
                            {"hidden_fraction", mean_hidden},
                            {"one_process_global_batch_ms", alone_ms},
                            {"step_ms_all", all_ms}};
      std::ofstream(out) << nlohmann::json{{"rows", {row}}}.dump(2) << "\n";
      std::printf("wrote %s\n", out.c_str());
    }
  }
  st::dist::finalize();
  return 0;
}
