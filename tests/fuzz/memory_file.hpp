// SPDX-License-Identifier: MIT
// The fuzz targets' input as a file path: strata's loaders read files, and a
// memfd (an anonymous in-memory file, reopened through /proc/self/fd) spares
// the disk a write per input.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace strata_fuzz {

/// One in-memory file per process, rewritten with each input.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("strata_fuzz", 0)) {
    if (fd_ < 0) std::abort();  // the harness itself is broken, not strata
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  /// Replaces the file's contents by data[0, size) and returns its path.
  const std::string& write(const uint8_t* data, std::size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      const ssize_t w = ::pwrite(fd_, data + done, size - done, off_t(done));
      if (w <= 0) std::abort();
      done += std::size_t(w);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace strata_fuzz
