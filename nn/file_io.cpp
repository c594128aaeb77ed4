// SPDX-License-Identifier: MIT
#include "nn/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

#include "core/error.hpp"

namespace strata::detail {

std::function<void(const std::string&)> before_atomic_rename;

namespace {

std::string errno_text() { return std::strerror(errno); }

/// What a non-regular file is, for "not a regular file (a FIFO)".
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

// --- reading ------------------------------------------------------------------

InputFile::InputFile(const std::string& path, std::string_view op) : path_(path), op_(op) {
  // Check first, so a FIFO or device is never opened; then confirm on the
  // descriptor itself (the path may have been replaced in between).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    fail<ValueError>(op_, "'", path_, "': cannot open it: ", errno_text());
  }
  if (!S_ISREG(st.st_mode)) {
    fail<ValueError>(op_, "'", path_, "': not a regular file (", file_kind(st.st_mode), ")");
  }
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) fail<ValueError>(op_, "'", path_, "': cannot open it: ", errno_text());
  if (::fstat(fd_, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd_);
    fail<ValueError>(op_, "'", path_, "': cannot stat it: ", why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail<ValueError>(op_, "'", path_, "': not a regular file (", file_kind(st.st_mode), ")");
  }
  size_ = uint64_t(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(uint64_t offset, void* dst, std::size_t n, std::string_view what) const {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const std::size_t chunk = n < (std::size_t(1) << 30) ? n : (std::size_t(1) << 30);
    const ssize_t r = ::pread(fd_, p, chunk, off_t(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail<ValueError>(op_, "'", path_, "': reading ", what, " failed: ", errno_text());
    if (r == 0) {
      fail<ValueError>(op_, "'", path_, "': reading ", what, " failed: the file ends at byte ",
                       offset, " (truncated while being read?)");
    }
    p += r;
    n -= std::size_t(r);
    offset += uint64_t(r);
  }
}

// --- writing ------------------------------------------------------------------

AtomicFile::AtomicFile(const std::string& target, std::string_view op) : target_(target), op_(op) {
  // The temporary file sits in the target's directory (rename is atomic only
  // within one file system): "dir/.name.tmp.XXXXXX".
  const std::size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    fail<ValueError>(op_, "'", target_, "': not a file name");
  }
  // O_EXCL on a fresh name rather than mkstemp, so the file gets the mode a
  // plain create would (0666 & ~umask) without touching the process umask.
  static std::atomic<uint64_t> counter{0};
  const std::string prefix = (slash == std::string::npos ? std::string() : dir) + "." + name;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    const uint64_t tag =
        (uint64_t(::getpid()) << 32) ^ counter.fetch_add(1) ^
        uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9E3779B97F4A7C15u;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%016llx", static_cast<unsigned long long>(tag));
    temp_ = prefix + suffix;
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const std::string why = errno_text();
    temp_.clear();
    fail<ValueError>(op_, "cannot create a temporary file in '", dir, "' for '", target_,
                     "': ", why);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) std::remove(temp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail<ValueError>(op_, "'", target_, "': writing failed: ", errno_text());
    p += w;
    n -= std::size_t(w);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail<ValueError>(op_, "'", target_, "': flushing failed: ", errno_text());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail<ValueError>(op_, "'", target_, "': closing failed: ", errno_text());
  if (before_atomic_rename) before_atomic_rename(temp_);
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail<ValueError>(op_, "'", target_,
                     "': renaming the temporary file over it failed: ", errno_text());
  }
  committed_ = true;
}

// --- text in messages -----------------------------------------------------------

std::string quote(std::string_view s, std::size_t max_bytes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "'";
  const std::size_t n = s.size() < max_bytes ? s.size() : max_bytes;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  out += "'";
  if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size() && i < 16; ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  if (s.size() > 16) out += ",... (" + std::to_string(s.size()) + " dims)";
  return out + "]";
}

int64_t file_numel(const Shape& shape, std::string_view op, const std::string& path,
                   std::string_view what) {
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(n, d, &n)) {
      fail<ValueError>(op, "'", path, "': ", what, ": the element count of shape ",
                       shape_text(shape), " overflows int64");
    }
  }
  return empty ? 0 : n;
}

bool is_utf8(std::string_view s, std::size_t* bad_at) {
  std::size_t i = 0;
  auto bad = [&] {
    if (bad_at) *bad_at = i;
    return false;
  };
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return bad();  // a continuation byte, an overlong lead (C0, C1) or F5..FF
    }
    if (i + std::size_t(len) > s.size()) return bad();
    for (int k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + std::size_t(k)]);
      if ((d & 0xC0) != 0x80) return bad();
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return bad();
    }
    i += std::size_t(len);
  }
  return true;
}

[[noreturn]] void rethrow_as_error(std::string_view op, const std::string& path) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    const std::string_view what = e.what();
    fail<ValueError>(op, "'", path, "': ", what.substr(0, 200), what.size() > 200 ? "..." : "");
  } catch (...) {
    fail<ValueError>(op, "'", path, "': an unknown exception");
  }
}

}  // namespace strata::detail
