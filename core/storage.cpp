// SPDX-License-Identifier: MIT
#include "core/storage.hpp"

namespace strata {

Storage::Storage(CachingAllocator& alloc, std::size_t bytes)
    : alloc_(&alloc), data_(alloc.allocate(bytes)), bytes_(bytes) {}

Storage::~Storage() { alloc_->deallocate(data_, bytes_); }

std::shared_ptr<Storage> make_storage(CachingAllocator& alloc, std::size_t bytes) {
  return std::make_shared<Storage>(alloc, bytes);
}

}  // namespace strata
