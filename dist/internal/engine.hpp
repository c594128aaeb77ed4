// SPDX-License-Identifier: MIT
#pragma once
// The communication thread (not installed: the dist sources only).
//
// Every collective is a Task. The caller submits it; the engine's one thread starts the
// tasks in submission order and polls them (MPI_Test, cudaEventQuery) until they complete,
// fail, or run past the timeout. Only that thread calls MPI or NCCL after init, so MPI needs
// no more than MPI_THREAD_SERIALIZED, a blocked collective never blocks the caller beyond
// the timeout, and the MPI progress engine runs while the caller computes (the overlap of
// st::dist::DataParallel). A task may issue several calls one after another (a header
// exchange, then the collective); the next task starts only once the running ones have
// issued all of theirs, so every rank issues the same calls in the same order.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/process_group.hpp"
#include "raw/raw_tensor.hpp"

namespace strata::dist::detail {

using Clock = std::chrono::steady_clock;

/// One collective, driven by the engine thread.
class Task {
 public:
  /// `what` names the collective in messages: "all_reduce(sum) of f32[3, 4]".
  explicit Task(std::string what) : what_(std::move(what)) {}
  virtual ~Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  /// Issues the task's next call, or tests the one in flight: true once the task has
  /// completed. Engine thread only. Throws DistError; Failure::consistent when every rank
  /// sees the same failure at the same call (the group stays usable).
  virtual bool progress() = 0;
  /// Whether every call this task makes has been issued (later tasks may start).
  virtual bool issued_all() const = 0;
  /// After a timeout or an error: release what the backend allows (NCCL aborts its
  /// communicator; an MPI collective cannot be cancelled, its buffers stay with the task).
  virtual void abandon() {}
  /// The result, computed on the waiting thread once the task has completed.
  virtual RawTensor finish() { return {}; }

  /// The collective, for messages.
  const std::string& what() const { return what_; }

  // Written by the engine under its mutex.
  enum class State { queued, running, done, failed };
  State state = State::queued;          ///< where the task is
  std::string error;                    ///< the DistError message, when failed
  std::chrono::milliseconds timeout{};  ///< the timeout in force when it was submitted
  Clock::time_point started;            ///< when the engine issued its first call
  Clock::time_point finished;           ///< when the engine saw it complete or fail
  bool finished_result = false;         ///< finish() has run (wait() may be called again)
  RawTensor result;                     ///< what finish() returned

 private:
  std::string what_;
};

/// A DistError thrown by Task::progress when every rank fails the same way (the group stays
/// usable): a shape or dtype mismatch found by the header exchange.
struct ConsistentFailure : DistError {
  using DistError::DistError;
};

/// The communication thread and its queue.
class Engine {
 public:
  /// Starts the thread; `rank` and `world` are for messages.
  Engine(int rank, int world, std::chrono::milliseconds timeout);
  /// Stops the thread (tasks still running are abandoned).
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Queues the task (DistError when the group failed earlier) and returns it.
  std::shared_ptr<Task> submit(std::shared_ptr<Task> task);
  /// Blocks until the task completed (its result) or failed (DistError).
  RawTensor wait(Task& task);
  /// Whether the task completed or failed.
  bool done(const Task& task);
  /// The timeout of the tasks started from now on.
  void set_timeout(std::chrono::milliseconds timeout);
  /// The current timeout.
  std::chrono::milliseconds timeout();
  /// The first failure that made the group unusable ("" while it is usable).
  std::string broken();
  /// This rank, for messages.
  int rank() const { return rank_; }
  /// The number of ranks, for messages.
  int world() const { return world_; }

 private:
  void run();
  void fail_all(const std::string& reason);
  std::string timeout_message(const Task& t) const;

  int rank_, world_;
  std::mutex mutex_;
  std::condition_variable wake_;  // new work or stop, for the engine thread
  std::condition_variable done_;  // a task completed or failed, for the waiters
  std::deque<std::shared_ptr<Task>> queued_;
  std::vector<std::shared_ptr<Task>> running_;
  std::chrono::milliseconds timeout_;
  std::string broken_;
  Clock::time_point heartbeat_;  // the engine loop's last turn, to catch a stuck MPI call
  bool stop_ = false;
  std::thread thread_;
};

/// The seconds of a duration as text: "2 s", "0.25 s".
std::string seconds_text(std::chrono::milliseconds d);

}  // namespace strata::dist::detail
