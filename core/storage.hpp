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

/// A device buffer shared (through std::shared_ptr) by every view of it, with the version
/// counter that in-place writes bump. Users meet it only through RawTensor::storage().
class Storage {
 public:
  /// Allocates `bytes` (uninitialised) from `alloc`, which must outlive the storage.
  Storage(CachingAllocator& alloc, std::size_t bytes);
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  /// Returns the block to its allocator's cache.
  ~Storage();
  /// The buffer (device memory for a CUDA storage).
  void* data() const { return data_; }
  /// The size of the buffer in bytes.
  std::size_t bytes() const { return bytes_; }
  /// The device of the buffer.
  Device device() const { return alloc_->device(); }
  /// How many in-place writes this storage has seen.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  /// Records an in-place write (every in-place op calls it).
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
