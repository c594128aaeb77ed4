// SPDX-License-Identifier: MIT
// Tests for core/allocator.hpp and core/storage.hpp. The CPU allocator is
// process-wide and shared with every other test in this executable, so these
// tests compare deltas of its counters, never absolute values.
#include "core/allocator.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/storage.hpp"
#include "support/sanitizers.hpp"

namespace st = strata;

namespace {
bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }
}  // namespace

TEST_CASE("CachingAllocator::size_class", "[core]") {
  using A = st::CachingAllocator;
  SECTION("hand-computed classes (quarters of the enclosing power of two, at least 64)") {
    REQUIRE(A::size_class(1) == 64);
    REQUIRE(A::size_class(64) == 64);
    REQUIRE(A::size_class(65) == 128);
    REQUIRE(A::size_class(200) == 256);
    REQUIRE(A::size_class(256) == 256);
    REQUIRE(A::size_class(257) == 320);    // 256 + 64
    REQUIRE(A::size_class(1000) == 1024);  // steps of 128 in [512, 1024)
    REQUIRE(A::size_class(1025) == 1280);  // steps of 256 in [1024, 2048)
    REQUIRE(A::size_class(5000) == 5120);  // steps of 1024 in [4096, 8192)
    REQUIRE(A::size_class(6000) == 6144);
    REQUIRE(A::size_class(12345) == 14336);  // steps of 2048 in [8192, 16384)
    REQUIRE(A::size_class(std::size_t{1} << 20) == (std::size_t{1} << 20));
    REQUIRE(A::size_class((std::size_t{1} << 20) + 1) == 1310720);
  }
  SECTION("properties over many sizes") {
    std::size_t prev = 0;
    for (std::size_t bytes = 1; bytes <= (std::size_t{1} << 22); bytes += 1 + bytes / 97) {
      const std::size_t cls = A::size_class(bytes);
      INFO("bytes " << bytes << " class " << cls);
      REQUIRE(cls >= bytes);
      REQUIRE(cls % 64 == 0);
      // At most 25% waste, except that nothing is finer than 64 bytes.
      if (bytes >= 256) {
        REQUIRE(cls - bytes <= bytes / 4);
      } else {
        REQUIRE(cls - bytes < 64);
      }
      REQUIRE(cls >= prev);                // monotone
      REQUIRE(A::size_class(cls) == cls);  // a class is its own class
      prev = cls;
    }
  }
}

TEST_CASE("cpu_allocator reuses freed blocks", "[core]") {
  st::CachingAllocator& a = st::cpu_allocator();
  REQUIRE(a.device() == st::Device::cpu());
  REQUIRE(st::to_string(a.device()) == "cpu");
  REQUIRE(st::to_string(st::Device::cuda(1)) == "cuda:1");

  SECTION("the second allocation of a size comes from the cache") {
    const std::size_t bytes = 12345, cls = 14336;  // class computed by hand above
    void* p1 = a.allocate(bytes);
    REQUIRE(p1 != nullptr);
    const st::AllocatorStats s0 = a.stats();
    a.deallocate(p1, bytes);
    const st::AllocatorStats s1 = a.stats();
    REQUIRE(s1.bytes_cached == s0.bytes_cached + cls);
    REQUIRE(s1.bytes_in_use == s0.bytes_in_use - cls);

    void* p2 = a.allocate(bytes);
    const st::AllocatorStats s2 = a.stats();
    REQUIRE(s2.from_cache == s1.from_cache + 1);
    REQUIRE(s2.from_system == s1.from_system);
    REQUIRE(s2.bytes_cached == s1.bytes_cached - cls);
    REQUIRE(s2.bytes_in_use == s1.bytes_in_use + cls);
    REQUIRE(p2 == p1);  // the block just freed is the one handed out again

    // A different request of the same class shares the block too.
    a.deallocate(p2, bytes);
    const st::AllocatorStats s3 = a.stats();
    void* p3 = a.allocate(14000);
    const st::AllocatorStats s4 = a.stats();
    REQUIRE(s4.from_cache == s3.from_cache + 1);
    REQUIRE(s4.from_system == s3.from_system);
    REQUIRE(p3 == p1);
    a.deallocate(p3, 14000);
  }
  SECTION("allocating and freeing the same size twice") {
    a.empty_cache();
    REQUIRE(a.stats().bytes_cached == 0);
    const std::size_t bytes = 3 << 20;
    const st::AllocatorStats s0 = a.stats();
    void* p = a.allocate(bytes);
    a.deallocate(p, bytes);
    const st::AllocatorStats s1 = a.stats();
    REQUIRE(s1.from_system == s0.from_system + 1);  // the cache was empty
    REQUIRE(s1.from_cache == s0.from_cache);
    p = a.allocate(bytes);
    a.deallocate(p, bytes);
    const st::AllocatorStats s2 = a.stats();
    REQUIRE(s2.from_cache == s1.from_cache + 1);
    REQUIRE(s2.from_system == s1.from_system);
  }
  SECTION("an impossible request throws instead of returning a small block") {
#if STRATA_TEST_UNDER_ASAN
    // AddressSanitizer aborts on (rather than fails) allocations this large.
    SUCCEED("skipped under AddressSanitizer");
#else
    for (std::size_t bytes :
         {std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max() - 100,
          std::size_t{0xF} << 60, std::size_t{1} << 63}) {
      INFO("bytes " << bytes);
      void* p = nullptr;
      CHECK_THROWS_AS(p = a.allocate(bytes), st::Error);
      if (p) a.deallocate(p, bytes);
    }
#endif
  }
  SECTION("zero bytes") {
    const st::AllocatorStats s0 = a.stats();
    REQUIRE(a.allocate(0) == nullptr);
    a.deallocate(nullptr, 0);
    const st::AllocatorStats s1 = a.stats();
    REQUIRE(s1.from_cache == s0.from_cache);
    REQUIRE(s1.from_system == s0.from_system);
    REQUIRE(s1.bytes_in_use == s0.bytes_in_use);
  }
}

TEST_CASE("cpu_allocator tracks the peak of the bytes in use since reset_peak", "[core]") {
  st::CachingAllocator& a = st::cpu_allocator();
  const std::size_t c1 = st::CachingAllocator::size_class(100000);
  const std::size_t c2 = st::CachingAllocator::size_class(300000);
  a.reset_peak();
  const std::size_t base = a.stats().bytes_in_use;
  REQUIRE(a.stats().peak_bytes_in_use == base);
  void* p1 = a.allocate(100000);
  void* p2 = a.allocate(300000);
  a.deallocate(p1, 100000);
  void* p3 = a.allocate(100000);  // back from the cache: in use again, peak unchanged
  a.deallocate(p3, 100000);
  a.deallocate(p2, 300000);
  const st::AllocatorStats s = a.stats();
  CHECK(s.bytes_in_use == base);
  CHECK(s.peak_bytes_in_use == base + c1 + c2);
  a.reset_peak();
  CHECK(a.stats().peak_bytes_in_use == base);
}

TEST_CASE("cpu_allocator blocks are 64-byte aligned and fully usable", "[core]") {
  st::CachingAllocator& a = st::cpu_allocator();
  std::vector<std::pair<void*, std::size_t>> live;
  for (std::size_t bytes :
       {1u, 3u, 8u, 63u, 64u, 65u, 100u, 127u, 255u, 257u, 1000u, 4095u, 4097u, 65537u, 1000003u}) {
    for (int rep = 0; rep < 3; ++rep) {
      void* p = a.allocate(bytes);
      INFO("bytes " << bytes);
      REQUIRE(p != nullptr);
      REQUIRE(aligned64(p));
      std::memset(p, 0xAB, bytes);  // under ASan: the whole request is addressable
      live.emplace_back(p, bytes);
    }
  }
  // Distinct live blocks never overlap.
  for (std::size_t i = 0; i < live.size(); ++i) {
    for (std::size_t j = i + 1; j < live.size(); ++j) {
      const auto* a0 = static_cast<const char*>(live[i].first);
      const auto* b0 = static_cast<const char*>(live[j].first);
      REQUIRE((a0 + live[i].second <= b0 || b0 + live[j].second <= a0));
    }
  }
  for (auto [p, bytes] : live) a.deallocate(p, bytes);
}

TEST_CASE("host_allocate: 2 MiB-aligned huge-page blocks from 2 MiB up, 64-byte below", "[core]") {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{63}, std::size_t{65}, std::size_t{100000},
                            kHuge - 1, kHuge, kHuge + 1, 5 * kHuge + 3}) {
    INFO("bytes " << bytes);
    void* p = st::detail::host_allocate(bytes);
    REQUIRE(p != nullptr);
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    CHECK(addr % (bytes >= kHuge ? kHuge : 64) == 0);
    std::memset(p, 0x5A, bytes);  // under ASan: the whole request is addressable
    CHECK(static_cast<unsigned char*>(p)[bytes - 1] == 0x5A);
    std::free(p);
  }
}

TEST_CASE("Storage", "[core][threads]") {
  st::CachingAllocator& a = st::cpu_allocator();
  SECTION("version starts at 0 and bump_version increments") {
    auto s = st::make_storage(a, 1000);
    REQUIRE(s->version() == 0);
    s->bump_version();
    REQUIRE(s->version() == 1);
    s->bump_version();
    s->bump_version();
    REQUIRE(s->version() == 3);
  }
  SECTION("bumps from several threads are all counted") {
    auto s = st::make_storage(a, 64);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) s->bump_version();
      });
    }
    for (auto& t : threads) t.join();
    REQUIRE(s->version() == 4000);
  }
  SECTION("buffer properties") {
    auto s = st::make_storage(a, 1000);
    REQUIRE(s->bytes() == 1000);
    REQUIRE(s->device() == st::Device::cpu());
    REQUIRE(s->data() != nullptr);
    REQUIRE(aligned64(s->data()));
    std::memset(s->data(), 0, s->bytes());
  }
  SECTION("freeing a storage returns its block to the cache") {
    const std::size_t bytes = 1000, cls = 1024;  // class computed by hand
    auto s = st::make_storage(a, bytes);
    void* data = s->data();
    auto view = s;  // a second view shares the buffer
    const st::AllocatorStats s0 = a.stats();
    s.reset();
    REQUIRE(a.stats().bytes_cached == s0.bytes_cached);  // still referenced
    view.reset();
    const st::AllocatorStats s1 = a.stats();
    REQUIRE(s1.bytes_cached == s0.bytes_cached + cls);
    REQUIRE(s1.bytes_in_use == s0.bytes_in_use - cls);
    // The next storage of that size reuses the block.
    auto again = st::make_storage(a, bytes);
    const st::AllocatorStats s2 = a.stats();
    REQUIRE(s2.from_cache == s1.from_cache + 1);
    REQUIRE(s2.from_system == s1.from_system);
    REQUIRE(again->data() == data);
    REQUIRE(again->version() == 0);  // a new storage, whatever block it got
  }
}

namespace {

// Constructed before main, so before the CPU allocator's first use: destroyed
// after it at exit. A test below stores a block here; if the allocator were
// destroyed first, freeing the block at exit would use its freed free lists
// (a crash, or a heap-use-after-free report under AddressSanitizer).
std::shared_ptr<st::Storage> g_outlives_main;

// An allocator over malloc that records which blocks went back to the system,
// so eviction can be watched without the process-wide CPU allocator.
class RecordingAllocator final : public st::CachingAllocator {
 public:
  ~RecordingAllocator() override { empty_cache(); }
  st::Device device() const override { return st::Device::cpu(); }
  std::vector<void*> freed;                // system_free calls, in order
  std::map<void*, std::size_t> allocated;  // system_allocate's live blocks and their sizes
  std::vector<std::string> mismatches;     // system_free calls whose size was not the block's

 protected:
  void* system_allocate(std::size_t bytes) override {
    void* p = std::aligned_alloc(64, bytes);
    allocated[p] = bytes;
    return p;
  }
  void system_free(void* ptr, std::size_t bytes) override {
    freed.push_back(ptr);
    if (allocated[ptr] != bytes) {
      mismatches.push_back(std::to_string(bytes) + " for a block of " +
                           std::to_string(allocated[ptr]));
    }
    allocated.erase(ptr);
    std::free(ptr);
  }
};

}  // namespace

TEST_CASE("CachingAllocator evicts the least recently freed blocks past its limit", "[core]") {
  RecordingAllocator a;
  REQUIRE(a.cache_limit() == (std::size_t{4} << 30));  // the documented default
  constexpr std::size_t kBlock = 4096;                 // its own size class
  REQUIRE(st::CachingAllocator::size_class(kBlock) == kBlock);
  a.set_cache_limit(3 * kBlock);
  REQUIRE(a.cache_limit() == 3 * kBlock);

  SECTION("the oldest free is the one given back, and the newest is reused") {
    std::vector<void*> p;
    for (int i = 0; i < 4; ++i) p.push_back(a.allocate(kBlock));
    for (int i = 0; i < 3; ++i) a.deallocate(p[i], kBlock);
    REQUIRE(a.stats().bytes_cached == 3 * kBlock);
    REQUIRE(a.freed.empty());
    a.deallocate(p[3], kBlock);  // over the limit: p[0], freed first, goes
    REQUIRE(a.freed == std::vector<void*>{p[0]});
    REQUIRE(a.stats().bytes_cached == 3 * kBlock);
    const st::AllocatorStats s0 = a.stats();
    void* again = a.allocate(kBlock);
    REQUIRE(again == p[3]);  // the most recently freed block of the class
    REQUIRE(a.stats().from_cache == s0.from_cache + 1);
    REQUIRE(a.stats().bytes_cached == 2 * kBlock);
    a.deallocate(again, kBlock);
    REQUIRE(a.freed.size() == 1);  // back under the limit: nothing more given back
  }
  SECTION("eviction crosses size classes in free order") {
    constexpr std::size_t kSmall = 1024, kBig = 2 * kBlock;
    void* small1 = a.allocate(kSmall);
    void* big = a.allocate(kBig);
    void* small2 = a.allocate(kSmall);
    void* mid = a.allocate(kBlock);
    a.deallocate(small1, kSmall);  // oldest
    a.deallocate(big, kBig);
    a.deallocate(small2, kSmall);
    REQUIRE(a.stats().bytes_cached == 2 * kSmall + kBig);
    REQUIRE(a.freed.empty());
    // 2 KiB + 8 KiB + 4 KiB > 12 KiB: dropping small1 (1 KiB) is not enough,
    // so big goes too; small2, freed after both, stays.
    a.deallocate(mid, kBlock);
    REQUIRE(a.freed == std::vector<void*>{small1, big});
    REQUIRE(a.stats().bytes_cached == kSmall + kBlock);
    // The survivors are still served from the cache.
    const st::AllocatorStats s0 = a.stats();
    REQUIRE(a.allocate(kSmall) == small2);
    REQUIRE(a.allocate(kBlock) == mid);
    REQUIRE(a.stats().from_cache == s0.from_cache + 2);
    REQUIRE(a.stats().bytes_cached == 0);
    a.deallocate(small2, kSmall);
    a.deallocate(mid, kBlock);
  }
  SECTION("a block larger than the limit goes straight back, keeping the cache") {
    void* kept = a.allocate(kBlock);
    void* huge = a.allocate(4 * kBlock);
    a.deallocate(kept, kBlock);
    a.deallocate(huge, 4 * kBlock);
    REQUIRE(a.freed == std::vector<void*>{huge});
    REQUIRE(a.stats().bytes_cached == kBlock);
    REQUIRE(a.allocate(kBlock) == kept);
    a.deallocate(kept, kBlock);
  }
  SECTION("lowering the limit evicts at once, oldest first") {
    std::vector<void*> p;
    for (int i = 0; i < 3; ++i) p.push_back(a.allocate(kBlock));
    for (void* q : p) a.deallocate(q, kBlock);
    a.set_cache_limit(kBlock);
    REQUIRE(a.freed == std::vector<void*>{p[0], p[1]});
    REQUIRE(a.stats().bytes_cached == kBlock);
    a.set_cache_limit(0);
    REQUIRE(a.freed == std::vector<void*>{p[0], p[1], p[2]});
    REQUIRE(a.stats().bytes_cached == 0);
    // With no room at all, every free goes to the system.
    void* q = a.allocate(kBlock);
    a.deallocate(q, kBlock);
    REQUIRE(a.freed.back() == q);
    REQUIRE(a.stats().bytes_cached == 0);
  }
  SECTION("blocks go back to the system with their own size, from every kind of class") {
    // Sizes whose classes are the minimum, 64-byte steps, quarters of small and large
    // powers of two, and exact powers of two; evicted in free order.
    a.set_cache_limit(std::size_t{1} << 30);
    std::mt19937_64 rng(12);
    std::vector<std::size_t> sizes = {1, 64, 65, 200, 257, 1000, 4097, 5000, 123457, 1u << 20};
    for (int i = 0; i < 40; ++i) sizes.push_back(1 + rng() % (std::size_t{8} << 20));
    std::vector<void*> p;
    for (const std::size_t n : sizes) p.push_back(a.allocate(n));
    for (std::size_t i = 0; i < p.size(); ++i) a.deallocate(p[i], sizes[i]);
    a.set_cache_limit(0);
    CHECK(a.freed == p);
    CHECK(a.mismatches.empty());
    CHECK(a.allocated.empty());
  }
  SECTION("a steady loop over a full cache keeps reusing its blocks") {
    // The regression: with the cache full of old blocks, later frees used to
    // go to the system, so every iteration allocated afresh.
    void* old = a.allocate(3 * kBlock);
    a.deallocate(old, 3 * kBlock);  // fills the cache to the limit
    REQUIRE(a.stats().bytes_cached == 3 * kBlock);
    const st::AllocatorStats s0 = a.stats();
    for (int step = 0; step < 10; ++step) {
      void* q = a.allocate(kBlock);
      a.deallocate(q, kBlock);
    }
    const st::AllocatorStats s1 = a.stats();
    REQUIRE(s1.from_system == s0.from_system + 1);  // only the first step
    REQUIRE(s1.from_cache == s0.from_cache + 9);
    REQUIRE(a.freed == std::vector<void*>{old});  // the cold block made room
  }
}

TEST_CASE("cpu_allocator honours a lowered cache limit", "[core]") {
  st::CachingAllocator& a = st::cpu_allocator();
  const std::size_t saved = a.cache_limit();
  a.empty_cache();
  a.set_cache_limit(std::size_t{1} << 20);
  std::vector<void*> p;
  for (int i = 0; i < 3; ++i) p.push_back(a.allocate(std::size_t{512} << 10));
  for (void* q : p) a.deallocate(q, std::size_t{512} << 10);
  REQUIRE(a.stats().bytes_cached == (std::size_t{1} << 20));  // two of three kept
  // The newest two are cached; the next request gets the most recent one.
  void* again = a.allocate(std::size_t{512} << 10);
  REQUIRE(again == p[2]);
  a.deallocate(again, std::size_t{512} << 10);
  a.set_cache_limit(saved);
  a.empty_cache();
  REQUIRE(a.cache_limit() == saved);
}

TEST_CASE("cpu_allocator outlives storages in static storage", "[core]") {
  g_outlives_main = st::make_storage(st::cpu_allocator(), 4096);
  std::memset(g_outlives_main->data(), 1, 4096);
  REQUIRE(g_outlives_main->device() == st::Device::cpu());
  // Checked when the process exits: g_outlives_main frees its block then.
}
