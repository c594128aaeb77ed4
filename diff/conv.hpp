// SPDX-License-Identifier: MIT
#pragma once
/// Convolutions (DESIGN §9; docs/ARCHITECTURE.md): st::conv is the conv primitive and
/// st::conv_transpose the primitive of conv's input gradient (ad/rules/conv.hpp: three bilinear
/// primitives, each the others' transposes), which Prims<Tensor> runs on oneDNN's kernels for
/// f32 on the CPU (raw/conv.hpp); everywhere else they are the composites below: pad, the
/// windows view, the im2col copy (a permute and reshape) and one batched matmul per group for
/// conv, a matmul and then fold (col2im) for its input gradient. Both follow
/// torch.nn.functional.conv{1,2,3}d and conv_transpose{1,2,3}d (layout [N, C, *spatial],
/// weights [C_out, C_in / groups, *kernel] and [C_in, C_out / groups, *kernel]) for any number
/// of spatial axes, differentiate to any order and map under st::vmap.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "diff/matrix.hpp"
#include "diff/movement.hpp"
#include "diff/reductions.hpp"
#include "raw/conv.hpp"

namespace strata {

/// The options of st::conv and st::conv_transpose, as torch.nn.functional's: each takes one
/// entry per spatial axis, one entry for every axis (PyTorch's int), or none (the default).
/// Example: `st::conv(x, w, {.stride = {2}, .padding = {1}})`.
struct ConvOptions {
  Shape stride{};          ///< step between output positions (default 1)
  Shape padding{};         ///< zeros before and after each spatial axis (default 0)
  Shape dilation{};        ///< spacing of the kernel's taps (default 1)
  int64_t groups = 1;      ///< channel groups, each convolved on its own (divides both counts)
  Shape output_padding{};  ///< conv_transpose only: extra size at the end of each axis (default 0)
};

namespace detail {
/// A convolution's shapes, computed and checked once (diff/conv.cpp), for x and w of rank
/// k + 2 (a batch axis included).
struct ConvPlan {
  int64_t groups = 1;   ///< channel groups
  int64_t cout = 0;     ///< output channels
  Window window;        ///< kernel, stride and dilation over the spatial axes
  Pads pads;            ///< conv: the input's padding (every axis); conv_transpose: the crop's
  bool padded = false;  ///< whether pads has a nonzero entry
  Shape spatial;        ///< conv_transpose: the axes fold fills, (S - 1) stride + extent
  Shape grouped;        ///< conv: windows as [N, G, C/G, O..., K...]
  Shape cols_order;     ///< conv: to [N, G, C/G, K..., O...]; conv_transpose: its inverse
  Shape cols;           ///< [N, G, C/G K, L]: the im2col matrix (conv_transpose: the matmul's)
  Shape wmat;  ///< the weight as [G, C_out/G, C_in/G K] (conv_transpose: [G, C_in/G, C_out/G K])
  Shape xmat;  ///< conv_transpose: the input as [N, G, C_in/G, L]
  Shape unfolded;    ///< conv_transpose: the matmul's result as [N, G, C_out/G, K..., S...]
  Shape windows;     ///< conv_transpose: fold's input [N, C_out, S..., K...]
  Shape out;         ///< the result [N, C_out, O...]
  Shape crop_start;  ///< conv_transpose: where the result starts in fold's output
};
/// The plan of conv(x, w, o) for x [N, C, *S] and w [C_out, C / groups, *K]; throws the errors
/// st::conv documents.
ConvPlan conv_plan(const Shape& x, const Shape& w, const ConvOptions& o);
/// The plan of conv_transpose(x, w, o) for x [N, C_in, *S], w [C_in, C_out / groups, *K].
ConvPlan conv_transpose_plan(const Shape& x, const Shape& w, const ConvOptions& o);
/// Whether x [C, *S] lacks the batch axis of a convolution with weight w (x rank k + 1, w rank
/// k + 2); ShapeError naming op unless x has rank k + 1 or k + 2 and w rank >= 3.
bool conv_unbatched(const Shape& x, const Shape& w, std::string_view op);
/// ShapeError unless the bias has shape [c] (the output channels).
void check_conv_bias(const Shape& b, int64_t c, std::string_view op);

/// The geometry of options o (checked) over k spatial axes, every entry per axis.
ConvGeometry conv_geometry(const ConvOptions& o, int64_t k);
/// The options of a geometry (no output_padding).
ConvOptions conv_options(const ConvGeometry& g);
/// The output_padding that makes conv_transpose(gy, w, g) of shape x_shape: the input gradient
/// of a convolution of x (the positions of x that no window reaches, past the last stride).
Shape input_grad_output_padding(const Shape& x_shape, const Shape& gy_shape, const Shape& w_shape,
                                const ConvGeometry& g);

/// The im2col matrix of a batched x [N, C, *S] (conv_plan's shapes): the windows of x padded,
/// [N, G, C/G, K..., O...] copied as [N, G, C/G K, L].
template <Diffable R>
R im2col(const R& x, const ConvPlan& p) {
  const R xp = p.padded ? Prims<R>::pad(x, p.pads) : x;
  const R win = Prims<R>::windows(xp, p.window);  // [N, C, O..., K...], a view
  return reshape(permute(reshape(win, p.grouped), p.cols_order), p.cols);
}

/// conv of a batched x [N, C, *S] as a composite (conv_plan's shapes): what every level runs
/// where the conv primitive has no kernel. One product per group and example:
/// [G, C_out/G, C/G K] x [N, G, C/G K, L] -> [N, G, C_out/G, L], contiguous.
template <Diffable R>
R conv_composite(const R& x, const R& w, const ConvPlan& p) {
  return reshape(matmul(reshape(w, p.wmat), im2col(x, p)), p.out);
}

/// conv_transpose of a batched x [N, C_in, *S] as a composite (conv_transpose_plan's shapes):
/// a matmul and fold (col2im).
template <Diffable R>
R conv_transpose_composite(const R& x, const R& w, const ConvPlan& p) {
  // [G, C_out/G K, C_in/G] x [N, G, C_in/G, L] -> [N, G, C_out/G K, L]: each input position's
  // window of contributions, which fold adds up where the windows overlap.
  const R cols = matmul(transpose(reshape(w, p.wmat), -1, -2), reshape(x, p.xmat));
  const R win = reshape(permute(reshape(cols, p.unfolded), p.cols_order), p.windows);
  R y = Prims<R>::fold(win, p.window, p.spatial);
  if (p.padded) y = Prims<R>::pad(y, p.pads);
  for (std::size_t i = 0; i < p.crop_start.size(); ++i) {
    const int64_t a = int64_t(i) + 2, at = p.crop_start[i];
    if (at != 0 || y.shape()[std::size_t(a)] != p.out[std::size_t(a)]) {
      y = Prims<R>::slice(y, a, at, at + p.out[std::size_t(a)], 1);
    }
  }
  return y;
}

/// The gradient of w [C_out, C / G, K...] in conv(x, w) for the output's cotangent gy, as a
/// composite: the im2col matrix of x times gy, summed over the batch.
template <Diffable R>
R conv_weight_grad_composite(const R& x, const R& gy, const Shape& w_shape, const ConvGeometry& g) {
  const ConvPlan p = conv_plan(x.shape(), w_shape, conv_options(g));
  const Shape& c = p.cols;  // [N, G, C/G K, L]
  const R g4 = reshape(gy, Shape{c[0], c[1], p.wmat[1], c[3]});
  return reshape(sum(matmul(g4, transpose(im2col(x, p), -1, -2)), Shape{0}), w_shape);
}

/// The gradient of x [N, C, S...] (x_shape) in conv(x, w) for the output's cotangent gy, as a
/// composite: conv_transpose of gy, its output_padding reaching x's last positions.
template <Diffable R>
R conv_input_grad_composite(const R& gy, const R& w, const Shape& x_shape, const ConvGeometry& g) {
  ConvOptions o = conv_options(g);
  o.output_padding = input_grad_output_padding(x_shape, gy.shape(), w.shape(), g);
  return conv_transpose_composite(gy, w, conv_transpose_plan(gy.shape(), w.shape(), o));
}

/// The three convolutions on R: the level's primitive where it has one (Prims<Tensor> runs
/// raw/conv.hpp's kernels where they exist; the rule levels apply rules::Conv...), the
/// composite elsewhere (the sparsity tracer).
template <Diffable R>
R conv_prim(const R& x, const R& w, const ConvGeometry& g) {
  if constexpr (requires { Prims<R>::conv(x, w, g); }) {
    return Prims<R>::conv(x, w, g);
  } else {
    return conv_composite(x, w, conv_plan(x.shape(), w.shape(), conv_options(g)));
  }
}
/// The gradient of x (of shape x_shape) in conv(x, w) for the output's cotangent gy: the
/// transposed convolution of gy.
template <Diffable R>
R conv_input_grad_prim(const R& gy, const R& w, const Shape& x_shape, const ConvGeometry& g) {
  if constexpr (requires { Prims<R>::conv_input_grad(gy, w, x_shape, g); }) {
    return Prims<R>::conv_input_grad(gy, w, x_shape, g);
  } else {
    return conv_input_grad_composite(gy, w, x_shape, g);
  }
}
/// The gradient of w (of shape w_shape) in conv(x, w) for the output's cotangent gy.
template <Diffable R>
R conv_weight_grad_prim(const R& x, const R& gy, const Shape& w_shape, const ConvGeometry& g) {
  if constexpr (requires { Prims<R>::conv_weight_grad(x, gy, w_shape, g); }) {
    return Prims<R>::conv_weight_grad(x, gy, w_shape, g);
  } else {
    return conv_weight_grad_composite(x, gy, w_shape, g);
  }
}

/// conv of a batched x [N, C, *S].
template <Diffable R>
R conv_batched(const R& x, const R& w, const ConvOptions& o) {
  (void)conv_plan(x.shape(), w.shape(), o);  // the checks
  return conv_prim(x, w, conv_geometry(o, x.ndim() - 2));
}

/// conv_transpose of a batched x [N, C_in, *S]: the input gradient of the convolution it
/// transposes, whose input has conv_transpose's output shape (the composite where an
/// output_padding reaches the stride, which PyTorch allows below the dilation: that
/// convolution would have a longer output).
template <Diffable R>
R conv_transpose_batched(const R& x, const R& w, const ConvOptions& o) {
  const ConvPlan p = conv_transpose_plan(x.shape(), w.shape(), o);
  const ConvGeometry g = conv_geometry(o, x.ndim() - 2);
  const Shape extra =
      per_axis(o.output_padding, x.ndim() - 2, 0, "output_padding", "conv_transpose");
  for (int64_t i = 0; i < extra.ndim(); ++i) {
    if (extra[i] >= g.stride[i]) return conv_transpose_composite(x, w, p);
  }
  return conv_input_grad_prim(x, w, p.out, g);
}

/// x and w at their common level and dtype.
template <class X, class W>
std::pair<common_level_t<X, W>, common_level_t<X, W>> conv_operands(const X& x, const W& w) {
  using R = common_level_t<X, W>;
  const DType t = promote_types(x.dtype(), w.dtype());
  return {as_dtype(lift<R>(x), t), as_dtype(lift<R>(w), t)};
}
}  // namespace detail

/// The convolution of x [N, C_in, *S] (or [C_in, *S], unbatched) with the weight
/// w [C_out, C_in / groups, *K] (torch.nn.functional.conv1d/2d/3d, any number k >= 1 of
/// spatial axes: PyTorch's cross-correlation): out [N, C_out, *O] with
/// O = (S + 2 padding - dilation (K - 1) - 1) / stride + 1. Dtypes promote. Throws ShapeError
/// for ranks or channel counts that do not fit (naming the shapes and the layout wanted) or a
/// kernel longer than the padded input (with the fix), ValueError for a stride or dilation
/// < 1, negative padding or groups < 1. Example: `st::conv(img, w, {.padding = {1}})`.
template <class X, class W>
requires(Diffable<X>&& Diffable<W>) common_level_t<X, W> conv(const X& x, const W& w,
                                                              const ConvOptions& o = {}) {
  const auto [xs, ws] = detail::conv_operands(x, w);
  if (detail::conv_unbatched(xs.shape(), ws.shape(), "conv")) {
    return squeeze(detail::conv_batched(unsqueeze(xs, 0), ws, o), 0);
  }
  return detail::conv_batched(xs, ws, o);
}
/// conv(x, w, o) plus a bias b [C_out] on every output channel (F.conv2d's bias).
template <class X, class W, class B>
requires(Diffable<X>&& Diffable<W>&& Diffable<B>) common_level_t<common_level_t<X, W>, B> conv(
    const X& x, const W& w, const B& b, const ConvOptions& o = {}) {
  const auto y = conv(x, w, o);
  detail::check_conv_bias(b.shape(), y.shape()[y.shape().ndim() - w.shape().ndim() + 1], "conv");
  Shape s{b.shape()[0]};
  for (int64_t i = 2; i < w.shape().ndim(); ++i) s.push_back(1);
  return y + reshape(b, s);
}

/// The transposed convolution of x [N, C_in, *S] (or [C_in, *S]) with w
/// [C_in, C_out / groups, *K] (torch.nn.functional.conv_transpose1d/2d/3d): the transpose of
/// conv with respect to its input (the gradient of a strided convolution, an upsampling
/// layer), out [N, C_out, *O] with O = (S - 1) stride - 2 padding + dilation (K - 1) +
/// output_padding + 1. output_padding must be smaller than the stride or the dilation (as in
/// PyTorch). Throws as conv does, and ShapeError for an output size < 1. Example:
/// `st::conv_transpose(z, w, {.stride = {2}, .padding = {1}, .output_padding = {1}})`.
template <class X, class W>
requires(Diffable<X>&& Diffable<W>) common_level_t<X, W> conv_transpose(const X& x, const W& w,
                                                                        const ConvOptions& o = {}) {
  const auto [xs, ws] = detail::conv_operands(x, w);
  if (detail::conv_unbatched(xs.shape(), ws.shape(), "conv_transpose")) {
    return squeeze(detail::conv_transpose_batched(unsqueeze(xs, 0), ws, o), 0);
  }
  return detail::conv_transpose_batched(xs, ws, o);
}
/// conv_transpose(x, w, o) plus a bias b [C_out] on every output channel.
template <class X, class W, class B>
requires(Diffable<X>&& Diffable<W>&& Diffable<B>)
    common_level_t<common_level_t<X, W>, B> conv_transpose(const X& x, const W& w, const B& b,
                                                           const ConvOptions& o = {}) {
  const auto y = conv_transpose(x, w, o);
  detail::check_conv_bias(b.shape(), y.shape()[y.shape().ndim() - w.shape().ndim() + 1],
                          "conv_transpose");
  Shape s{b.shape()[0]};
  for (int64_t i = 2; i < w.shape().ndim(); ++i) s.push_back(1);
  return y + reshape(b, s);
}

}  // namespace strata
