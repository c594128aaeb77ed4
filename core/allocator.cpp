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

std::size_t CachingAllocator::class_index(std::size_t cls) {
  const int e = std::bit_width(cls) - 1;
  const std::size_t pow2 = std::size_t{1} << e;
  const std::size_t step = std::max<std::size_t>(pow2 / 4, 64);
  return std::size_t(e) * 4 + (cls - pow2) / step;
}

std::size_t CachingAllocator::class_of_index(std::size_t i) {
  const std::size_t pow2 = std::size_t{1} << (i / 4);
  return pow2 + (i % 4) * std::max<std::size_t>(pow2 / 4, 64);
}

void* CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t cls = size_class(bytes);
  {
    std::lock_guard lock(mutex_);
    FreeList& list = free_[class_index(cls)];
    if (!list.empty()) {
      // The most recently freed block of the class: the likeliest still in cache.
      void* p = list.blocks.back().ptr;
      list.blocks.pop_back();
      if (list.empty()) list.blocks.clear(), list.head = 0;
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
  std::vector<std::pair<void*, std::size_t>> evicted;
  {
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use -= cls;
    if (cls > cache_limit_) {
      evicted.emplace_back(ptr, cls);  // could never be cached: keep the others
    } else {
      free_[class_index(cls)].blocks.push_back({ptr, frees_++});
      stats_.bytes_cached += cls;
      if (stats_.bytes_cached > cache_limit_) evicted = evict_locked();
    }
  }
  for (const auto& [p, c] : evicted) system_free(p, c);
}

std::vector<std::pair<void*, std::size_t>> CachingAllocator::evict_locked() {
  std::vector<std::pair<void*, std::size_t>> evicted;
  while (stats_.bytes_cached > cache_limit_) {
    // The globally coldest block is the coldest of some class: the oldest of the fronts.
    FreeList* coldest = nullptr;
    std::size_t index = 0;
    for (std::size_t i = 0; i < kClasses; ++i) {
      FreeList& list = free_[i];
      if (list.empty()) continue;
      if (!coldest || list.blocks[list.head].freed_at < coldest->blocks[coldest->head].freed_at) {
        coldest = &list, index = i;
      }
    }
    const std::size_t cls = class_of_index(index);
    evicted.emplace_back(coldest->blocks[coldest->head++].ptr, cls);
    if (coldest->empty()) {
      coldest->blocks.clear(), coldest->head = 0;
    } else if (coldest->head * 2 > coldest->blocks.size()) {
      // Drop the evicted prefix once it is most of the list.
      coldest->blocks.erase(coldest->blocks.begin(),
                            coldest->blocks.begin() + std::ptrdiff_t(coldest->head));
      coldest->head = 0;
    }
    stats_.bytes_cached -= cls;
  }
  return evicted;
}

void CachingAllocator::empty_cache() {
  std::vector<std::pair<void*, std::size_t>> blocks;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < kClasses; ++i) {
      FreeList& list = free_[i];
      for (std::size_t k = list.head; k < list.blocks.size(); ++k) {
        blocks.emplace_back(list.blocks[k].ptr, class_of_index(i));
      }
      list.blocks.clear(), list.head = 0;
    }
    stats_.bytes_cached = 0;
  }
  for (const auto& [p, c] : blocks) system_free(p, c);
}

void CachingAllocator::set_cache_limit(std::size_t bytes) {
  std::vector<std::pair<void*, std::size_t>> evicted;
  {
    std::lock_guard lock(mutex_);
    cache_limit_ = bytes;
    evicted = evict_locked();
  }
  for (const auto& [p, c] : evicted) system_free(p, c);
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

void* detail::host_allocate(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < kHuge) return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
#if defined(MADV_HUGEPAGE)
  if (p) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

namespace {

class CpuAllocator final : public CachingAllocator {
 public:
  Device device() const override { return Device::cpu(); }

 protected:
  void* system_allocate(std::size_t bytes) override {
    // Size classes are multiples of 64, as aligned_alloc requires. Large
    // blocks on huge pages: one page fault per 2 MiB instead of per 4 KiB on
    // first touch, and strided (transposed) walks stop missing the TLB.
    return detail::host_allocate(bytes);
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
