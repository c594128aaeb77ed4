// SPDX-License-Identifier: MIT
#include "nn/layers.hpp"

#include <cmath>

#include "core/error.hpp"
#include "nn/init.hpp"
#include "raw/trace.hpp"

namespace strata::nn {

using strata::detail::fail;

std::string_view activation_name(Activation a) {
  switch (a) {
    case Activation::identity:
      return "identity";
    case Activation::relu:
      return "relu";
    case Activation::tanh:
      return "tanh";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::gelu:
      return "gelu";
    case Activation::silu:
      return "silu";
    case Activation::softplus:
      return "softplus";
  }
  return "?";
}

Activation activation_from_name(std::string_view name) {
  for (Activation a :
       {Activation::identity, Activation::relu, Activation::tanh, Activation::sigmoid,
        Activation::gelu, Activation::silu, Activation::softplus}) {
    if (activation_name(a) == name) return a;
  }
  fail<ValueError>("activation_from_name", "unknown activation '", name,
                   "' (known: identity, relu, tanh, sigmoid, gelu, silu, softplus)");
}

namespace detail {

void check_linear_input(const Shape& x, int64_t in_features, std::string_view op) {
  if (x.ndim() == 0 || x[x.size() - 1] != in_features) {
    fail<ShapeError>(op, "input of shape ", x, " does not end in in_features = ", in_features);
  }
}

void check_param_shape(const Shape& got, const Shape& expected, const std::string& name,
                       std::string_view op) {
  if (got != expected) {
    fail<ShapeError>(op, "parameter '", name, "' has shape ", got, ", expected ", expected);
  }
}

}  // namespace detail

namespace {
void require_positive(int64_t v, std::string_view what, std::string_view op) {
  if (v <= 0) fail<ValueError>(op, what, " must be positive, got ", v);
}
void require_float_dtype(DType dtype, std::string_view op) {
  if (!is_floating(dtype))
    fail<DTypeError>(op, "parameters need a float dtype, got ", dtype_name(dtype));
}
}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype,
               std::string prefix)
    : in_(in_features),
      out_(out_features),
      bias_(bias),
      dtype_(dtype),
      weight_name_(prefix + "weight"),
      bias_name_(prefix + "bias") {
  require_positive(in_features, "in_features", "Linear");
  require_positive(out_features, "out_features", "Linear");
  require_float_dtype(dtype, "Linear");
}

Params Linear::init(uint64_t seed) const {
  const double bound = 1.0 / std::sqrt(double(in_));
  Params p;
  p.emplace(weight_name_, init::uniform({out_, in_}, -bound, bound, derive_seed(seed, 0), dtype_));
  if (bias_)
    p.emplace(bias_name_, init::uniform({out_}, -bound, bound, derive_seed(seed, 1), dtype_));
  return p;
}

MLP::MLP(std::vector<int64_t> widths, Activation activation, DType dtype)
    : widths_(std::move(widths)), activation_(activation) {
  if (widths_.size() < 2) {
    fail<ValueError>("MLP", "needs at least two widths (in and out), got ", widths_.size());
  }
  for (std::size_t i = 0; i + 1 < widths_.size(); ++i) {
    layers_.emplace_back(widths_[i], widths_[i + 1], true, dtype, std::to_string(i) + ".");
  }
}

Params MLP::init(uint64_t seed) const {
  Params p;
  for (std::size_t i = 0; i < layers_.size(); ++i) p.merge(layers_[i].init(derive_seed(seed, i)));
  return p;
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, DType dtype, std::string prefix)
    : num_(num_embeddings), dim_(dim), dtype_(dtype), weight_name_(prefix + "weight") {
  require_positive(num_embeddings, "num_embeddings", "Embedding");
  require_positive(dim, "dim", "Embedding");
  require_float_dtype(dtype, "Embedding");
}

Params Embedding::init(uint64_t seed) const {
  return {{weight_name_, init::normal({num_, dim_}, 0.0, 1.0, derive_seed(seed, 0), dtype_)}};
}

}  // namespace strata::nn
