// SPDX-License-Identifier: MIT
#include "nn/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "raw/ops.hpp"

namespace strata {

namespace detail {
std::function<void(const std::string&)> safetensors_before_rename;
}  // namespace detail

namespace {

using json = nlohmann::json;
using strata::detail::fail;

/// The reference implementation refuses headers above 100 MB; so do we.
constexpr uint64_t kMaxHeader = 100'000'000;

/// Reverses each element's bytes (only on big-endian hosts: the format is little-endian).
void to_little_endian(char* data, std::size_t bytes, std::size_t elem) {
  if constexpr (std::endian::native == std::endian::big) {
    for (std::size_t i = 0; i + elem <= bytes; i += elem) std::reverse(data + i, data + i + elem);
  } else {
    (void)data, (void)bytes, (void)elem;
  }
}

std::string errno_text() { return std::strerror(errno); }

// --- saving -----------------------------------------------------------------

/// Owns the temporary file of a save: removed unless committed.
class TempFile {
 public:
  explicit TempFile(const std::string& target) {
    namespace fs = std::filesystem;
    const fs::path t(target);
    const fs::path dir = t.parent_path().empty() ? fs::path(".") : t.parent_path();
    // Appended piecewise: GCC 12 warns wrongly (-Wrestrict) on "." + s + "...".
    std::string name = ".";
    name += t.filename().string();
    name += ".tmp.XXXXXX";
    path_ = (dir / name).string();
    fd_ = ::mkstemp(path_.data());
    if (fd_ < 0) {
      fail<ValueError>("save_safetensors", "cannot create a temporary file in '", dir.string(),
                       "' for '", target, "': ", errno_text());
    }
    ::fchmod(fd_, 0644);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) std::remove(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const void* data, std::size_t n, const std::string& target) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        fail<ValueError>("save_safetensors", "writing '", target, "' failed: ", errno_text());
      p += w;
      n -= std::size_t(w);
    }
  }
  /// Flushes to disk, closes, and renames over target.
  void commit(const std::string& target) {
    if (::fsync(fd_) != 0) {
      fail<ValueError>("save_safetensors", "flushing '", target, "' failed: ", errno_text());
    }
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      fail<ValueError>("save_safetensors", "closing '", target, "' failed: ", errno_text());
    }
    if (detail::safetensors_before_rename) detail::safetensors_before_rename(path_);
    if (std::rename(path_.c_str(), target.c_str()) != 0) {
      fail<ValueError>("save_safetensors", "renaming the temporary file to '", target,
                       "' failed: ", errno_text());
    }
    committed_ = true;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__") {
      fail<ValueError>(op, "'", path, "': invalid tensor name '", name, "'");
    }
    if (!t.defined()) fail<ValueError>(op, "'", path, "': tensor '", name, "' is undefined");
    const uint64_t bytes = uint64_t(t.numel()) * dtype_size(t.dtype());
    std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
    header[name] = {{"dtype", detail::safetensors_dtype_name(t.dtype())},
                    {"shape", shape},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, like the reference
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(uint64_t(h.size()) >> (8 * i));

  TempFile file(path);
  file.write(len, 8, path);
  file.write(h.data(), h.size(), path);
  std::vector<char> buf;
  for (const auto& [name, t] : tensors) {
    const std::size_t elem = dtype_size(t.dtype());
    buf.resize(std::size_t(t.numel()) * elem);
    raw::to_host(t.raw(), buf.data());  // row-major, whatever t's layout
    to_little_endian(buf.data(), buf.size(), elem);
    file.write(buf.data(), buf.size(), path);
  }
  file.commit(path);
}

// --- loading ----------------------------------------------------------------
namespace {

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

struct Parsed {
  std::vector<Entry> entries;  // in data order
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;
};

template <class... Parts>
[[noreturn]] void bad(const std::string& path, Parts&&... parts) {
  fail<ValueError>("load_safetensors", "'", path, "': ", std::forward<Parts>(parts)...);
}

uint64_t as_offset(const json& v, const std::string& path, const std::string& name,
                   const char* what) {
  if (!v.is_number_unsigned()) {
    bad(path, "tensor '", name, "': ", what, " ", v.dump(), " is not a non-negative integer");
  }
  return v.get<uint64_t>();
}

Parsed parse(std::ifstream& in, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) bad(path, "not a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (ec) bad(path, "cannot read its size: ", ec.message());
  if (size < 8) bad(path, "file of ", size, " bytes is shorter than the 8-byte header length");
  unsigned char len[8];
  if (!in.read(reinterpret_cast<char*>(len), 8)) bad(path, "cannot read the header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(len[i]) << (8 * i);
  if (n > size - 8) {
    bad(path, "header length ", n, " exceeds the ", size - 8, " bytes after it (truncated file?)");
  }
  if (n > kMaxHeader) bad(path, "header length ", n, " exceeds the limit of ", kMaxHeader);
  std::string text(static_cast<std::size_t>(n), '\0');
  if (!in.read(text.data(), std::streamsize(n))) bad(path, "cannot read the ", n, "-byte header");

  // Parse, rejecting a name that appears twice (nlohmann would keep the last).
  std::set<std::string> seen;
  std::string duplicate;
  json header;
  try {
    header = json::parse(text, [&](int depth, json::parse_event_t event, json& value) {
      if (depth == 1 && event == json::parse_event_t::key && duplicate.empty() &&
          !seen.insert(value.get<std::string>()).second) {
        duplicate = value.get<std::string>();
      }
      return true;
    });
  } catch (const json::exception& e) {
    bad(path, "the header is not valid JSON (", e.what(), ")");
  }
  if (!duplicate.empty()) bad(path, "the header names '", duplicate, "' twice");
  if (!header.is_object()) bad(path, "the header is not a JSON object");

  Parsed out;
  out.data_start = 8 + n;
  const uint64_t data_size = size - 8 - n;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) bad(path, "__metadata__ is not an object");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) bad(path, "__metadata__ value of '", k, "' is not a string");
        out.metadata.emplace(k, v.get<std::string>());
      }
      continue;
    }
    if (!info.is_object()) bad(path, "tensor '", name, "': its entry is not an object");
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!info.contains(key)) bad(path, "tensor '", name, "': no \"", key, "\"");
    }
    const json& d = info["dtype"];
    if (!d.is_string()) bad(path, "tensor '", name, "': dtype ", d.dump(), " is not a string");
    const std::optional<DType> dtype = detail::safetensors_dtype(d.get<std::string>());
    if (!dtype) {
      fail<DTypeError>("load_safetensors", "'", path, "': tensor '", name, "' has dtype ", d.dump(),
                       ", not one of F32, F64, I32, I64, BOOL");
    }
    const json& s = info["shape"];
    if (!s.is_array()) bad(path, "tensor '", name, "': shape ", s.dump(), " is not an array");
    Shape shape;
    for (const json& dim : s) {
      const uint64_t v = as_offset(dim, path, name, "shape entry");
      if (v > uint64_t(INT64_MAX))
        bad(path, "tensor '", name, "': shape entry ", v, " is too large");
      shape.push_back(int64_t(v));
    }
    const json& o = info["data_offsets"];
    if (!o.is_array() || o.size() != 2) {
      bad(path, "tensor '", name, "': data_offsets ", o.dump(), " is not [begin, end]");
    }
    const uint64_t begin = as_offset(o[0], path, name, "data offset");
    const uint64_t end = as_offset(o[1], path, name, "data offset");
    if (begin > end)
      bad(path, "tensor '", name, "': data_offsets [", begin, ", ", end, "] are reversed");
    if (end > data_size) {
      bad(path, "tensor '", name, "': data_offsets [", begin, ", ", end, "] reach past the ",
          data_size, " bytes of data (truncated file?)");
    }
    // Element count and byte size, overflow-checked.
    uint64_t count = 1;
    for (int64_t dim : shape) {
      if (dim != 0 && count > UINT64_MAX / uint64_t(dim)) {
        bad(path, "tensor '", name, "': the element count of shape ", shape, " overflows");
      }
      count *= uint64_t(dim);
    }
    const uint64_t elem = dtype_size(*dtype);
    if (count > UINT64_MAX / elem || count * elem != end - begin) {
      bad(path, "tensor '", name, "': shape ", shape, " of ",
          detail::safetensors_dtype_name(*dtype), " needs ",
          count > UINT64_MAX / elem ? std::string("too many") : std::to_string(count * elem),
          " bytes, but data_offsets [", begin, ", ", end, "] hold ", end - begin);
    }
    out.entries.push_back({name, *dtype, shape, begin, end});
  }

  // The tensors must tile the data region exactly: no overlap, no gap.
  std::sort(out.entries.begin(), out.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : out.entries) {
    if (e.begin < at) {
      bad(path, "tensor '", e.name, "' (bytes [", e.begin, ", ", e.end, ")) overlaps tensor '",
          prev->name, "' (bytes [", prev->begin, ", ", prev->end, "))");
    }
    if (e.begin > at) bad(path, "bytes [", at, ", ", e.begin, ") of the data belong to no tensor");
    at = e.end;
    prev = &e;
  }
  if (at != data_size) {
    bad(path, "the data region has ", data_size, " bytes but the tensors cover ", at);
  }
  return out;
}

std::ifstream open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open it: ", errno_text());
  return in;
}

}  // namespace

std::map<std::string, Tensor> load_safetensors(const std::string& path) {
  std::ifstream in = open(path);
  const Parsed p = parse(in, path);
  std::map<std::string, Tensor> out;
  for (const Entry& e : p.entries) {
    RawTensor t = raw::empty(e.shape, e.dtype);
    const std::size_t bytes = std::size_t(e.end - e.begin);
    if (bytes > 0) {
      char* dst = static_cast<char*>(t.storage()->data());
      in.seekg(std::streamoff(p.data_start + e.begin));
      if (!in.read(dst, std::streamsize(bytes))) {
        bad(path, "tensor '", e.name, "': reading its ", bytes, " bytes failed (truncated file?)");
      }
      to_little_endian(dst, bytes, dtype_size(e.dtype));
      if (e.dtype == DType::b8) {
        for (std::size_t i = 0; i < bytes; ++i) {
          if (static_cast<unsigned char>(dst[i]) > 1) {
            bad(path, "tensor '", e.name, "': BOOL element ", i, " is byte ",
                int(static_cast<unsigned char>(dst[i])), ", not 0 or 1");
          }
        }
      }
    }
    out.emplace(e.name, Tensor(std::move(t)));
  }
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  std::ifstream in = open(path);
  return parse(in, path).metadata;
}

namespace detail {

const char* safetensors_dtype_name(DType d) {
  switch (d) {
    case DType::f32:
      return "F32";
    case DType::f64:
      return "F64";
    case DType::i32:
      return "I32";
    case DType::i64:
      return "I64";
    case DType::b8:
      return "BOOL";
  }
  return "?";
}

std::optional<DType> safetensors_dtype(const std::string& name) {
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64, DType::b8}) {
    if (name == safetensors_dtype_name(d)) return d;
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace strata
