// SPDX-License-Identifier: MIT
#pragma once
/// A single tensor as JSON, for small tensors in configuration files:
///   {"dtype": "F32", "shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]}
/// (safetensors dtype names; data row-major; bools as true/false). Found by
/// nlohmann/json through argument-dependent lookup:
///   nlohmann::json j = t;   st::Tensor u = j.get<st::Tensor>();
/// JSON numbers have no NaN or infinity, so F32/F64 data writes them as the
/// strings "NaN", "Infinity" and "-Infinity" (the spellings of JavaScript and
/// of Python's json module) and reads those strings back; a NaN's sign and
/// payload are not kept. Every value must fit the dtype: an integer outside
/// I32/I64 or a number beyond F32's range is a ValueError, never wrapped.
/// from_json throws only st::Error subclasses and never recurses into the
/// input (a value nested 100k levels deep is just a bad value).
/// This header is not part of <strata.hpp>, so that only the programs that
/// use it need nlohmann/json's headers.
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "diff/tensor.hpp"

namespace strata {

/// j = t's JSON form (above). Throws ValueError for an undefined tensor.
void to_json(nlohmann::json& j, const Tensor& t);
/// t = the tensor j describes. Throws ValueError (DTypeError for an unknown
/// dtype) for malformed JSON or a value that does not fit the dtype.
void from_json(const nlohmann::json& j, Tensor& t);

namespace detail {
/// v for an error message: at most about max_chars of JSON-like text, at
/// most 3 levels deep ("[[[...]]]"), strings quoted with detail::quote, so
/// neither a deep nor a long nor a non-UTF-8 value can break the message.
std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars = 80);
}  // namespace detail

}  // namespace strata
