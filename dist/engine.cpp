// SPDX-License-Identifier: MIT
// The communication thread (dist/internal/engine.hpp).
#include "dist/internal/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace strata::dist::detail {

namespace {
// How long a waiter gives the engine thread itself beyond a task's timeout before it
// concludes that the thread is stuck inside an MPI or CUDA call (which polling never is).
constexpr std::chrono::seconds kStuckGrace{10};
// Idle turns spent yielding before the engine sleeps between polls: a collective that
// completes within microseconds is seen at once, a long one costs little CPU.
constexpr int kSpinTurns = 200;
constexpr std::chrono::microseconds kPollSleep{50};
}  // namespace

std::string seconds_text(std::chrono::milliseconds d) {
  std::ostringstream os;
  os << double(d.count()) / 1000.0 << " s";
  return os.str();
}

Engine::Engine(int rank, int world, std::chrono::milliseconds timeout)
    : rank_(rank), world_(world), timeout_(timeout), heartbeat_(Clock::now()) {
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  for (auto& t : running_) t->abandon();
}

std::shared_ptr<Task> Engine::submit(std::shared_ptr<Task> task) {
  {
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) {
      throw DistError("st::dist::" + task->what() + " on rank " + std::to_string(rank_) +
                      ": the process group failed earlier and cannot run collectives (" + broken_ +
                      ")");
    }
    task->timeout = timeout_;
    // An idle engine thread is asleep, its heartbeat old: that is not a stuck MPI call.
    if (running_.empty() && queued_.empty()) heartbeat_ = Clock::now();
    queued_.push_back(task);
  }
  wake_.notify_all();
  return task;
}

RawTensor Engine::wait(Task& task) {
  std::unique_lock lock(mutex_);
  while (task.state == Task::State::queued || task.state == Task::State::running) {
    done_.wait_for(lock, std::chrono::milliseconds(100));
    const auto limit = std::max(task.timeout, timeout_) + kStuckGrace;
    if (Clock::now() - heartbeat_ > limit) {
      const std::string msg =
          "st::dist::" + task.what() + " on rank " + std::to_string(rank_) +
          ": the communication thread has been inside one MPI or NCCL call "
          "for over " +
          seconds_text(std::chrono::duration_cast<std::chrono::milliseconds>(limit)) +
          "; the process group is unusable";
      if (broken_.empty()) broken_ = msg;
      throw DistError(msg);
    }
  }
  if (task.state == Task::State::failed) throw DistError(task.error);
  if (!task.finished_result) {
    lock.unlock();  // finish() may compute (a mean's division) without blocking the engine
    RawTensor r = task.finish();
    lock.lock();
    task.result = std::move(r);
    task.finished_result = true;
  }
  return task.result;
}

bool Engine::done(const Task& task) {
  std::lock_guard lock(mutex_);
  return task.state == Task::State::done || task.state == Task::State::failed;
}

void Engine::set_timeout(std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  timeout_ = timeout;
}

std::chrono::milliseconds Engine::timeout() {
  std::lock_guard lock(mutex_);
  return timeout_;
}

std::string Engine::broken() {
  std::lock_guard lock(mutex_);
  return broken_;
}

std::string Engine::timeout_message(const Task& t) const {
  return "st::dist::" + t.what() + " on rank " + std::to_string(rank_) + " of " +
         std::to_string(world_) + ": not complete after " + seconds_text(t.timeout) +
         " (the timeout; st::dist::set_timeout changes it): another rank died, hung, or did "
         "not call this collective; the process group is unusable from now on";
}

// Under the mutex: every task running or queued fails with `reason`.
void Engine::fail_all(const std::string& reason) {
  const auto now = Clock::now();
  for (auto& t : running_) {
    t->abandon();
    if (t->state == Task::State::running) {
      t->state = Task::State::failed;
      t->error = "st::dist::" + t->what() + " on rank " + std::to_string(rank_) +
                 ": abandoned, the process group failed (" + reason + ")";
      t->finished = now;
    }
  }
  running_.clear();
  for (auto& t : queued_) {
    t->state = Task::State::failed;
    t->error = "st::dist::" + t->what() + " on rank " + std::to_string(rank_) +
               ": not started, the process group failed (" + reason + ")";
    t->finished = now;
  }
  queued_.clear();
}

void Engine::run() {
  int idle_turns = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    heartbeat_ = Clock::now();
    if (stop_) return;
    if (!broken_.empty() || (running_.empty() && queued_.empty())) {
      wake_.wait(lock, [&] { return stop_ || (broken_.empty() && !queued_.empty()); });
      continue;
    }
    // Start queued tasks in order while every running one has issued all its calls.
    while (!queued_.empty() && std::all_of(running_.begin(), running_.end(),
                                           [](const auto& t) { return t->issued_all(); })) {
      auto t = std::move(queued_.front());
      queued_.pop_front();
      t->state = Task::State::running;
      t->started = Clock::now();
      running_.push_back(std::move(t));
    }
    std::vector<std::shared_ptr<Task>> turn = running_;
    lock.unlock();
    // Poll without the lock: callers may submit meanwhile.
    bool any_finished = false;
    std::string group_failure;
    for (auto& t : turn) {
      std::string error;
      bool complete = false, consistent = false;
      try {
        complete = t->progress();
      } catch (const ConsistentFailure& e) {
        error = e.what();
        consistent = true;
      } catch (const std::exception& e) {
        error = e.what();
      }
      const auto now = Clock::now();
      if (error.empty() && !complete && now - t->started > t->timeout) {
        error = timeout_message(*t);
      }
      if (complete || !error.empty()) {
        std::lock_guard relock(mutex_);
        t->state = complete ? Task::State::done : Task::State::failed;
        t->error = error;
        t->finished = now;
        running_.erase(std::find(running_.begin(), running_.end(), t));
        any_finished = true;
        if (!error.empty() && !consistent) {
          t->abandon();
          group_failure = error;
          break;  // nothing more may be issued
        }
      }
    }
    lock.lock();
    if (!group_failure.empty()) {
      if (broken_.empty()) broken_ = group_failure;
      fail_all(group_failure);
      // stderr too: a rank whose program never waits still says why its job stopped.
      std::fprintf(stderr, "%s\n", group_failure.c_str());
    }
    if (any_finished) {
      done_.notify_all();
      idle_turns = 0;
      continue;
    }
    lock.unlock();
    if (++idle_turns < kSpinTurns) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollSleep);
    }
    lock.lock();
  }
}

}  // namespace strata::dist::detail
