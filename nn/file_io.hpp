// SPDX-License-Identifier: MIT
#pragma once
/// Reading and writing the files of nn/ (safetensors, .npy) safely, in one
/// place:
/// - InputFile opens only a regular file, and never blocks doing so: it
///   stat()s the path first (a FIFO, device or directory is refused without
///   being opened), then opens with O_NONBLOCK and fstat()s the descriptor it
///   got, so a file swapped in between is still refused. Reads are exact
///   (pread at an offset; a short read is a truncated file).
/// - AtomicFile writes a temporary file in the target's directory, fsyncs it
///   and renames it over the target: a crash never leaves a half-written file.
/// - quote() names untrusted text in an error message: a bounded prefix, with
///   non-printable and non-ASCII bytes escaped.
/// Every failure is a ValueError "op: 'path': problem".
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/shape.hpp"

namespace strata::detail {

/// A regular file opened for reading (see above); closed on destruction.
class InputFile {
 public:
  /// Opens path for op (the public operation named in errors).
  InputFile(const std::string& path, std::string_view op);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// The file's size in bytes when it was opened.
  uint64_t size() const { return size_; }
  /// Reads exactly n bytes at offset into dst; what names the bytes in the
  /// error a short read raises ("the header", "tensor 'w'").
  void read_at(uint64_t offset, void* dst, std::size_t n, std::string_view what) const;

 private:
  std::string path_, op_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// A file written atomically: bytes go to a temporary file next to the
/// target, and commit() renames it over the target. Without commit() (an
/// exception), the temporary file is removed and the target left as it was.
class AtomicFile {
 public:
  AtomicFile(const std::string& target, std::string_view op);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends n bytes.
  void write(const void* data, std::size_t n);
  /// Flushes to disk, closes, and renames over the target.
  void commit();

 private:
  std::string target_, op_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Test hook: called by AtomicFile::commit with the temporary file's path
/// after the data is written and before the rename; an exception from it
/// aborts the save (the temporary file is removed, the target untouched).
extern std::function<void(const std::string& temp_path)> before_atomic_rename;

/// s for an error message: single-quoted, at most max_bytes of it, each
/// byte outside printable ASCII written as \xNN, a cut marked with "...".
std::string quote(std::string_view s, std::size_t max_bytes = 64);

/// A shape for a message: at most its first 16 dims, "[2,3,... (40 dims)]".
std::string shape_text(const Shape& s);

/// The element count of a shape read from a file, by strata's rule (the
/// product of the nonzero dims fits int64, so an empty [0, 2^62, 4] is
/// refused as raw::empty would refuse it); when it does not, throws
/// ValueError "op: 'path': what: the element count of shape [...] overflows int64".
/// The shape's dims must be non-negative.
int64_t file_numel(const Shape& shape, std::string_view op, const std::string& path,
                   std::string_view what);

/// Whether s is well-formed UTF-8 (no overlong forms, surrogates or code
/// points above U+10FFFF); when not, *bad_at is the offset of the first bad byte.
bool is_utf8(std::string_view s, std::size_t* bad_at = nullptr);

/// Runs fn, the body of a public file operation, and turns any exception
/// that is not an st::Error (std::bad_alloc, a std::filesystem or library
/// error, a test hook's exception) into a ValueError "op: 'path': what".
template <class Fn>
decltype(auto) guard_file_op(std::string_view op, const std::string& path, Fn&& fn);

/// Throws ValueError "op: 'path': <what of the foreign exception>".
[[noreturn]] void rethrow_as_error(std::string_view op, const std::string& path);

template <class Fn>
decltype(auto) guard_file_op(std::string_view op, const std::string& path, Fn&& fn) {
  try {
    return fn();
  } catch (...) {
    rethrow_as_error(op, path);
  }
}

}  // namespace strata::detail
