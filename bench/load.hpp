// SPDX-License-Identifier: MIT
#pragma once
// `strata_bench --load`: the table taken while another program keeps one core busy, as on a
// shared machine (issue 40: strata lost more than its peers on small work under such a load).
#include <atomic>
#include <string>
#include <thread>

namespace bench {

/// One thread spinning on the last CPU this process may run on, pinned there, from
/// construction to destruction. Every contestant (strata, the in-process peers, the PyTorch
/// child) shares the machine with it alike.
class CompetingLoad {
 public:
  CompetingLoad();
  ~CompetingLoad();
  CompetingLoad(const CompetingLoad&) = delete;
  CompetingLoad& operator=(const CompetingLoad&) = delete;
  /// What the load is, for the table's header and the JSON ("one spinning thread on cpu 1").
  std::string describe() const;

 private:
  std::atomic<bool> stop_{false};
  int cpu_ = -1;  ///< the CPU it is pinned to (-1: pinning failed, it runs unpinned)
  std::thread thread_;
};

}  // namespace bench
