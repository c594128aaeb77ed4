// SPDX-License-Identifier: MIT
#pragma once
/// Caching allocators (reference/002): freed blocks go back to a free list of
/// their size class and serve the next request of that class, so a steady
/// training loop stops calling the system allocator after its first step.
/// When the cached bytes pass a limit, the least recently freed blocks are
/// given back to the system first.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <unordered_map>

#include "core/device.hpp"

namespace strata {

/// What an allocator has done so far; tests read it to see reuse.
struct AllocatorStats {
  uint64_t from_cache = 0;            ///< requests served from a free list
  uint64_t from_system = 0;           ///< requests that went to the system allocator
  std::size_t bytes_in_use = 0;       ///< bytes handed out and not yet returned
  std::size_t peak_bytes_in_use = 0;  ///< the most bytes_in_use has been since reset_peak()
  std::size_t bytes_cached = 0;       ///< held in free lists, not in use
};

/// A caching allocator for one device. Subclasses supply the system calls.
class CachingAllocator {
 public:
  virtual ~CachingAllocator() = default;
  /// A block of at least `bytes` bytes, 64-byte aligned; nullptr for 0 bytes.
  void* allocate(std::size_t bytes);
  /// Returns a block from allocate(bytes) to its free list.
  void deallocate(void* ptr, std::size_t bytes);
  /// Gives every cached block back to the system.
  void empty_cache();
  /// Sets the most bytes the free lists may hold (default 4 GiB); past it, the
  /// least recently freed blocks go back to the system, at once and on later frees.
  void set_cache_limit(std::size_t bytes);
  /// The current limit on cached bytes.
  std::size_t cache_limit() const;
  /// Starts a new peak: peak_bytes_in_use becomes the bytes in use now.
  void reset_peak();
  /// A snapshot of the counters (thread-safe).
  AllocatorStats stats() const;
  /// The size class a request of `bytes` is rounded up to (steps of 1/4 of a power of two).
  static std::size_t size_class(std::size_t bytes);

  /// The device whose memory this allocator hands out.
  virtual Device device() const = 0;

 protected:
  /// The system allocation (aligned_alloc, cudaMalloc, ...); throws on failure.
  virtual void* system_allocate(std::size_t bytes) = 0;
  /// Returns a block from system_allocate to the system.
  virtual void system_free(void* ptr, std::size_t bytes) = 0;

 private:
  /// A cached block: its pointer and size class.
  struct Block {
    void* ptr;
    std::size_t cls;
  };
  using Lru = std::list<Block>;
  /// Removes the least recently freed blocks until the cache fits the limit;
  /// the caller frees the returned blocks after releasing the lock.
  Lru evict_locked();

  mutable std::mutex mutex_;
  std::size_t cache_limit_ = std::size_t{4} << 30;
  Lru lru_;  ///< every cached block, least recently freed first
  /// Per size class, its cached blocks in lru_, least recently freed first:
  /// allocate takes the back (warmest), eviction the front (coldest).
  std::unordered_map<std::size_t, std::deque<Lru::iterator>> free_;
  AllocatorStats stats_;
};

/// The process-wide CPU allocator (aligned_alloc underneath); it lives until
/// the process ends, so tensors in static storage may outlive main.
CachingAllocator& cpu_allocator();

}  // namespace strata
