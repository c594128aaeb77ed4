// SPDX-License-Identifier: MIT
#include "nn/npy_header.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>

#include "core/error.hpp"
#include "nn/file_io.hpp"

namespace strata::detail {

namespace {

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

/// Reads the header's dict literal: exactly 'descr', 'fortran_order' and
/// 'shape', each once. A loop over the text with no recursion: anything
/// nested where a scalar belongs is an error at its first character.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
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
  void descr(NpyHeader& h) {
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

}  // namespace

NpyHeader parse_npy_header(std::string_view text, const std::string& path) {
  return HeaderParser(text, path).parse();
}

const char* npy_code(DType d) {
  for (const NpyType& t : kTypes) {
    if (t.dtype == d) return t.code;
  }
  return "?";
}

}  // namespace strata::detail
