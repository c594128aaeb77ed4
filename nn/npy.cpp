// SPDX-License-Identifier: MIT
#include "nn/npy.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "nn/file_io.hpp"
#include "nn/npy_header.hpp"
#include "raw/ops.hpp"

namespace strata {

namespace {

using strata::detail::fail;
using strata::detail::npy_code;
using strata::detail::NpyHeader;
using strata::detail::parse_npy_header;
using strata::detail::quote;
using strata::detail::shape_text;

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
/// numpy.load refuses headers over 10000 characters; a rank-1000 shape
/// needs about 25000. We take up to 1 MiB, parsed in linear time.
constexpr uint64_t kMaxHeader = uint64_t(1) << 20;
/// NumPy pads the header so the data starts at a multiple of this.
constexpr std::size_t kAlign = 64;
/// numpy.save leaves room after the dict for the growing axis to reach 21 digits.
constexpr std::size_t kGrowthDigits = 21;

void swap_bytes(char* data, std::size_t bytes, std::size_t elem) {
  for (std::size_t i = 0; i + elem <= bytes; i += elem) std::reverse(data + i, data + i + elem);
}

// --- saving -------------------------------------------------------------------

void save_impl(const std::string& path, const Tensor& t) {
  const char* op = "save_npy";
  if (!t.defined()) fail<ValueError>(op, "'", path, "': undefined tensor");
  // The header numpy.save writes: sorted keys, repr() of each value, spare
  // room for the first axis to grow, spaces to align the data, '\n'.
  std::string shape = "(";
  for (std::size_t i = 0; i < t.shape().size(); ++i) {
    if (i) shape += ", ";
    shape += std::to_string(t.shape()[i]);
  }
  shape += t.shape().size() == 1 ? ",)" : ")";
  const char* code = npy_code(t.dtype());
  std::string dict = "{'descr': '";
  dict += (t.dtype() == DType::b8 ? '|' : '<');
  dict += code;
  dict += "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (t.ndim() > 0) dict.append(kGrowthDigits - std::to_string(t.shape()[0]).size(), ' ');
  // Version 1.0 when the padded header length fits its u16, as numpy.save chooses.
  auto padding = [&](std::size_t prefix) { return kAlign - (prefix + dict.size() + 1) % kAlign; };
  const bool v1 = dict.size() + 1 + padding(kMagicLen + 4) <= 65535;
  const std::size_t pad = padding(kMagicLen + 2 + (v1 ? 2 : 4));
  const std::size_t hlen = dict.size() + pad + 1;
  std::string head(kMagic, kMagicLen);
  head += char(v1 ? 1 : 2);
  head += char(0);
  for (std::size_t i = 0; i < (v1 ? 2u : 4u); ++i) head += char((hlen >> (8 * i)) & 0xff);
  head += dict;
  head.append(pad, ' ');
  head += '\n';

  const std::size_t elem = dtype_size(t.dtype());
  std::vector<char> data(std::size_t(t.numel()) * elem);
  raw::to_host(t.raw(), data.data());  // row-major, whatever t's layout
  if constexpr (std::endian::native == std::endian::big) swap_bytes(data.data(), data.size(), elem);

  detail::AtomicFile file(path, op);
  file.write(head.data(), head.size());
  file.write(data.data(), data.size());
  file.commit();
}

// --- loading ----------------------------------------------------------------------

template <class... Parts>
[[noreturn]] void bad(const std::string& path, Parts&&... parts) {
  fail<ValueError>("load_npy", "'", path, "': ", std::forward<Parts>(parts)...);
}

Tensor load_impl(const std::string& path) {
  const detail::InputFile in(path, "load_npy");
  const uint64_t size = in.size();
  unsigned char pre[12];
  if (size < 10) bad(path, "file of ", size, " bytes is shorter than a .npy preamble (10 bytes)");
  in.read_at(0, pre, 10, "the preamble");
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) {
    bad(path, "not a .npy file: it starts with ",
        quote(std::string_view(reinterpret_cast<const char*>(pre), kMagicLen)),
        ", not \"\\x93NUMPY\"");
  }
  const int major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3) {
    bad(path, "unsupported .npy version ", major, ".", minor, " (strata reads 1.0, 2.0, 3.0)");
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const uint64_t prefix = kMagicLen + 2 + len_bytes;
  if (size < prefix) bad(path, "file of ", size, " bytes ends inside the header length");
  in.read_at(8, pre + 8, len_bytes, "the header length");
  uint64_t hlen = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) hlen |= uint64_t(pre[8 + i]) << (8 * i);
  if (hlen > size - prefix) {
    bad(path, "header length ", hlen, " exceeds the ", size - prefix,
        " bytes after it (truncated file?)");
  }
  if (hlen > kMaxHeader) bad(path, "header length ", hlen, " exceeds the limit of ", kMaxHeader);
  std::string text(std::size_t(hlen), '\0');
  in.read_at(prefix, text.data(), text.size(), "the header");

  // Versions 1 and 2 are latin1 text and 3 is UTF-8, but every header strata
  // can read is ASCII: a non-ASCII byte could only sit in an unknown descr.
  if (major < 3) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (static_cast<unsigned char>(text[i]) >= 0x80) {
        bad(path, "header byte ", i, " is ", quote(text.substr(i, 1)), ", not ASCII (a version ",
            major, ".0 header is latin1 text; a valid one is ASCII)");
      }
    }
  } else if (std::size_t at = 0; !detail::is_utf8(text, &at)) {
    bad(path, "header byte ", at, " is not valid UTF-8 (a version 3.0 header is UTF-8 text)");
  }
  const NpyHeader h = parse_npy_header(text, path);

  // Sizes, overflow-checked, against the bytes the file holds.
  const int64_t count = detail::file_numel(h.shape, "load_npy", path, "shape");
  const std::size_t elem = dtype_size(h.dtype);
  if (uint64_t(count) > UINT64_MAX / elem) {
    bad(path, "the byte count of shape ", shape_text(h.shape), " overflows");
  }
  const uint64_t bytes = uint64_t(count) * elem;
  const uint64_t have = size - prefix - hlen;
  const std::string type = std::string(h.big_endian ? ">" : "<") + npy_code(h.dtype);
  if (bytes > have) {
    bad(path, "shape ", shape_text(h.shape), " of ", type, " needs ", bytes, " bytes of data, but ",
        have, " follow the header (truncated file?)");
  }
  if (bytes < have) {
    bad(path, "shape ", shape_text(h.shape), " of ", type, " needs ", bytes, " bytes of data, but ",
        have, " follow the header (trailing bytes: a .npy file holds exactly one array)");
  }

  // Fortran order is the C order of the reversed shape, transposed.
  Shape stored = h.shape;
  if (h.fortran) std::reverse(stored.begin(), stored.end());
  RawTensor t = raw::empty(stored, h.dtype, Device::cpu());  // filled from the file here
  char* dst = static_cast<char*>(t.storage()->data());
  if (bytes > 0) in.read_at(prefix + hlen, dst, std::size_t(bytes), "the data");
  if (h.big_endian != (std::endian::native == std::endian::big)) {
    swap_bytes(dst, std::size_t(bytes), elem);
  }
  if (h.dtype == DType::b8) {
    for (std::size_t i = 0; i < bytes; ++i) {
      if (static_cast<unsigned char>(dst[i]) > 1) {
        bad(path, "bool element ", i, " is byte ", int(static_cast<unsigned char>(dst[i])),
            ", not 0 or 1");
      }
    }
  }
  if (h.fortran && h.shape.size() > 1) {
    Shape axes;
    for (std::size_t i = h.shape.size(); i-- > 0;) axes.push_back(int64_t(i));
    t = raw::contiguous(t.permute(axes));
  }
  return Tensor(std::move(t));
}

}  // namespace

void save_npy(const std::string& path, const Tensor& t) {
  detail::guard_file_op("save_npy", path, [&] { save_impl(path, t); });
}

Tensor load_npy(const std::string& path) {
  return detail::guard_file_op("load_npy", path, [&] { return load_impl(path); });
}

}  // namespace strata
