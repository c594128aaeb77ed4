// SPDX-License-Identifier: MIT
#pragma once
/// Parameters are trees: a named map of tensors, like a PyTorch state_dict
/// ("0.weight", "0.bias", ...). The transforms differentiate such maps
/// directly: st::grad(loss, params) returns a map of gradients with the same
/// names, and the optimisers update a map in place.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "diff/tensor.hpp"

/// Neural-network building blocks: parameters, layers, losses, optimisers, data.
namespace strata::nn {

/// Named parameters (or gradients) of plain tensors.
using Params = std::map<std::string, Tensor>;

/// Named parameters at any level of the AD stack (what a layer is applied to).
template <class T>
using ParamsOf = std::map<std::string, T>;

/// The total number of elements of every tensor in the map.
int64_t num_parameters(const Params& params);

/// A seed for stream `stream` of `seed` (SplitMix64 of both): layers draw each
/// tensor from its own stream, so adding a layer never shifts the others.
uint64_t derive_seed(uint64_t seed, uint64_t stream);

namespace detail {
[[noreturn]] void missing_parameter(std::string_view op, const std::string& name,
                                    std::string_view available);
}  // namespace detail

/// p[name], or a ValueError naming the layer, the missing name and the names present.
template <class T>
const T& parameter(const ParamsOf<T>& p, const std::string& name, std::string_view op) {
  auto it = p.find(name);
  if (it == p.end()) {
    std::string names;
    for (const auto& [k, v] : p) names += (names.empty() ? "" : ", ") + k;
    detail::missing_parameter(op, name, names);
  }
  return it->second;
}

}  // namespace strata::nn
