// SPDX-License-Identifier: MIT
#pragma once
/// Caching allocators (reference/002): freed blocks go back to a free list of
/// their size class and serve the next request of that class, so a steady
/// training loop stops calling the system allocator after its first step.
/// When the cached bytes pass a limit, the least recently freed blocks are
/// given back to the system first.
#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

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
  /// A cached block: its pointer and when it was freed (a count of frees).
  struct Block {
    void* ptr;
    uint64_t freed_at;
  };
  /// The cached blocks of one size class, least recently freed first from `head`:
  /// allocate takes the back (warmest), eviction the front (coldest).
  struct FreeList {
    std::vector<Block> blocks;
    std::size_t head = 0;  ///< blocks before head were evicted
    bool empty() const { return head == blocks.size(); }
  };
  /// Size classes: at most four per power of two (the quarters), indexed by exponent.
  static constexpr std::size_t kClasses = 64 * 4;
  /// The index of size class `cls` in free_.
  static std::size_t class_index(std::size_t cls);
  /// The size class of index i.
  static std::size_t class_of_index(std::size_t i);
  /// Removes the least recently freed blocks until the cache fits the limit;
  /// the caller frees the returned blocks (pointer, size class) after releasing the lock.
  std::vector<std::pair<void*, std::size_t>> evict_locked();
  mutable std::mutex mutex_;
  std::size_t cache_limit_ = std::size_t{4} << 30;
  uint64_t frees_ = 0;  ///< blocks cached so far: the clock of Block::freed_at
  std::array<FreeList, kClasses> free_;
  AllocatorStats stats_;
};

/// The process-wide CPU allocator (aligned_alloc underneath); it lives until
/// the process ends, so tensors in static storage may outlive main.
CachingAllocator& cpu_allocator();

namespace detail {
/// Host memory of at least `bytes` bytes (nullptr when the system has none):
/// from 2 MiB up, 2 MiB aligned, rounded up to whole 2 MiB and asked to be
/// backed by huge pages; below, 64-byte aligned. Free it with std::free.
/// Huge pages fix where a buffer's lines fall in the physically indexed
/// caches (a scratch buffer on scattered 4 KiB pages can crowd a few L2 sets
/// and evict lines fetched ahead of use) and fault once per 2 MiB.
void* host_allocate(std::size_t bytes);
}  // namespace detail

}  // namespace strata
