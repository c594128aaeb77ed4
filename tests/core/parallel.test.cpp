// SPDX-License-Identifier: MIT
// Tests for core/parallel.hpp. Every test restores the thread count it found.
#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace st = strata;

namespace {

// Restores the library's thread count when a test ends, even on failure.
struct ThreadCountGuard {
  int saved = st::num_threads();
  ~ThreadCountGuard() { st::set_num_threads(saved); }
};

// Runs parallel_for and counts how many times each index was visited.
std::vector<int> visit_counts(int64_t begin, int64_t end, int64_t grain, int64_t* pieces) {
  const int64_t n = end > begin ? end - begin : 0;
  std::vector<std::atomic<int>> counts(static_cast<std::size_t>(n));
  std::atomic<int64_t> calls{0}, bad{0};
  st::detail::parallel_for(begin, end, grain, [&](int64_t lo, int64_t hi) {
    ++calls;
    if (lo >= hi || lo < begin || hi > end) {
      ++bad;
      return;
    }
    for (int64_t i = lo; i < hi; ++i) counts[static_cast<std::size_t>(i - begin)]++;
  });
  REQUIRE(bad.load() == 0);
  if (pieces) *pieces = calls;
  std::vector<int> out;
  for (auto& c : counts) out.push_back(c.load());
  return out;
}

}  // namespace

TEST_CASE("parallel_for covers [begin, end) exactly once", "[core][threads]") {
  ThreadCountGuard guard;
  SECTION("many sizes, grains, offsets and thread counts") {
    for (int threads : {1, 2, 3, 4}) {
      st::set_num_threads(threads);
      REQUIRE(st::num_threads() == threads);
      for (int64_t begin : {int64_t{0}, int64_t{5}, int64_t{-17}}) {
        for (int64_t size : {0, 1, 2, 3, 7, 64, 100, 1000, 10007}) {
          for (int64_t grain : {1, 2, 16, 1000, 100000}) {
            INFO("threads " << threads << " begin " << begin << " size " << size << " grain "
                            << grain);
            int64_t pieces = 0;
            const auto counts = visit_counts(begin, begin + size, grain, &pieces);
            int64_t once = 0;
            for (int c : counts) once += c == 1;
            REQUIRE(once == size);
            // One piece on one thread; else at most kPiecesPerThread per thread, each of a grain
            // or more.
            REQUIRE(pieces <= (threads == 1 ? 1 : threads * st::detail::kPiecesPerThread));
            REQUIRE(pieces <= std::max<int64_t>(1, (size + grain - 1) / grain));
            if (size == 0) REQUIRE(pieces == 0);
            if (size > 0 && size <= grain) REQUIRE(pieces == 1);  // small ranges run inline
          }
        }
      }
    }
  }
  SECTION("an empty or reversed range calls nothing") {
    int calls = 0;
    st::detail::parallel_for(10, 10, 1, [&](int64_t, int64_t) { ++calls; });
    st::detail::parallel_for(10, 3, 1, [&](int64_t, int64_t) { ++calls; });
    REQUIRE(calls == 0);
  }
  SECTION("grain 0 and negative grains are treated as 1") {
    st::set_num_threads(2);
    for (int64_t grain : {0, -5}) {
      const auto counts = visit_counts(0, 100, grain, nullptr);
      for (int c : counts) REQUIRE(c == 1);
    }
  }
}

TEST_CASE("parallel_for takes any callable, a move-only one too, by reference", "[core][threads]") {
  ThreadCountGuard guard;
  st::set_num_threads(2);
  // The callable is never copied (a std::function would need a copyable one):
  // one holding a unique_ptr runs a small range inline on the calling thread
  // and a large one in pieces, and its state is the caller's.
  struct Body {
    std::unique_ptr<std::atomic<int64_t>> total;
    std::atomic<int>* off_thread;
    std::thread::id caller;
    void operator()(int64_t lo, int64_t hi) {
      *total += hi - lo;
      if (std::this_thread::get_id() != caller) ++*off_thread;
    }
  };
  for (const int64_t n : {int64_t{5}, int64_t{100000}}) {
    std::atomic<int> off_thread{0};
    Body body{std::make_unique<std::atomic<int64_t>>(0), &off_thread, std::this_thread::get_id()};
    st::detail::parallel_for(0, n, 1000, body);
    INFO("n " << n);
    REQUIRE(body.total->load() == n);  // the caller's object ran: nothing was copied
    if (n <= 1000) REQUIRE(off_thread.load() == 0);
  }
}

TEST_CASE("parallel_for results do not depend on the thread count", "[core][threads]") {
  ThreadCountGuard guard;
  constexpr int64_t n = 20000;
  auto compute = [&](int threads) {
    st::set_num_threads(threads);
    std::vector<double> out(n);
    st::detail::parallel_for(0, n, 64, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[i] = std::sin(0.001 * double(i)) * double(i % 7);
    });
    return out;
  };
  const std::vector<double> one = compute(1), two = compute(2), four = compute(4);
  REQUIRE(one == two);
  REQUIRE(one == four);
  // And they equal a plain loop.
  for (int64_t i = 0; i < n; i += 997)
    REQUIRE(one[i] == std::sin(0.001 * double(i)) * double(i % 7));
}

TEST_CASE("parallel_for rethrows an exception from a piece", "[core][threads]") {
  ThreadCountGuard guard;
  const std::vector<int> thread_counts = {1, 2, 4};
  SECTION("std::runtime_error from the piece holding one index") {
    auto body = [](int64_t lo, int64_t hi) {
      if (lo <= 777 && 777 < hi) throw std::runtime_error("boom at 777");
    };
    for (int threads : thread_counts) {
      st::set_num_threads(threads);
      INFO("threads " << threads);
      REQUIRE_THROWS_AS(st::detail::parallel_for(0, 1000, 10, body), std::runtime_error);
      REQUIRE_THROWS_WITH(st::detail::parallel_for(0, 1000, 10, body), "boom at 777");
    }
  }
  SECTION("the exception type is preserved") {
    auto body = [](int64_t lo, int64_t) {
      if (lo == 0) throw st::ValueError("first piece");
    };
    for (int threads : thread_counts) {
      st::set_num_threads(threads);
      INFO("threads " << threads);
      REQUIRE_THROWS_AS(st::detail::parallel_for(0, 1000, 1, body), st::ValueError);
    }
  }
  SECTION("every piece throws") {
    auto body = [](int64_t, int64_t) { throw std::logic_error("x"); };
    for (int threads : thread_counts) {
      st::set_num_threads(threads);
      INFO("threads " << threads);
      REQUIRE_THROWS_AS(st::detail::parallel_for(0, 1000, 1, body), std::logic_error);
    }
  }
  SECTION("a range below the grain throws inline") {
    auto body = [](int64_t, int64_t) { throw std::out_of_range("small"); };
    st::set_num_threads(4);
    REQUIRE_THROWS_AS(st::detail::parallel_for(0, 5, 100, body), std::out_of_range);
  }
  SECTION("the pool still works after a throw") {
    for (int threads : thread_counts) {
      st::set_num_threads(threads);
      INFO("threads " << threads);
      REQUIRE_THROWS(st::detail::parallel_for(0, 1000, 1, [](int64_t, int64_t hi) {
        if (hi == 1000) throw std::runtime_error("last piece");
      }));
      const auto counts = visit_counts(0, 5000, 1, nullptr);
      for (int c : counts) REQUIRE(c == 1);
    }
  }
}

TEST_CASE("nested parallel_for runs every inner index once", "[core][threads]") {
  ThreadCountGuard guard;
  for (int threads : {1, 2, 4}) {
    st::set_num_threads(threads);
    constexpr int64_t outer = 16, inner = 200;
    std::vector<std::atomic<int>> counts(outer * inner);
    st::detail::parallel_for(0, outer, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        st::detail::parallel_for(0, inner, 1, [&](int64_t jlo, int64_t jhi) {
          for (int64_t j = jlo; j < jhi; ++j) counts[i * inner + j]++;
        });
      }
    });
    int once = 0;
    for (auto& c : counts) once += c.load() == 1;
    INFO("threads " << threads);
    REQUIRE(once == outer * inner);
  }
}

TEST_CASE("parallel_for from several user threads at once", "[core][threads]") {
  ThreadCountGuard guard;
  st::set_num_threads(3);
  std::vector<std::thread> users;
  std::atomic<int> wrong{0};
  for (int u = 0; u < 3; ++u) {
    users.emplace_back([&, u] {
      for (int rep = 0; rep < 20; ++rep) {
        const int64_t n = 500 + 37 * u + rep;
        std::vector<std::atomic<int>> counts(static_cast<std::size_t>(n));
        st::detail::parallel_for(0, n, 8, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) counts[i]++;
        });
        for (auto& c : counts) wrong += c.load() != 1;
      }
    });
  }
  for (auto& t : users) t.join();
  REQUIRE(wrong.load() == 0);
}

TEST_CASE("set_num_threads validates its argument", "[core][threads]") {
  ThreadCountGuard guard;
  REQUIRE_THROWS_AS(st::set_num_threads(0), st::ValueError);
  REQUIRE_THROWS_WITH(st::set_num_threads(-3),
                      Catch::Contains("set_num_threads") && Catch::Contains("-3"));
  REQUIRE(st::num_threads() == guard.saved);  // a rejected call changes nothing
  st::set_num_threads(1);
  REQUIRE(st::num_threads() == 1);
}
