// SPDX-License-Identifier: MIT
#pragma once
/// Layers in the functional style of JAX/Flax: a layer object holds its
/// configuration; `init(seed)` returns its parameters as a named map of
/// tensors; applying it, `layer(params, x)`, is a template over the Diffable
/// types of the parameters and the input, so the same call runs on plain
/// tensors and inside grad, jacfwd or hessian (with respect to the
/// parameters, the input, or both).
///
///   st::nn::MLP model({2, 64, 64, 2}, st::nn::Activation::relu);
///   st::nn::Params params = model.init(/*seed=*/0);
///   auto loss = [&](const auto& p) { return st::nn::cross_entropy(model(p, x), labels); };
///   st::nn::Params grads = st::grad(loss, params);
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diff/ops.hpp"
#include "nn/params.hpp"

namespace strata::nn {

// --- activations ------------------------------------------------------------
/// The activation functions a layer can apply, by name.
enum class Activation {
  identity,  ///< x
  relu,      ///< st::relu
  tanh,      ///< st::tanh
  sigmoid,   ///< st::sigmoid
  gelu,      ///< st::gelu (tanh approximation)
  silu,      ///< st::silu
  softplus   ///< st::softplus
};

/// The activation's name ("relu", ...).
std::string_view activation_name(Activation a);
/// The activation named `name`; ValueError for an unknown name.
Activation activation_from_name(std::string_view name);

/// a(x) on any Diffable type.
template <Diffable T>
T activate(Activation a, const T& x) {
  switch (a) {
    case Activation::identity:
      return x;
    case Activation::relu:
      return relu(x);
    case Activation::tanh:
      return tanh(x);
    case Activation::sigmoid:
      return sigmoid(x);
    case Activation::gelu:
      return gelu(x);
    case Activation::silu:
      return silu(x);
    case Activation::softplus:
      return softplus(x);
  }
  return x;
}

namespace detail {
void check_linear_input(const Shape& x, int64_t in_features, std::string_view op);
void check_param_shape(const Shape& got, const Shape& expected, const std::string& name,
                       std::string_view op);
}  // namespace detail

// --- Linear -----------------------------------------------------------------
/// y = x W^T + b over the last axis of x (torch.nn.Linear): "weight" is
/// [out, in], "bias" is [out]. x is [..., in] (any number of leading axes).
class Linear {
 public:
  /// Parameter names are prefix + "weight" and prefix + "bias".
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = f32,
         std::string prefix = "");

  /// PyTorch's default initialisation: weight and bias U(-1/sqrt(in), 1/sqrt(in)).
  Params init(uint64_t seed) const;

  /// x [..., in] -> [..., out] with the parameters in p, at any level of T and X. Throws
  /// ValueError for a missing parameter, ShapeError for a wrong parameter or input shape.
  /// Example: `st::Tensor y = layer(params, x);`
  template <Diffable T, Diffable X>
  common_level_t<T, X> operator()(const ParamsOf<T>& p, const X& x) const {
    detail::check_linear_input(x.shape(), in_, "Linear");
    const T& w = parameter(p, weight_name_, "Linear");
    detail::check_param_shape(w.shape(), {out_, in_}, weight_name_, "Linear");
    // y = x W^T. Reverse mode returns W's gradient in W's own (row-major)
    // layout (ad/rules.hpp, matmul_vjp), so optimisers update it with
    // unit-stride loops, and y is contiguous for the ops that follow.
    auto y = matmul(x, transpose(w, 0, 1));
    if (!bias_) return y;
    const T& b = parameter(p, bias_name_, "Linear");
    detail::check_param_shape(b.shape(), {out_}, bias_name_, "Linear");
    return y + b;
  }

  /// The input width.
  int64_t in_features() const { return in_; }
  /// The output width.
  int64_t out_features() const { return out_; }
  /// Whether the layer adds a bias.
  bool has_bias() const { return bias_; }
  /// The weight's parameter name (prefix + "weight").
  const std::string& weight_name() const { return weight_name_; }
  /// The bias's parameter name (prefix + "bias").
  const std::string& bias_name() const { return bias_name_; }

 private:
  int64_t in_, out_;
  bool bias_;
  DType dtype_;
  std::string weight_name_, bias_name_;
};

// --- MLP --------------------------------------------------------------------
/// A stack of Linear layers with an activation between them (none after the
/// last). widths = {in, hidden..., out}; layer i has parameters "i.weight"
/// and "i.bias" (i counts Linear layers from 0).
class MLP {
 public:
  /// widths = {in, hidden..., out}, at least two entries, each > 0 (ValueError otherwise).
  explicit MLP(std::vector<int64_t> widths, Activation activation = Activation::relu,
               DType dtype = f32);

  /// Each layer initialised like Linear::init, layer i from derive_seed(seed, i).
  Params init(uint64_t seed) const;

  /// x [..., in] -> [..., out] through every layer. Throws like Linear's call.
  /// Example: `st::Tensor logits = model(params, x);`
  template <Diffable T, Diffable X>
  common_level_t<T, X> operator()(const ParamsOf<T>& p, const X& x) const {
    common_level_t<T, X> h = layers_.front()(p, x);
    for (std::size_t i = 1; i < layers_.size(); ++i) h = layers_[i](p, activate(activation_, h));
    return h;
  }

  /// The Linear layers, first to last.
  const std::vector<Linear>& layers() const { return layers_; }
  /// {in, hidden..., out}.
  const std::vector<int64_t>& widths() const { return widths_; }
  /// The activation between layers.
  Activation activation() const { return activation_; }

 private:
  std::vector<int64_t> widths_;
  Activation activation_;
  std::vector<Linear> layers_;
};

// --- Embedding --------------------------------------------------------------
/// A lookup table (torch.nn.Embedding): "weight" is [num, dim]; indices of
/// any shape S (i32 or i64, each in [0, num)) give S ++ [dim]. The gradient
/// is a scatter-add into the rows that were looked up (index_add).
class Embedding {
 public:
  /// A table of num_embeddings rows of dim values; the parameter is prefix + "weight".
  Embedding(int64_t num_embeddings, int64_t dim, DType dtype = f32, std::string prefix = "");

  /// PyTorch's default: weight N(0, 1).
  Params init(uint64_t seed) const;

  /// The rows at `indices`: shape indices.shape() ++ [dim]. Throws IndexError for an index
  /// outside [0, num), DTypeError for non-integer indices.
  template <Diffable T>
  T operator()(const ParamsOf<T>& p, const Tensor& indices) const {
    const T& w = parameter(p, weight_name_, "Embedding");
    detail::check_param_shape(w.shape(), {num_, dim_}, weight_name_, "Embedding");
    strata::detail::check_positions(indices, num_, "Embedding");
    return take(w, indices, 0);
  }

  /// The number of rows.
  int64_t num_embeddings() const { return num_; }
  /// The width of a row.
  int64_t dim() const { return dim_; }
  /// The table's parameter name (prefix + "weight").
  const std::string& weight_name() const { return weight_name_; }

 private:
  int64_t num_, dim_;
  DType dtype_;
  std::string weight_name_;
};

}  // namespace strata::nn
