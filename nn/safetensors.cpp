// SPDX-License-Identifier: MIT
#include "nn/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "nn/file_io.hpp"
#include "nn/json.hpp"
#include "raw/ops.hpp"

namespace strata {

namespace {

using json = nlohmann::json;
using strata::detail::fail;
using strata::detail::quote;
using strata::detail::shape_text;

/// The reference implementation refuses headers above 100 MB; so do we.
constexpr uint64_t kMaxHeader = 100'000'000;
/// A header is an object of objects of scalars and small arrays (depth 3);
/// the margin admits unknown extra fields, which are ignored.
constexpr int kMaxHeaderDepth = 16;

/// Reverses each element's bytes (only on big-endian hosts: the format is little-endian).
void to_little_endian(char* data, std::size_t bytes, std::size_t elem) {
  if constexpr (std::endian::native == std::endian::big) {
    for (std::size_t i = 0; i + elem <= bytes; i += elem) std::reverse(data + i, data + i + elem);
  } else {
    (void)data, (void)bytes, (void)elem;
  }
}

/// Throws ValueError when s (a name or metadata text) is not UTF-8: the
/// header is JSON text, which must be.
void require_utf8(const std::string& s, const std::string& path, const char* what) {
  std::size_t at = 0;
  if (!detail::is_utf8(s, &at)) {
    fail<ValueError>("save_safetensors", "'", path, "': ", what, " ", quote(s),
                     " is not valid UTF-8 (byte ", at,
                     "); a safetensors header is JSON text, which must be UTF-8");
  }
}

void save_impl(const std::string& path, const std::map<std::string, Tensor>& tensors,
               const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  json header = json::object();
  for (const auto& [k, v] : metadata) {
    require_utf8(k, path, "metadata key");
    require_utf8(v, path, "metadata value");
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__") {
      fail<ValueError>(op, "'", path, "': invalid tensor name ", quote(name));
    }
    require_utf8(name, path, "tensor name");
    if (!t.defined()) fail<ValueError>(op, "'", path, "': tensor ", quote(name), " is undefined");
    const uint64_t bytes = uint64_t(t.numel()) * dtype_size(t.dtype());
    std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
    header[name] = {{"dtype", detail::safetensors_dtype_name(t.dtype())},
                    {"shape", shape},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string h = header.dump();          // cannot throw: every string was checked to be UTF-8
  h.append((8 - h.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, like the reference
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(uint64_t(h.size()) >> (8 * i));

  detail::AtomicFile file(path, op);
  file.write(len, 8);
  file.write(h.data(), h.size());
  std::vector<char> buf;
  for (const auto& [name, t] : tensors) {
    const std::size_t elem = dtype_size(t.dtype());
    buf.resize(std::size_t(t.numel()) * elem);
    raw::to_host(t.raw(), buf.data());  // row-major, whatever t's layout
    to_little_endian(buf.data(), buf.size(), elem);
    file.write(buf.data(), buf.size());
  }
  file.commit();
}

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  detail::guard_file_op("save_safetensors", path, [&] { save_impl(path, tensors, metadata); });
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

/// Throws ValueError "op: 'path': parts...".
template <class... Parts>
[[noreturn]] void bad(const char* op, const std::string& path, Parts&&... parts) {
  fail<ValueError>(op, "'", path, "': ", std::forward<Parts>(parts)...);
}

/// Refuses JSON text nested deeper than kMaxHeaderDepth before it is parsed,
/// so no later step (parsing, a message) can recurse without bound.
void check_depth(const std::string& text, const char* op, const std::string& path) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxHeaderDepth) {
        bad(op, path, "the header nests deeper than ", kMaxHeaderDepth, " levels (at byte ", i,
            "); a header is an object of objects of scalars and small arrays");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

uint64_t as_offset(const json& v, const char* op, const std::string& path, const std::string& name,
                   const char* what) {
  if (!v.is_number_unsigned()) {
    bad(op, path, "tensor ", quote(name), ": ", what, " ", detail::json_excerpt(v),
        " is not a non-negative integer");
  }
  return v.get<uint64_t>();
}

Parsed parse(const detail::InputFile& in, const char* op, const std::string& path) {
  const uint64_t size = in.size();
  if (size < 8) bad(op, path, "file of ", size, " bytes is shorter than the 8-byte header length");
  unsigned char len[8];
  in.read_at(0, len, 8, "the header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(len[i]) << (8 * i);
  if (n > size - 8) {
    bad(op, path, "header length ", n, " exceeds the ", size - 8,
        " bytes after it (truncated file?)");
  }
  if (n > kMaxHeader) bad(op, path, "header length ", n, " exceeds the limit of ", kMaxHeader);
  std::string text(static_cast<std::size_t>(n), '\0');
  in.read_at(8, text.data(), text.size(), "the header");
  check_depth(text, op, path);

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
    // nlohmann's message quotes the last token read, which may be long: a bounded prefix.
    bad(op, path, "the header is not valid JSON (", std::string_view(e.what()).substr(0, 160), ")");
  }
  if (!duplicate.empty()) bad(op, path, "the header names ", quote(duplicate), " twice");
  if (!header.is_object()) bad(op, path, "the header is not a JSON object");

  Parsed out;
  out.data_start = 8 + n;
  const uint64_t data_size = size - 8 - n;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) bad(op, path, "__metadata__ is not an object");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) bad(op, path, "__metadata__ value of ", quote(k), " is not a string");
        out.metadata.emplace(k, v.get<std::string>());
      }
      continue;
    }
    const std::string q = quote(name);
    if (!info.is_object()) bad(op, path, "tensor ", q, ": its entry is not an object");
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!info.contains(key)) bad(op, path, "tensor ", q, ": no \"", key, "\"");
    }
    const json& d = info["dtype"];
    if (!d.is_string()) {
      bad(op, path, "tensor ", q, ": dtype ", detail::json_excerpt(d), " is not a string");
    }
    const std::optional<DType> dtype = detail::safetensors_dtype(d.get<std::string>());
    if (!dtype) {
      fail<DTypeError>(op, "'", path, "': tensor ", q, " has dtype ", detail::json_excerpt(d),
                       ", not one of F32, F64, I32, I64, BOOL");
    }
    const json& s = info["shape"];
    if (!s.is_array()) {
      bad(op, path, "tensor ", q, ": shape ", detail::json_excerpt(s), " is not an array");
    }
    Shape shape;
    for (const json& dim : s) {
      const uint64_t v = as_offset(dim, op, path, name, "shape entry");
      if (v > uint64_t(INT64_MAX))
        bad(op, path, "tensor ", q, ": shape entry ", v, " is too large");
      shape.push_back(int64_t(v));
    }
    const json& o = info["data_offsets"];
    if (!o.is_array() || o.size() != 2) {
      bad(op, path, "tensor ", q, ": data_offsets ", detail::json_excerpt(o),
          " is not [begin, end]");
    }
    const uint64_t begin = as_offset(o[0], op, path, name, "data offset");
    const uint64_t end = as_offset(o[1], op, path, name, "data offset");
    if (begin > end) {
      bad(op, path, "tensor ", q, ": data_offsets [", begin, ", ", end, "] are reversed");
    }
    if (end > data_size) {
      bad(op, path, "tensor ", q, ": data_offsets [", begin, ", ", end, "] reach past the ",
          data_size, " bytes of data (truncated file?)");
    }
    // Element count (strata's rule: raw::empty must accept the shape) and byte size.
    const uint64_t count = uint64_t(detail::file_numel(shape, op, path, "tensor " + q));
    const uint64_t elem = dtype_size(*dtype);
    if (count > UINT64_MAX / elem) {
      bad(op, path, "tensor ", q, ": the byte count of shape ", shape_text(shape), " overflows");
    }
    if (count * elem != end - begin) {
      bad(op, path, "tensor ", q, ": shape ", shape_text(shape), " of ",
          detail::safetensors_dtype_name(*dtype), " needs ", count * elem,
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
      bad(op, path, "tensor ", quote(e.name), " (bytes [", e.begin, ", ", e.end,
          ")) overlaps tensor ", quote(prev->name), " (bytes [", prev->begin, ", ", prev->end,
          "))");
    }
    if (e.begin > at) {
      bad(op, path, "bytes [", at, ", ", e.begin, ") of the data belong to no tensor");
    }
    at = e.end;
    prev = &e;
  }
  if (at != data_size) {
    bad(op, path, "the data region has ", data_size, " bytes but the tensors cover ", at);
  }
  return out;
}

std::map<std::string, Tensor> load_impl(const std::string& path) {
  const char* op = "load_safetensors";
  const detail::InputFile in(path, op);
  const Parsed p = parse(in, op, path);
  std::map<std::string, Tensor> out;
  for (const Entry& e : p.entries) {
    // Checked above: the shape's byte size equals end - begin, inside the file.
    RawTensor t = raw::empty(e.shape, e.dtype, Device::cpu());  // filled from the file here
    const std::size_t bytes = std::size_t(e.end - e.begin);
    if (bytes > 0) {
      char* dst = static_cast<char*>(t.storage()->data());
      in.read_at(p.data_start + e.begin, dst, bytes, "tensor " + quote(e.name));
      to_little_endian(dst, bytes, dtype_size(e.dtype));
      if (e.dtype == DType::b8) {
        for (std::size_t i = 0; i < bytes; ++i) {
          if (static_cast<unsigned char>(dst[i]) > 1) {
            bad(op, path, "tensor ", quote(e.name), ": BOOL element ", i, " is byte ",
                int(static_cast<unsigned char>(dst[i])), ", not 0 or 1");
          }
        }
      }
    }
    out.emplace(e.name, Tensor(std::move(t)));
  }
  return out;
}

}  // namespace

std::map<std::string, Tensor> load_safetensors(const std::string& path) {
  return detail::guard_file_op("load_safetensors", path, [&] { return load_impl(path); });
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  const char* op = "load_safetensors_metadata";
  return detail::guard_file_op(op, path, [&] {
    const detail::InputFile in(path, op);
    return parse(in, op, path).metadata;
  });
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
