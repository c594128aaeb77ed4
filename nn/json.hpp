// SPDX-License-Identifier: MIT
#pragma once
/// A single tensor as JSON, for small tensors in configuration files:
///   {"dtype": "F32", "shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]}
/// (safetensors dtype names; data row-major; bools as true/false). Found by
/// nlohmann/json through argument-dependent lookup:
///   nlohmann::json j = t;   st::Tensor u = j.get<st::Tensor>();
/// This header is not part of <strata.hpp>, so that only the programs that
/// use it need nlohmann/json's headers.
#include <nlohmann/json_fwd.hpp>

#include "diff/tensor.hpp"

namespace strata {

/// Writes t as {"dtype", "shape", "data"} (any layout; data row-major).
void to_json(nlohmann::json& j, const Tensor& t);
/// Throws ValueError (DTypeError for an unknown dtype) for malformed JSON.
void from_json(const nlohmann::json& j, Tensor& t);

}  // namespace strata
