// SPDX-License-Identifier: MIT
#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace strata {
namespace {

thread_local bool t_in_parallel = false;

/// How long a thread polls for work (or for a job's last piece) before it
/// sleeps on a condition variable. A training step issues its parallel ops
/// tens of microseconds apart, and waking a sleeping thread costs about as
/// much, so a short poll keeps the pool warm; past it, threads sleep (no
/// lasting busy-waiting, unlike an active OpenMP runtime).
constexpr auto kPoll = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Polls `ready` for up to kPoll; true when it became true.
template <class Ready>
bool poll_for(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kPoll;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
    cpu_relax();
  }
}

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int64_t begin, int64_t end, int pieces,
           const std::function<void(int64_t, int64_t)>& fn) {
    struct Job {
      std::mutex m;
      std::condition_variable done;
      std::atomic<int> remaining;
      std::exception_ptr error;
    };
    auto job = std::make_shared<Job>();
    job->remaining = pieces;
    const int64_t n = end - begin;
    auto piece = [&, job](int i) {
      const int64_t lo = begin + n * i / pieces, hi = begin + n * (i + 1) / pieces;
      try {
        t_in_parallel = true;
        fn(lo, hi);
      } catch (...) {
        std::lock_guard lock(job->m);
        if (!job->error) job->error = std::current_exception();
      }
      t_in_parallel = false;
      if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard lock(job->m);  // a waiter is either polling or inside wait()
        job->done.notify_all();
      }
    };
    {
      std::lock_guard lock(mutex_);
      for (int i = 1; i < pieces; ++i) tasks_.push_back({job.get(), [piece, i] { piece(i); }});
      pending_.store(int(tasks_.size()), std::memory_order_release);
    }
    cv_.notify_all();
    piece(0);
    // Pieces no worker has picked up yet (a worker still waking up, or its
    // core busy elsewhere) run here rather than being waited for. Which
    // thread runs a piece never changes the piece, so results stay the same.
    for (;;) {
      std::function<void()> task;
      {
        std::lock_guard lock(mutex_);
        auto it = std::find_if(tasks_.begin(), tasks_.end(),
                               [&](const Task& t) { return t.job == job.get(); });
        if (it == tasks_.end()) break;
        task = std::move(it->fn);
        tasks_.erase(it);
        pending_.store(int(tasks_.size()), std::memory_order_release);
      }
      task();
    }
    auto finished = [&] { return job->remaining.load(std::memory_order_acquire) == 0; };
    if (!poll_for(finished)) {
      std::unique_lock lock(job->m);
      job->done.wait(lock, finished);
    }
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      poll_for([&] { return pending_.load(std::memory_order_acquire) > 0; });
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (stop_ && tasks_.empty()) return;
        task = std::move(tasks_.front().fn);
        tasks_.pop_front();
        pending_.store(int(tasks_.size()), std::memory_order_release);
      }
      task();
    }
  }

  struct Task {
    const void* job;  // the run() call the piece belongs to
    std::function<void()> fn;
  };
  std::vector<std::thread> workers_;
  std::deque<Task> tasks_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<int> pending_{0};  // tasks_.size(), readable without the lock (polling)
  bool stop_ = false;
};

int default_threads() {
  if (const char* env = std::getenv("STRATA_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::mutex g_pool_mutex;
std::shared_ptr<ThreadPool> g_pool;

std::shared_ptr<ThreadPool> pool() {
  std::lock_guard lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_shared<ThreadPool>(default_threads());
  return g_pool;
}

}  // namespace

int num_threads() { return pool()->size(); }

void set_num_threads(int n) {
  if (n < 1) detail::fail<ValueError>("set_num_threads", "thread count must be >= 1, got ", n);
  std::lock_guard lock(g_pool_mutex);
  g_pool = std::make_shared<ThreadPool>(n);
}

namespace detail {

void parallel_for_pieces(int64_t begin, int64_t end, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || t_in_parallel) {
    fn(begin, end);
    return;
  }
  auto p = pool();
  if (p->size() == 1) {
    fn(begin, end);
    return;
  }
  const int pieces = static_cast<int>(
      std::min<int64_t>(int64_t(p->size()) * kPiecesPerThread, (n + grain - 1) / grain));
  if (pieces <= 1) {
    fn(begin, end);
    return;
  }
  p->run(begin, end, pieces, fn);
}

}  // namespace detail
}  // namespace strata
