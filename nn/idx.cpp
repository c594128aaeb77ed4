// SPDX-License-Identifier: MIT
#include "nn/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "nn/file_io.hpp"
#include "raw/ops.hpp"

namespace strata {

namespace {

using strata::detail::fail;
using strata::detail::shape_text;

template <class... Parts>
[[noreturn]] void bad(const std::string& path, Parts&&... parts) {
  fail<ValueError>("load_idx", "'", path, "': ", std::forward<Parts>(parts)...);
}

/// deflate's best ratio is 1032:1, so a gzip stream of n bytes inflates to at most
/// about 1032 n: a header claiming more is refused before anything is allocated.
constexpr uint64_t kMaxInflateRatio = 1032;

/// An element type of the IDX format: its code, its size in the file, its name.
struct IdxType {
  unsigned char code;
  std::size_t bytes;
  const char* name;
  DType dtype;  ///< what strata returns it as
};

constexpr IdxType kTypes[] = {
    {0x08, 1, "u8", DType::i32},  {0x09, 1, "i8", DType::i32},  {0x0B, 2, "i16", DType::i32},
    {0x0C, 4, "i32", DType::i32}, {0x0D, 4, "f32", DType::f32}, {0x0E, 8, "f64", DType::f64},
};

/// The bytes of an IDX file in order, from a plain file or through zlib.
class Source {
 public:
  Source(const std::string& path, const detail::InputFile& in) : path_(path), in_(in) {
    unsigned char magic[2] = {0, 0};
    if (in.size() >= 2) in.read_at(0, magic, 2, "the magic number");
    gzip_ = magic[0] == 0x1f && magic[1] == 0x8b;
    if (!gzip_) return;
    if (in.size() > UINT32_MAX) bad(path_, "a gzip file over 4 GiB is not supported");
    compressed_.resize(std::size_t(in.size()));
    in.read_at(0, compressed_.data(), compressed_.size(), "the gzip stream");
    zs_.next_in = compressed_.data();
    zs_.avail_in = uInt(compressed_.size());
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) bad(path_, "zlib could not start inflating");
    inflating_ = true;
  }
  ~Source() {
    if (inflating_) inflateEnd(&zs_);
  }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  bool gzip() const { return gzip_; }
  /// The most bytes the file can hold after `offset` bytes of content.
  uint64_t capacity(uint64_t offset) const {
    const uint64_t total = gzip_ ? kMaxInflateRatio * in_.size() : in_.size();
    return total > offset ? total - offset : 0;
  }

  /// Exactly n bytes, the next ones; `what` names them in the error a short file raises.
  void read(void* dst, std::size_t n, std::string_view what) {
    if (!gzip_) {
      if (offset_ + n > in_.size()) {
        bad(path_, "the file ends inside ", what, " (", in_.size(), " bytes; ", offset_ + n,
            " needed: truncated file?)");
      }
      if (n > 0) in_.read_at(offset_, dst, n, what);
      offset_ += n;
      return;
    }
    auto* out = static_cast<unsigned char*>(dst);
    std::size_t done = 0;
    while (done < n) {
      if (ended_) {
        bad(path_, "the gzip stream ends inside ", what, " (", offset_ + done,
            " bytes inflated; truncated file?)");
      }
      const std::size_t chunk = std::min<std::size_t>(n - done, UINT32_MAX);
      zs_.next_out = out + done;
      zs_.avail_out = uInt(chunk);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      done += chunk - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0) {
        bad(path_, "the gzip stream is cut off inside ", what, " (", offset_ + done,
            " bytes inflated; truncated file?)");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        bad(path_, "corrupt gzip stream inside ", what, ": ",
            zs_.msg ? std::string(zs_.msg) : "zlib error " + std::to_string(rc));
      }
    }
    offset_ += n;
  }

  /// After the elements: nothing may follow them (no byte of the file, no byte of the
  /// inflated stream, no second gzip member).
  void finish() {
    if (!gzip_) {
      if (offset_ < in_.size()) {
        bad(path_, in_.size() - offset_,
            " trailing bytes after the elements (an IDX file holds "
            "exactly its header and elements)");
      }
      return;
    }
    while (!ended_) {
      unsigned char extra;
      zs_.next_out = &extra;
      zs_.avail_out = 1;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (zs_.avail_out == 0) {
        bad(path_, "the gzip stream holds more bytes than the header's dims need (trailing data)");
      }
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0) {
        bad(path_,
            "the gzip stream is cut off after the elements (no end of stream: truncated "
            "file?)");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        bad(path_, "corrupt gzip stream after the elements: ",
            zs_.msg ? std::string(zs_.msg) : "zlib error " + std::to_string(rc));
      }
    }
    if (zs_.avail_in > 0) {
      bad(path_, zs_.avail_in,
          " bytes after the end of the gzip stream (one stream holds one "
          "IDX file)");
    }
  }

 private:
  const std::string& path_;
  const detail::InputFile& in_;
  bool gzip_ = false, inflating_ = false, ended_ = false;
  std::vector<unsigned char> compressed_;
  z_stream zs_{};
  uint64_t offset_ = 0;  ///< content bytes read so far
};

/// The big-endian value of `bytes` bytes at p.
uint64_t big_endian(const unsigned char* p, std::size_t bytes) {
  uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

template <class T, class Bits>
void store_floats(const std::vector<unsigned char>& in, std::size_t count, T* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const Bits bits = Bits(big_endian(in.data() + i * sizeof(T), sizeof(T)));
    std::memcpy(out + i, &bits, sizeof(T));
  }
}

Tensor load_impl(const std::string& path) {
  const detail::InputFile in(path, "load_idx");
  Source src(path, in);
  unsigned char magic[4];
  src.read(magic, 4, "the magic number");
  if (magic[0] != 0 || magic[1] != 0) {
    bad(path, "not an IDX file: its first two bytes are ", int(magic[0]), " and ", int(magic[1]),
        ", not 0 and 0");
  }
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) type = t.code == magic[2] ? &t : type;
  if (!type) {
    bad(path, "element type code ", int(magic[2]), " is not an IDX type (0x08 u8, 0x09 i8, ",
        "0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64)");
  }
  const int ndim = magic[3];
  if (ndim == 0) bad(path, "0 dims: an IDX file has at least one");
  std::vector<unsigned char> dim_bytes(std::size_t(ndim) * 4);
  src.read(dim_bytes.data(), dim_bytes.size(), "the dims");
  Shape shape;
  for (int d = 0; d < ndim; ++d) {
    shape.push_back(int64_t(big_endian(dim_bytes.data() + 4 * d, 4)));
  }
  const int64_t count = detail::file_numel(shape, "load_idx", path, "dims");
  const uint64_t header = 4 + dim_bytes.size();
  if (uint64_t(count) > src.capacity(header) / type->bytes) {
    bad(path, "dims ", shape_text(shape), " of ", type->name, " need ",
        uint64_t(count) * type->bytes, " bytes of elements, more than the ",
        src.gzip() ? "gzip stream can inflate to (at most " : "file holds (", src.capacity(header),
        " bytes after the header; truncated file?)");
  }
  // Read in chunks, so a gzip header that claims more than its stream holds commits memory
  // only for what actually inflates.
  const std::size_t n = std::size_t(count), total = n * type->bytes;
  constexpr std::size_t kChunk = std::size_t(1) << 24;
  std::vector<unsigned char> data;
  while (data.size() < total) {
    const std::size_t done = data.size(), step = std::min(kChunk, total - done);
    data.resize(done + step);
    src.read(data.data() + done, step, "the elements");
  }
  src.finish();

  RawTensor t = raw::empty(shape, type->dtype, Device::cpu());  // filled from the file here
  void* dst = t.storage()->data();
  switch (type->code) {
    case 0x08:
      for (std::size_t i = 0; i < n; ++i) static_cast<int32_t*>(dst)[i] = data[i];
      break;
    case 0x09:
      for (std::size_t i = 0; i < n; ++i) {
        static_cast<int32_t*>(dst)[i] = static_cast<int8_t>(data[i]);
      }
      break;
    case 0x0B:
      for (std::size_t i = 0; i < n; ++i) {
        static_cast<int32_t*>(dst)[i] = static_cast<int16_t>(big_endian(&data[2 * i], 2));
      }
      break;
    case 0x0C:
      for (std::size_t i = 0; i < n; ++i) {
        static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(big_endian(&data[4 * i], 4));
      }
      break;
    case 0x0D:
      store_floats<float, uint32_t>(data, n, static_cast<float*>(dst));
      break;
    default:  // 0x0E, the last of kTypes
      store_floats<double, uint64_t>(data, n, static_cast<double*>(dst));
      break;
  }
  return Tensor(std::move(t));
}

}  // namespace

Tensor load_idx(const std::string& path) {
  return detail::guard_file_op("load_idx", path, [&] { return load_impl(path); });
}

}  // namespace strata
