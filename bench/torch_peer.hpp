// SPDX-License-Identifier: MIT
// The PyTorch peer: bench/peers_torch.py --serve in one child process,
// started once per strata_bench run and driven row by row over two pipes, so
// its repetitions alternate with strata's within each workload.
//
// A child that is missing (no torch), dies or stops answering is reported
// once and its column printed as "-"; it never fails the bench. The child
// gets PR_SET_PDEATHSIG and exits when its stdin closes: it never outlives
// strata_bench.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bench {

/// One persistent PyTorch child process (see bench/peers_torch.py's serve()).
class TorchPeer {
 public:
  /// Starts `python script --serve` and waits for its "ready" line.
  TorchPeer(const std::string& python, const std::string& script);
  /// Sends "quit", then waits for the child (killing it after 5 s).
  ~TorchPeer();
  TorchPeer(const TorchPeer&) = delete;
  TorchPeer& operator=(const TorchPeer&) = delete;

  /// Whether the child is alive and answering.
  bool ok() const { return pid_ > 0; }
  /// Why it is not (empty while ok()).
  const std::string& why() const { return why_; }
  /// torch's version, threads and environment, from the "ready" line.
  const nlohmann::json& config() const { return config_; }
  /// Every row the child has ("list").
  std::vector<std::string> rows();
  /// Builds the row's inputs in the child (and frees the previous row's):
  /// true when ready; false with `error` empty when it has no such row.
  bool setup(const std::string& row, std::string& error);
  /// One turn: warm-up for warm_ms (nothing when 0), then `reps` timed runs,
  /// in ms; empty with `error` set when the row raised or the child failed.
  std::vector<double> run(const std::string& row, int reps, double warm_ms, std::string& error);

 private:
  bool send(const std::string& line);
  bool receive(std::string& line, int timeout_ms);
  // One command, one reply; on a broken pipe or a timeout the child is killed.
  bool ask(const std::string& line, std::string& reply, int timeout_ms);
  void stop(const std::string& why);

  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_, why_;
  nlohmann::json config_;
};

}  // namespace bench
