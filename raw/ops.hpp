// SPDX-License-Identifier: MIT
#pragma once
/// The primitives on RawTensor (raw/primitives.hpp lists them). Each call
/// validates its arguments, throwing an st::Error subclass that names the op,
/// the shapes and the offending value, then runs the device's Backend.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "raw/linalg.hpp"
#include "raw/primitives.hpp"
#include "raw/raw_tensor.hpp"

/// The primitives on RawTensor, validated; the layer every Tensor op ends in.
namespace strata::raw {

// --- creation ---------------------------------------------------------------
// Without a device argument, creation uses st::default_device() (the CPU unless
// a DefaultDevice guard on this thread says otherwise).
/// Uninitialised contiguous tensor (like numpy.empty). A shape whose element
/// or byte count overflows, or that no memory holds, throws ValueError naming
/// op (the public op that asked for the tensor).
RawTensor empty(const Shape& shape, DType dtype, Device device = default_device(),
                std::string_view op = "empty");
/// Every element equal to value, cast to dtype (numpy.full).
RawTensor full(const Shape& shape, double value, DType dtype, Device device = default_device());
/// Copies numel(shape) elements of dtype from row-major host memory.
RawTensor from_host(const void* data, const Shape& shape, DType dtype,
                    Device device = default_device());
/// start, start + step, ... below stop (numpy.arange).
RawTensor arange(double start, double stop, double step, DType dtype,
                 Device device = default_device());
/// Uniform [0, 1) from seed, float dtypes (Philox: same numbers on every device).
RawTensor uniform(const Shape& shape, uint64_t seed, DType dtype, Device device = default_device());
/// Standard normal from seed, float dtypes.
RawTensor normal(const Shape& shape, uint64_t seed, DType dtype, Device device = default_device());
/// Writes the elements in row-major order to host memory of numel * dtype_size bytes.
void to_host(const RawTensor& x, void* dst);
/// A copy on another device (x itself when already there).
RawTensor to_device(const RawTensor& x, Device device);

// --- elementwise --------------------------------------------------------------
/// op applied to every element (raw/primitives.hpp lists the ops and their dtypes); DTypeError
/// for a dtype the op does not support (e.g. exp of an integer tensor).
RawTensor unary(UnaryOp op, const RawTensor& x);
/// a and b must have the same shape and dtype (broadcasting is a composite).
RawTensor binary(BinaryOp op, const RawTensor& a, const RawTensor& b);
/// cond (bool) ? a : b, all three of one shape; a and b of one dtype (numpy.where).
RawTensor where(const RawTensor& cond, const RawTensor& a, const RawTensor& b);

// --- reductions ---------------------------------------------------------------
/// Reduces over `axes` (negative allowed, no repeats; empty = no axis reduced).
RawTensor reduce(ReduceOp op, const RawTensor& x, const Shape& axes, bool keepdims = false);

// --- movement -----------------------------------------------------------------
/// x itself when contiguous, else a row-major copy (numpy.ascontiguousarray).
RawTensor contiguous(const RawTensor& x);
/// A view when the strides allow it, else a copy; one -1 is inferred (numpy.reshape).
RawTensor reshape(const RawTensor& x, const Shape& shape);
/// Pads each axis by (before, after) >= 0 elements of value (numpy.pad constant).
RawTensor pad(const RawTensor& x, const std::vector<std::pair<int64_t, int64_t>>& pads,
              double value = 0.0);
/// Joins tensors of one dtype along an existing axis (numpy.concatenate).
RawTensor concat(const std::vector<RawTensor>& xs, int64_t axis);
/// The transpose of the windows view (x.windows(w), Layout::windows), col2im: y [..., O..., K...]
/// -> [..., spatial...], each element of y added at its window position, o * stride + k *
/// dilation, overlaps summed in row-major order of k (the same bits on every device and thread
/// count) and positions no window covers 0. O must be window_counts over spatial and K
/// w.kernel (ShapeError otherwise); numeric dtypes (torch.nn.functional.fold's sum, any rank).
RawTensor fold(const RawTensor& y, const Window& w, const Shape& spatial);
/// Converts the elements to dtype (x.astype); floats to ints truncate, like C++.
RawTensor cast(const RawTensor& x, DType dtype);

// --- contraction --------------------------------------------------------------
/// [..., m, k] x [..., k, n] -> [..., m, n]; batch dims broadcast (numpy.matmul, rank >= 2).
RawTensor matmul(const RawTensor& a, const RawTensor& b);

// --- indexing -----------------------------------------------------------------
/// Picks positions idx (integer, any shape, negatives from the end) along axis;
/// idx's dims replace that axis (numpy.take).
RawTensor index_select(const RawTensor& x, int64_t axis, const RawTensor& idx);
/// x with src added at positions idx along axis; repeated indices accumulate
/// (the transpose of index_select; numpy.add.at on a copy).
RawTensor index_add(const RawTensor& x, int64_t axis, const RawTensor& idx, const RawTensor& src);

// --- in place (bump the storage's version) -----------------------------------
/// dst[...] = value.
void fill_(const RawTensor& dst, double value);
/// dst[...] = src[...] (same shape; src cast to dst's dtype).
void copy_(const RawTensor& dst, const RawTensor& src);
/// dst[...] = dst[...] op src[...] (same shape and dtype; arithmetic ops only).
void binary_(BinaryOp op, const RawTensor& dst, const RawTensor& src);
/// dst[...] = alpha * dst[...] + beta * src[...] in one pass (same shape, one float dtype;
/// alpha and beta rounded to it): the optimisers' updates, e.g. p -= lr * g as
/// `axpby_(p, 1, g, -lr)`.
void axpby_(const RawTensor& dst, double alpha, const RawTensor& src, double beta);
/// One Adam step in one pass (torch.optim.Adam's and AdamW's arithmetic,
/// scalar::AdamStep): updates the parameter p and its moments m and v in place from
/// the gradient g, with the coefficients c of this step. All four of one shape and one
/// float dtype, on one device; p, m and v in three separate storages (ValueError
/// otherwise); g may be any tensor, a view of p included.
/// Example: `adam_step_(p, m, v, g, {.beta1 = 0.9, .beta2 = 0.999, .step = lr / bc1,
/// .sqrt_bc2 = std::sqrt(bc2), .eps = 1e-8})`.
void adam_step_(const RawTensor& p, const RawTensor& m, const RawTensor& v, const RawTensor& g,
                const AdamStepCoefficients& c);

}  // namespace strata::raw
