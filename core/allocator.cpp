// SPDX-License-Identifier: MIT
#include "core/allocator.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/error.hpp"

namespace strata {

std::size_t CachingAllocator::size_class(std::size_t bytes) {
  constexpr std::size_t kMin = 64, kMax = std::size_t{1} << 62;
  if (bytes <= kMin) return kMin;
  if (bytes > kMax) {
    detail::fail<ValueError>("allocate", "request of ", bytes, " bytes is larger than any memory");
  }
  // Round up to the next multiple of a quarter of the enclosing power of two:
  // at most 25% waste, and few distinct classes.
  const std::size_t pow2 = std::bit_floor(bytes);
  const std::size_t step = std::max<std::size_t>(pow2 / 4, kMin);
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t cls = size_class(bytes);
  {
    std::lock_guard lock(mutex_);
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      // The most recently freed block of the class: the likeliest still in cache.
      const Lru::iterator block = it->second.back();
      it->second.pop_back();
      void* p = block->ptr;
      lru_.erase(block);
      stats_.from_cache++;
      stats_.bytes_cached -= cls;
      stats_.bytes_in_use += cls;
      stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      return p;
    }
  }
  void* p = system_allocate(cls);
  if (!p) {
    // Free what we hold and try once more before giving up.
    empty_cache();
    p = system_allocate(cls);
  }
  if (!p) {
    detail::fail<ValueError>("allocate", "out of memory on ", to_string(device()), " allocating ",
                             bytes, " bytes");
  }
  std::lock_guard lock(mutex_);
  stats_.from_system++;
  stats_.bytes_in_use += cls;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return p;
}

void CachingAllocator::deallocate(void* ptr, std::size_t bytes) {
  if (!ptr) return;
  const std::size_t cls = size_class(bytes);
  Lru evicted;
  {
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use -= cls;
    if (cls > cache_limit_) {
      evicted.push_back({ptr, cls});  // could never be cached: keep the others
    } else {
      free_[cls].push_back(lru_.insert(lru_.end(), Block{ptr, cls}));
      stats_.bytes_cached += cls;
      evicted = evict_locked();
    }
  }
  for (const Block& b : evicted) system_free(b.ptr, b.cls);
}

CachingAllocator::Lru CachingAllocator::evict_locked() {
  Lru evicted;
  while (stats_.bytes_cached > cache_limit_) {
    const Block oldest = lru_.front();
    // The globally coldest block is also the coldest of its class.
    auto it = free_.find(oldest.cls);
    it->second.pop_front();
    if (it->second.empty()) free_.erase(it);
    evicted.splice(evicted.end(), lru_, lru_.begin());
    stats_.bytes_cached -= oldest.cls;
  }
  return evicted;
}

void CachingAllocator::empty_cache() {
  Lru blocks;
  {
    std::lock_guard lock(mutex_);
    blocks.swap(lru_);
    free_.clear();
    stats_.bytes_cached = 0;
  }
  for (const Block& b : blocks) system_free(b.ptr, b.cls);
}

void CachingAllocator::set_cache_limit(std::size_t bytes) {
  Lru evicted;
  {
    std::lock_guard lock(mutex_);
    cache_limit_ = bytes;
    evicted = evict_locked();
  }
  for (const Block& b : evicted) system_free(b.ptr, b.cls);
}

std::size_t CachingAllocator::cache_limit() const {
  std::lock_guard lock(mutex_);
  return cache_limit_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard lock(mutex_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

namespace {

class CpuAllocator final : public CachingAllocator {
 public:
  Device device() const override { return Device::cpu(); }

 protected:
  void* system_allocate(std::size_t bytes) override {
    // Size classes are multiples of 64, as aligned_alloc requires. Large
    // blocks are aligned to 2 MiB and asked to be backed by huge pages: one
    // page fault per 2 MiB instead of per 4 KiB on first touch, and strided
    // (transposed) walks stop missing the TLB.
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    if (bytes < kHuge) return std::aligned_alloc(64, bytes);
    void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
#if defined(MADV_HUGEPAGE)
    if (p) madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
  }
  void system_free(void* ptr, std::size_t) override { std::free(ptr); }
};

}  // namespace

CachingAllocator& cpu_allocator() {
  // Never destroyed: a tensor in static storage (constructed before the
  // allocator's first use) is destroyed after it at exit, and would free its
  // block into a dead allocator.
  static CpuAllocator* const instance = new CpuAllocator;
  return *instance;
}

}  // namespace strata
