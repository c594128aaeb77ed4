// SPDX-License-Identifier: MIT
#include "nn/json.hpp"
#include "nn/safetensors.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace strata {

using strata::detail::fail;

void to_json(nlohmann::json& j, const Tensor& t) {
  if (!t.defined()) fail<ValueError>("to_json", "undefined tensor");
  j = nlohmann::json::object();
  j["dtype"] = detail::safetensors_dtype_name(t.dtype());
  j["shape"] = std::vector<int64_t>(t.shape().begin(), t.shape().end());
  switch (t.dtype()) {
    case DType::f32:
      j["data"] = t.to_vector<float>();
      break;
    case DType::f64:
      j["data"] = t.to_vector<double>();
      break;
    case DType::i32:
      j["data"] = t.to_vector<int32_t>();
      break;
    case DType::i64:
      j["data"] = t.to_vector<int64_t>();
      break;
    case DType::b8: {
      const std::vector<bool> v = t.to_vector<bool>();
      j["data"] = nlohmann::json::array();
      for (bool b : v) j["data"].push_back(b);
      break;
    }
  }
}

void from_json(const nlohmann::json& j, Tensor& t) {
  const char* op = "from_json";
  if (!j.is_object()) fail<ValueError>(op, "a tensor must be a JSON object, got ", j.dump());
  for (const char* key : {"dtype", "shape", "data"}) {
    if (!j.contains(key)) fail<ValueError>(op, "no \"", key, "\" in ", j.dump());
  }
  const nlohmann::json &d = j["dtype"], &s = j["shape"], &data = j["data"];
  Shape shape;
  if (!s.is_array()) fail<ValueError>(op, "shape ", s.dump(), " is not an array");
  for (const auto& dim : s) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
      fail<ValueError>(op, "shape ", s.dump(), " has an entry that is not a non-negative integer");
    }
    shape.push_back(dim.get<int64_t>());
  }
  const int64_t n = checked_numel(shape, op);
  if (!data.is_array() || int64_t(data.size()) != n) {
    fail<ValueError>(op, "data must be an array of ", n, " values for shape ", shape);
  }
  const std::string name = d.is_string() ? d.get<std::string>() : d.dump();
  auto values = [&]<class T>(auto ok, const char* what) {
    std::vector<T> v;
    v.reserve(data.size());
    for (const auto& e : data) {
      if (!ok(e)) fail<ValueError>(op, "data value ", e.dump(), " is not ", what);
      v.push_back(e.template get<T>());
    }
    return from_vector(v, shape);
  };
  auto is_num = [](const nlohmann::json& e) { return e.is_number(); };
  auto is_int = [](const nlohmann::json& e) { return e.is_number_integer(); };
  if (name == "F32") {
    t = values.operator()<float>(is_num, "a number");
  } else if (name == "F64") {
    t = values.operator()<double>(is_num, "a number");
  } else if (name == "I32") {
    auto is_i32 = [](const nlohmann::json& e) {
      return e.is_number_integer() && e.get<int64_t>() >= INT32_MIN &&
             e.get<int64_t>() <= INT32_MAX;
    };
    t = values.operator()<int32_t>(is_i32, "a 32-bit integer");
  } else if (name == "I64") {
    t = values.operator()<int64_t>(is_int, "an integer");
  } else if (name == "BOOL") {
    t = values.operator()<bool>([](const nlohmann::json& e) { return e.is_boolean(); }, "a bool");
  } else {
    fail<DTypeError>(op, "dtype ", d.dump(), " is not one of F32, F64, I32, I64, BOOL");
  }
}

}  // namespace strata
