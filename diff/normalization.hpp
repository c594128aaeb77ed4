// SPDX-License-Identifier: MIT
#pragma once
/// The normalisation layers as composites (DESIGN §9): layer_norm, rms_norm, group_norm and
/// batch_norm, with torch.nn.functional's semantics. Statistics are two-pass (the mean, then
/// the mean of squared deviations), never E[x^2] - E[x]^2, which cancels catastrophically
/// when |mean| >> std. Normalisation divides by the biased (population) standard deviation;
/// batch_norm's running variance is updated with the unbiased one, as PyTorch does.
///
/// Every op runs at every level, so it differentiates to any order and maps under st::vmap.
/// The optional affine parameters are separate overloads; x, weight and bias may be of
/// different levels (a plain input and differentiated parameters), the result is their
/// common level.
#include <cstdint>
#include <optional>
#include <string_view>

#include "diff/movement.hpp"
#include "diff/statistics.hpp"

namespace strata {

namespace detail {
// The shape checks (normalization.cpp): each names the op, the shapes and the fix.
/// The normalized axes of layer_norm / rms_norm: the last normalized_shape.ndim() axes,
/// after checking that x ends with normalized_shape and that eps is finite and >= 0.
Shape normalized_axes(const Shape& x, const Shape& normalized_shape, double eps,
                      std::string_view op);
/// Throws ShapeError unless a parameter `what` of shape `got` has shape `want`.
void check_param(const Shape& got, const Shape& want, std::string_view what, std::string_view op);
/// group_norm: x is [N, C, *] with C divisible by groups > 0, eps finite and >= 0.
void check_group_norm(const Shape& x, int64_t groups, double eps);
/// batch_norm: x is [N, C, *], the running statistics [C], more than one value per channel in
/// training, eps finite and >= 0, momentum finite. Returns C.
int64_t check_batch_norm(const Shape& x, const Shape& mean, const Shape& var, bool training,
                         double momentum, double eps);

/// 1 / sqrt(v + eps): the reciprocal is taken of the reduced statistics, so the full-size
/// tensor is multiplied, not divided (as PyTorch's rstd; a division costs several products).
template <Diffable T>
T reciprocal_std(const T& v, double eps) {
  return 1.0 / sqrt(v + eps);
}
/// (x - mean) / sqrt(var + eps) over `axes`, two-pass, with the biased variance.
template <Diffable T>
T standardize(const T& x, const Shape& axes, double eps) {
  const T d = x - mean(x, axes, true);
  return d * reciprocal_std(mean(d * d, axes, true), eps);
}

/// A per-channel vector [C] shaped to broadcast against [N, C, *] of rank `ndim`.
template <Diffable T>
T channel_view(const T& v, int64_t ndim) {
  Shape s{v.shape()[0]};
  for (int64_t i = 2; i < ndim; ++i) s.push_back(1);
  return reshape(v, s);
}

/// Every axis of a rank-`ndim` shape but axis 1 (batch_norm's statistics axes).
inline Shape all_but_channel(int64_t ndim) {
  Shape axes{0};
  for (int64_t i = 2; i < ndim; ++i) axes.push_back(i);
  return axes;
}

/// The level of a result computed from three operands.
template <class A, class B, class C>
using common_level3_t = common_level_t<common_level_t<A, B>, C>;
}  // namespace detail

// --- layer_norm -------------------------------------------------------------------------
/// Layer normalisation over the trailing axes `normalized_shape` (torch.nn.functional.layer_norm
/// without affine parameters): (x - mean) / sqrt(var + eps), mean and biased variance over the
/// last normalized_shape.ndim() axes. Same shape as x; integer inputs give f32. Throws
/// ShapeError when x does not end with normalized_shape (or it is empty), ValueError for a
/// negative or non-finite eps. Example: `st::layer_norm(h, {512})`.
template <Diffable T>
T layer_norm(const T& x, const Shape& normalized_shape, double eps = 1e-5) {
  const Shape axes = detail::normalized_axes(x.shape(), normalized_shape, eps, "layer_norm");
  return detail::standardize(detail::float_input(x), axes, eps);
}
/// Layer normalisation with an elementwise affine map: layer_norm(x) * weight + bias, weight and
/// bias of shape normalized_shape (torch.nn.functional.layer_norm(x, shape, weight, bias, eps)).
/// ShapeError names a parameter of the wrong shape. Example:
/// `st::layer_norm(h, {512}, p.at("ln.weight"), p.at("ln.bias"))`.
template <Diffable X, Diffable W, Diffable B>
detail::common_level3_t<X, W, B> layer_norm(const X& x, const Shape& normalized_shape,
                                            const W& weight, const B& bias, double eps = 1e-5) {
  detail::check_param(weight.shape(), normalized_shape, "weight", "layer_norm");
  detail::check_param(bias.shape(), normalized_shape, "bias", "layer_norm");
  return layer_norm(x, normalized_shape, eps) * weight + bias;
}

// --- rms_norm ---------------------------------------------------------------------------
/// Root-mean-square normalisation over the trailing axes normalized_shape
/// (torch.nn.functional.rms_norm): x / sqrt(mean(x^2) + eps), no centring. eps defaults to the
/// machine epsilon of x's dtype (torch.finfo(dtype).eps), as in PyTorch. Same shape as x.
/// Errors as layer_norm's. Example: `st::rms_norm(h, {512}, 1e-6)`.
template <Diffable T>
T rms_norm(const T& x, const Shape& normalized_shape, std::optional<double> eps = std::nullopt) {
  const T f = detail::float_input(x);
  const double e = eps ? *eps : (f.dtype() == f64 ? 0x1p-52 : 0x1p-23);
  const Shape axes = detail::normalized_axes(x.shape(), normalized_shape, e, "rms_norm");
  return f * detail::reciprocal_std(mean(f * f, axes, true), e);
}
/// rms_norm(x) * weight, weight of shape normalized_shape (torch's rms_norm with a weight).
/// Example: `st::rms_norm(h, {512}, p.at("norm.weight"))`.
template <Diffable X, Diffable W>
common_level_t<X, W> rms_norm(const X& x, const Shape& normalized_shape, const W& weight,
                              std::optional<double> eps = std::nullopt) {
  detail::check_param(weight.shape(), normalized_shape, "weight", "rms_norm");
  return rms_norm(x, normalized_shape, eps) * weight;
}

// --- group_norm -------------------------------------------------------------------------
/// Group normalisation of x [N, C, *] (torch.nn.functional.group_norm): the C channels are cut
/// into `groups` consecutive groups and each (example, group) is standardised over its
/// channels and spatial positions with its own mean and biased variance. groups = 1 is layer
/// norm over [C, *], groups = C instance norm. Same shape as x. Throws ShapeError for rank < 2
/// or C not divisible by groups (naming the divisors to choose from), ValueError for groups
/// <= 0 or a bad eps. Example: `st::group_norm(feat, 8)`.
template <Diffable T>
T group_norm(const T& x, int64_t groups, double eps = 1e-5) {
  detail::check_group_norm(x.shape(), groups, eps);
  const Shape& s = x.shape();
  const T g = reshape(detail::float_input(x), {s[0], groups, -1});
  return reshape(detail::standardize(g, {2}, eps), s);
}
/// group_norm(x, groups) with a per-channel affine map: * weight[c] + bias[c], weight and bias
/// of shape [C]. Example: `st::group_norm(feat, 8, p.at("gn.weight"), p.at("gn.bias"))`.
template <Diffable X, Diffable W, Diffable B>
detail::common_level3_t<X, W, B> group_norm(const X& x, int64_t groups, const W& weight,
                                            const B& bias, double eps = 1e-5) {
  detail::check_group_norm(x.shape(), groups, eps);
  const Shape c{x.shape()[1]};
  detail::check_param(weight.shape(), c, "weight", "group_norm");
  detail::check_param(bias.shape(), c, "bias", "group_norm");
  const int64_t r = x.shape().ndim();
  return group_norm(x, groups, eps) * detail::channel_view(weight, r) +
         detail::channel_view(bias, r);
}

// --- batch_norm -------------------------------------------------------------------------
/// What batch_norm returns: the normalised output and the running statistics to use next,
/// as values (the ones passed in are never modified). The statistics carry no derivative.
template <class T>
struct BatchNormResult {
  T out;           ///< the normalised input, x's shape
  T running_mean;  ///< [C]: updated in training, the given one in evaluation
  T running_var;   ///< [C]: updated in training (unbiased batch variance), the given one else
};

/// Batch normalisation of x [N, C, *] over every axis but the channel axis 1
/// (torch.nn.functional.batch_norm without affine parameters).
///
/// Training: x is standardised with the batch's mean and biased variance per channel, and the
/// running statistics come back updated, (1 - momentum) * running + momentum * batch, the
/// variance's batch term unbiased (times n / (n - 1), n = N * prod(*)), as PyTorch does.
/// Evaluation: x is standardised with running_mean and running_var, which come back unchanged.
/// Nothing is updated in place: the caller keeps the returned statistics (so a training step
/// stays a pure function, and grad, vmap and checkpointing see no hidden state). Throws
/// ShapeError for rank < 2 or statistics not [C], ValueError for one value per channel in
/// training (the variance is undefined) or a bad eps or momentum. Example:
/// `auto [y, m, v] = st::batch_norm(x, mean, var, /*training=*/true);`.
template <Diffable X, Diffable M, Diffable V>
BatchNormResult<detail::common_level3_t<X, M, V>> batch_norm(const X& x, const M& running_mean,
                                                             const V& running_var, bool training,
                                                             double momentum = 0.1,
                                                             double eps = 1e-5) {
  using R = detail::common_level3_t<X, M, V>;
  const int64_t r = x.shape().ndim();
  const int64_t c = detail::check_batch_norm(x.shape(), running_mean.shape(), running_var.shape(),
                                             training, momentum, eps);
  const R rm = stop_gradient(lift<R>(running_mean)), rv = stop_gradient(lift<R>(running_var));
  if (!training) {
    const X f = detail::float_input(x);
    const R y = (f - detail::channel_view(rm, r)) *
                detail::reciprocal_std(detail::channel_view(rv, r), eps);
    return {y, rm, rv};
  }
  const Shape axes = detail::all_but_channel(r);
  double n = 1;  // values per channel
  for (int64_t a : axes) n *= double(x.shape()[std::size_t(a)]);
  const X f = detail::float_input(x);
  const X m = mean(f, axes, true);
  const X d = f - m;
  const X var = mean(d * d, axes, true);
  const R new_mean = rm * (1 - momentum) + stop_gradient(reshape(m, {c})) * momentum;
  const R new_var =
      rv * (1 - momentum) + stop_gradient(reshape(var, {c})) * (momentum * n / (n - 1));
  return {lift<R>(d * detail::reciprocal_std(var, eps)), new_mean, new_var};
}
/// batch_norm with a per-channel affine map, out * weight[c] + bias[c] (weight and bias [C]);
/// the statistics as in the overload without them. Example:
/// `auto r = st::batch_norm(x, m, v, p.at("bn.weight"), p.at("bn.bias"), training);`.
template <Diffable X, Diffable M, Diffable V, Diffable W, Diffable B>
BatchNormResult<detail::common_level3_t<detail::common_level3_t<X, M, V>, W, B>> batch_norm(
    const X& x, const M& running_mean, const V& running_var, const W& weight, const B& bias,
    bool training, double momentum = 0.1, double eps = 1e-5) {
  using R = detail::common_level3_t<detail::common_level3_t<X, M, V>, W, B>;
  const Shape c{detail::check_batch_norm(x.shape(), running_mean.shape(), running_var.shape(),
                                         training, momentum, eps)};
  detail::check_param(weight.shape(), c, "weight", "batch_norm");
  detail::check_param(bias.shape(), c, "bias", "batch_norm");
  auto res = batch_norm(x, running_mean, running_var, training, momentum, eps);
  const int64_t r = x.shape().ndim();
  return {res.out * detail::channel_view(weight, r) + detail::channel_view(bias, r),
          lift<R>(res.running_mean), lift<R>(res.running_var)};
}

}  // namespace strata
