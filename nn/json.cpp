// SPDX-License-Identifier: MIT
#include "nn/json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/file_io.hpp"
#include "nn/safetensors.hpp"

namespace strata {

using json = nlohmann::json;
using strata::detail::fail;

namespace {

constexpr const char* kNaN = "NaN";
constexpr const char* kInf = "Infinity";
constexpr const char* kNegInf = "-Infinity";

/// Appends v's excerpt to out, stopping once out reaches max (see json_excerpt).
void excerpt(const json& v, int depth, std::string& out, std::size_t max) {
  if (v.is_string()) {
    out += detail::quote(v.get_ref<const std::string&>(), 32);
  } else if (v.is_array() || v.is_object()) {
    const bool obj = v.is_object();
    out += obj ? "{" : "[";
    if (depth >= 2 && !v.empty()) {
      out += "...";
    } else {
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (out.size() >= max) {
          out += ", ...";
          break;
        }
        if (!first) out += ", ";
        first = false;
        if (obj) out += detail::quote(it.key(), 32) + ": ";
        excerpt(it.value(), depth + 1, out, max);
      }
    }
    out += obj ? "}" : "]";
  } else {
    out += v.dump();  // a number, bool or null: short, and dump cannot fail on it
  }
}

/// The value of a JSON number or NaN/Infinity string for a float dtype, or
/// a ValueError naming the value and the dtype.
double float_value(const json& e, const char* dtype, bool is_f32) {
  if (e.is_number()) {
    const double x = e.get<double>();
    // Numbers beyond F32's range would round to infinity: refuse them rather
    // than change the value (0x1.ffffffp127 is the midpoint of FLT_MAX and 2^128).
    if (is_f32 && std::isfinite(x) && std::abs(x) >= 0x1.ffffffp127) {
      fail<ValueError>("from_json", "data value ", e.dump(), " is out of range for ", dtype,
                       " (largest finite value 3.4028234663852886e+38)");
    }
    return x;
  }
  if (e.is_string()) {
    const std::string& s = e.get_ref<const std::string&>();
    if (s == kNaN) return std::numeric_limits<double>::quiet_NaN();
    if (s == kInf) return std::numeric_limits<double>::infinity();
    if (s == kNegInf) return -std::numeric_limits<double>::infinity();
  }
  fail<ValueError>("from_json", "data value ", detail::json_excerpt(e), " is not a number or \"",
                   kNaN, "\", \"", kInf, "\", \"", kNegInf, "\" (dtype ", dtype, ")");
}

/// The value of a JSON integer that fits [lo, hi], or a ValueError naming
/// the value and the dtype (never a wrapped value).
int64_t int_value(const json& e, int64_t lo, int64_t hi, const char* dtype) {
  auto out_of_range = [&]() {
    fail<ValueError>("from_json", "data value ", e.dump(), " is out of range for ", dtype, " [", lo,
                     ", ", hi, "]");
  };
  if (e.is_number_unsigned()) {
    const uint64_t u = e.get<uint64_t>();
    if (u > uint64_t(hi)) out_of_range();
    return int64_t(u);
  }
  if (e.is_number_integer()) {
    const int64_t s = e.get<int64_t>();
    if (s < lo || s > hi) out_of_range();
    return s;
  }
  if (e.is_number_float()) {
    // An integer too large for JSON's 64-bit integers is parsed as a float.
    const double x = e.get<double>();
    if (std::isfinite(x) && x == std::trunc(x) && (x < double(lo) || x >= -double(lo))) {
      out_of_range();
    }
  }
  fail<ValueError>("from_json", "data value ", detail::json_excerpt(e),
                   " is not an integer (dtype ", dtype, ")");
}

template <class T, class Get>
Tensor values(const json& data, const Shape& shape, Get get) {
  std::vector<T> v;
  v.reserve(data.size());
  for (const json& e : data) v.push_back(static_cast<T>(get(e)));
  return from_vector(v, shape);
}

void from_json_impl(const json& j, Tensor& t) {
  const char* op = "from_json";
  if (!j.is_object()) {
    fail<ValueError>(op, "a tensor must be a JSON object, got ", detail::json_excerpt(j));
  }
  for (const char* key : {"dtype", "shape", "data"}) {
    if (!j.contains(key)) fail<ValueError>(op, "no \"", key, "\" in ", detail::json_excerpt(j));
  }
  const json &d = j["dtype"], &s = j["shape"], &data = j["data"];
  const std::optional<DType> dtype =
      d.is_string() ? detail::safetensors_dtype(d.get<std::string>()) : std::nullopt;
  if (!dtype) {
    fail<DTypeError>(op, "dtype ", detail::json_excerpt(d),
                     " is not one of F32, F64, I32, I64, BOOL");
  }
  if (!s.is_array()) fail<ValueError>(op, "shape ", detail::json_excerpt(s), " is not an array");
  Shape shape;
  for (const json& dim : s) {
    const bool ok = dim.is_number_unsigned() ? dim.get<uint64_t>() <= uint64_t(INT64_MAX)
                                             : dim.is_number_integer() && dim.get<int64_t>() >= 0;
    if (!ok) {
      fail<ValueError>(op, "shape ", detail::json_excerpt(s), " has entry ",
                       detail::json_excerpt(dim), ", not an integer in [0, 2^63)");
    }
    shape.push_back(dim.get<int64_t>());
  }
  const int64_t n = checked_numel(shape, op);
  if (!data.is_array() || int64_t(data.size()) != n) {
    fail<ValueError>(op, "data must be an array of ", n, " values for shape ",
                     detail::shape_text(shape), ", got ", detail::json_excerpt(data));
  }
  switch (*dtype) {
    case DType::f32:
      t = values<float>(data, shape, [](const json& e) { return float_value(e, "F32", true); });
      break;
    case DType::f64:
      t = values<double>(data, shape, [](const json& e) { return float_value(e, "F64", false); });
      break;
    case DType::i32:
      t = values<int32_t>(data, shape,
                          [](const json& e) { return int_value(e, INT32_MIN, INT32_MAX, "I32"); });
      break;
    case DType::i64:
      t = values<int64_t>(data, shape,
                          [](const json& e) { return int_value(e, INT64_MIN, INT64_MAX, "I64"); });
      break;
    case DType::b8:
      t = values<bool>(data, shape, [](const json& e) {
        if (!e.is_boolean()) {
          fail<ValueError>("from_json", "data value ", detail::json_excerpt(e),
                           " is not true or false (dtype BOOL)");
        }
        return e.get<bool>();
      });
      break;
  }
}

/// Floats as JSON numbers, NaN and infinities as their strings.
template <class T>
json float_array(const std::vector<T>& v) {
  json a = json::array();
  a.get_ref<json::array_t&>().reserve(v.size());
  for (T x : v) {
    if (std::isfinite(x)) {
      a.push_back(x);
    } else {
      a.push_back(std::isnan(x) ? kNaN : x > 0 ? kInf : kNegInf);
    }
  }
  return a;
}

}  // namespace

void to_json(json& j, const Tensor& t) {
  if (!t.defined()) fail<ValueError>("to_json", "undefined tensor");
  j = json::object();
  j["dtype"] = detail::safetensors_dtype_name(t.dtype());
  j["shape"] = std::vector<int64_t>(t.shape().begin(), t.shape().end());
  switch (t.dtype()) {
    case DType::f32:
      j["data"] = float_array(t.to_vector<float>());
      break;
    case DType::f64:
      j["data"] = float_array(t.to_vector<double>());
      break;
    case DType::i32:
      j["data"] = t.to_vector<int32_t>();
      break;
    case DType::i64:
      j["data"] = t.to_vector<int64_t>();
      break;
    case DType::b8: {
      const std::vector<bool> v = t.to_vector<bool>();
      j["data"] = json::array();
      for (bool b : v) j["data"].push_back(b);
      break;
    }
  }
}

void from_json(const json& j, Tensor& t) {
  try {
    from_json_impl(j, t);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail<ValueError>("from_json", std::string_view(e.what()).substr(0, 200));
  }
}

namespace detail {

std::string json_excerpt(const json& v, std::size_t max_chars) {
  std::string out;
  excerpt(v, 0, out, max_chars);
  if (out.size() > max_chars + 16) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

}  // namespace detail
}  // namespace strata
