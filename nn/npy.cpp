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
#include "raw/ops.hpp"

namespace strata {

namespace {

using strata::detail::fail;
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

/// How a .npy file stores one of strata's dtypes.
struct NpyType {
  DType dtype;
  const char* code;  // the descr without its byte-order character
};
constexpr NpyType kTypes[] = {{DType::f32, "f4"},
                              {DType::f64, "f8"},
                              {DType::i32, "i4"},
                              {DType::i64, "i8"},
                              {DType::b8, "b1"}};

const char* npy_code(DType d) {
  for (const NpyType& t : kTypes) {
    if (t.dtype == d) return t.code;
  }
  return "?";
}

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

// --- the header -----------------------------------------------------------------

struct Header {
  DType dtype = DType::f32;
  bool big_endian = false;
  bool fortran = false;
  Shape shape;
};

/// Reads the header's dict literal: exactly 'descr', 'fortran_order' and
/// 'shape', each once. A loop over the text with no recursion: anything
/// nested where a scalar belongs is an error at its first character.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header h;
    bool seen[3] = {false, false, false};
    static constexpr const char* kKeys[3] = {"descr", "fortran_order", "shape"};
    ws();
    expect('{', "the header to start with '{' (a Python dict)");
    ws();
    while (!eat('}')) {
      const std::size_t key_at = i_;
      const std::string key = string_literal("a quoted key");
      int k = 0;
      while (k < 3 && key != kKeys[k]) ++k;
      if (k == 3) {
        error_at(key_at, "unexpected key ", quote(key),
                 "; a .npy header has exactly 'descr', 'fortran_order' and 'shape'");
      }
      if (seen[k]) error_at(key_at, "the key ", quote(key), " appears twice");
      seen[k] = true;
      ws();
      expect(':', "':' after the key");
      ws();
      if (k == 0) {
        descr(h);
      } else if (k == 1) {
        h.fortran = boolean();
      } else {
        h.shape = tuple();
      }
      ws();
      if (!eat(',')) {
        expect('}', "',' or '}' after a value");
        break;
      }
      ws();
    }
    ws();
    if (i_ != s_.size()) error_at(i_, "text after the dict: ", quote(s_.substr(i_), 24));
    for (int k = 0; k < 3; ++k) {
      if (!seen[k])
        fail<ValueError>("load_npy", "'", path_, "': the header has no '", kKeys[k], "'");
    }
    return h;
  }

 private:
  template <class... Parts>
  [[noreturn]] void error_at(std::size_t at, Parts&&... parts) const {
    fail<ValueError>("load_npy", "'", path_, "': header byte ", at, ": ",
                     std::forward<Parts>(parts)...);
  }
  [[noreturn]] void expected(const char* what) const {
    error_at(i_, "expected ", what, ", found ",
             i_ < s_.size() ? quote(s_.substr(i_), 24) : std::string("the end of the header"));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) expected(what);
  }
  bool at_word(std::string_view w) const {
    if (s_.substr(i_, w.size()) != w) return false;
    const std::size_t e = i_ + w.size();
    return e == s_.size() || !(std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_');
  }

  /// A Python string literal in ' or " quotes, without escapes.
  std::string string_literal(const char* what) {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) expected(what);
    const char q = s_[i_++];
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' || s_[i_] == '\n') {
        error_at(i_, "a string with an escape or a line break, which no .npy header has");
      }
      ++i_;
    }
    if (i_ >= s_.size()) error_at(start - 1, "a string that never ends");
    return std::string(s_.substr(start, i_++ - start));
  }

  bool boolean() {
    for (bool b : {true, false}) {
      if (at_word(b ? "True" : "False")) {
        i_ += b ? 4 : 5;
        return b;
      }
    }
    error_at(i_, "fortran_order is ", quote(s_.substr(i_), 16), ", not True or False");
  }

  /// shape: a tuple of non-negative integers: (), (3,), (2, 3) or (2, 3,).
  Shape tuple() {
    if (!eat('(')) error_at(i_, "shape is ", quote(s_.substr(i_), 24), ", not a tuple");
    Shape shape;
    bool comma = false;
    ws();
    while (!eat(')')) {
      shape.push_back(integer());
      ws();
      comma = eat(',');
      ws();
      if (!comma && !eat(')')) expected("',' or ')' in the shape");
      if (!comma) break;
    }
    if (shape.size() == 1 && !comma) {
      error_at(i_, "shape (", shape[0], ") is an integer in parentheses, not a tuple (", shape[0],
               ",)");
    }
    return shape;
  }

  /// The text of the value starting at start, up to the next separator.
  std::string token(std::size_t start) const {
    std::size_t e = start;
    while (e < s_.size() && !std::strchr(" ,)}\t\r\n", s_[e])) ++e;
    return quote(s_.substr(start, std::max(e, start + 1) - start), 24);
  }

  int64_t integer() {
    const std::size_t start = i_;
    if (eat('-')) error_at(start, "shape entry ", token(start), " is negative");
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      error_at(start, "shape entry ", token(start), " is not an integer");
    }
    int64_t v = 0;
    bool overflow = false;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      overflow = overflow || __builtin_mul_overflow(v, int64_t{10}, &v) ||
                 __builtin_add_overflow(v, int64_t(s_[i_] - '0'), &v);
      ++i_;
    }
    eat('L');  // Python 2's long suffix, in files written before NumPy filtered it
    if (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
      error_at(start, "shape entry ", token(start), " is not an integer");
    }
    if (overflow) error_at(start, "shape entry ", token(start), " does not fit int64");
    return v;
  }

  /// descr: a type string such as '<f4'; a list (structured dtype) or a
  /// tuple (subarray) is a dtype strata does not have.
  void descr(Header& h) {
    if (i_ < s_.size() && (s_[i_] == '[' || s_[i_] == '(')) {
      fail<DTypeError>("load_npy", "'", path_, "': descr ", quote(s_.substr(i_), 24),
                       " is a structured or subarray dtype; strata reads f4, f8, i4, i8, b1");
    }
    const std::size_t at = i_;
    const std::string d = string_literal("descr as a quoted type string such as '<f4'");
    std::string_view code = d;
    char order = '=';
    if (!code.empty() && std::strchr("<>|=", code[0])) {
      order = code[0];
      code.remove_prefix(1);
    }
    for (const NpyType& t : kTypes) {
      if (code == t.code || (t.dtype == DType::b8 && code == "?")) {
        h.dtype = t.dtype;
        h.big_endian = order == '>' ||
                       ((order == '=' || order == '|') && std::endian::native == std::endian::big);
        return;
      }
    }
    // A NumPy type string strata lacks: a kind letter, then letters and
    // digits, maybe a unit in brackets ('<c8', '|O', '<U5', '<M8[ns]').
    const std::size_t body = code.find('[');
    const std::string_view kind = code.substr(0, body);
    const bool numpy_like =
        !kind.empty() && std::isalpha(static_cast<unsigned char>(kind[0])) &&
        std::all_of(kind.begin(), kind.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }) &&
        (body == std::string_view::npos || code.back() == ']');
    if (numpy_like) {
      fail<DTypeError>("load_npy", "'", path_, "': dtype ", quote(d),
                       " is not supported; strata reads f4, f8, i4, i8, b1 (float32, float64, "
                       "int32, int64, bool)");
    }
    error_at(at, "descr ", quote(d), " is not a NumPy type string");
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t i_ = 0;
};

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
  const Header h = HeaderParser(text, path).parse();

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
