// SPDX-License-Identifier: MIT
#pragma once
/// Storage: one device buffer shared by every view of it, with a version
/// counter that each in-place write bumps (so autodiff can tell when a value
/// it saved for the backward pass was overwritten).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/allocator.hpp"

namespace strata {

class Storage {
 public:
  /// Allocates `bytes` (uninitialised) from `alloc`, which must outlive the storage.
  Storage(CachingAllocator& alloc, std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return alloc_->device(); }
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void bump_version() { version_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  CachingAllocator* alloc_;
  void* data_;
  std::size_t bytes_;
  std::atomic<uint64_t> version_{0};
};

/// A new shared storage of `bytes` bytes from `alloc`.
std::shared_ptr<Storage> make_storage(CachingAllocator& alloc, std::size_t bytes);

}  // namespace strata
