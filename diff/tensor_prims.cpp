// SPDX-License-Identifier: MIT
// Prims<Tensor>: the Diffable primitives of the plain tensor, each the raw primitive on the
// plain value (raw/ops.hpp, raw/linalg.hpp), with st::debug_nans' check.
#include <array>
#include <ostream>
#include <span>
#include <sstream>

#include "core/error.hpp"
#include "diff/comparison.hpp"
#include "diff/conv.hpp"
#include "diff/debug_nans.hpp"
#include "diff/movement.hpp"
#include "diff/reductions.hpp"
#include "diff/tensor.hpp"
#include "raw/linalg.hpp"
#include "raw/trace.hpp"

namespace strata {
namespace {
const RawTensor& defined_raw(const Tensor& t, std::string_view op) {
  if (!t.defined()) detail::fail<ValueError>(op, "undefined tensor (default-constructed)");
  return t.raw();
}
}  // namespace

// --- Prims<Tensor>: the raw primitives on the plain value ---------------------
//
// Every primitive that computes values first tests maybe_debug_nans(): with st::debug_nans
// off in every thread that is one relaxed load and a predictable branch, and the primitive
// runs as it would without the feature; otherwise compute_checked() runs it and reports a
// NaN that it made (diff/debug_nans.hpp). Views skip the test.

namespace {

/// Does x (a float tensor) hold a NaN? x != x, reduced with max over every axis.
bool has_nan(const RawTensor& x) {
  if (!is_floating(x.dtype()) || x.numel() == 0) return false;
  Shape axes(static_cast<std::size_t>(x.ndim()));
  for (int64_t i = 0; i < x.ndim(); ++i) axes[std::size_t(i)] = i;
  const RawTensor any = raw::reduce(ReduceOp::max, raw::binary(BinaryOp::ne, x, x), axes);
  uint8_t found = 0;
  raw::to_host(any, &found);
  return found != 0;
}

/// "f32[3, 4]".
void describe(std::ostream& os, const RawTensor& x) { os << x.dtype() << x.shape(); }

/// The check of compute_checked(): throws when `out` holds a NaN and no input does
/// (`backward`: in the backward pass, for the message).
void check_new_nan(std::string_view op, bool backward, const RawTensor& out,
                   std::span<const RawTensor> inputs) {
  if (!debug_nans_enabled() || !has_nan(out)) return;
  for (const RawTensor& x : inputs) {
    if (has_nan(x)) return;
  }
  std::ostringstream what;
  what << (inputs.size() == 1 ? "input " : "inputs ");
  const char* sep = "";
  for (const RawTensor& x : inputs) {
    what << sep;
    describe(what, x);
    sep = ", ";
  }
  what << "; output ";
  describe(what, out);
  detail::fail<ValueError>("debug_nans", op, " produced NaN in the ",
                           backward ? "backward" : "forward", " pass from inputs without NaN (",
                           what.str(), ")");
}

/// Runs check_new_nan on out and inputs as an effect: a jit plan traced under debug_nans checks
/// every call's values again.
void check_new_nan_effect(std::string_view op, const RawTensor& out,
                          std::vector<RawTensor> inputs) {
  if (!debug_nans_enabled()) return;  // nothing to check, now or in a plan
  inputs.insert(inputs.begin(), out);
  raw::trace::effect("debug_nans", std::move(inputs),
                     [op = std::string(op), backward = detail::in_backward_pass](auto in) {
                       check_new_nan(op, backward, in[0], in.subspan(1));
                     });
}

/// An op's name for the message: a table row's (UnaryOp, BinaryOp) or the name given.
std::string_view name_of(UnaryOp op) { return op_name(op); }
std::string_view name_of(BinaryOp op) { return op_name(op); }
std::string_view name_of(std::string_view op) { return op; }

/// Is st::debug_nans perhaps on in this thread? False (one relaxed load) when no thread can
/// have it on; check_new_nan then looks at the calling thread's own switch.
bool maybe_debug_nans() { return detail::debug_nans_users.load(std::memory_order_relaxed) != 0; }

/// The slow path of a primitive under st::debug_nans: compute() (the primitive), then the
/// check of op's result on `inputs`. Kept out of line so the fast path stays the primitive.
template <class Op, class Compute, class... Inputs>
[[gnu::noinline]] Tensor compute_checked(Op op, const Compute& compute, const Inputs&... inputs) {
  Tensor y = compute();
  check_new_nan_effect(name_of(op), y.raw(), {inputs.raw()...});
  return y;
}

}  // namespace

Tensor Prims<Tensor>::unary(UnaryOp op, const Tensor& x) {
  const auto compute = [&] { return Tensor(raw::unary(op, defined_raw(x, op_name(op)))); };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked(op, compute, x);
  }
  return compute();
}
Tensor Prims<Tensor>::binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const auto compute = [&] {
    return Tensor(raw::binary(op, defined_raw(a, op_name(op)), defined_raw(b, op_name(op))));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked(op, compute, a, b);
  }
  return compute();
}
Tensor Prims<Tensor>::where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const auto compute = [&] {
    return Tensor(
        raw::where(defined_raw(cond, "where"), defined_raw(a, "where"), defined_raw(b, "where")));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("where", compute, cond, a, b);
  }
  return compute();
}
Tensor Prims<Tensor>::sum(const Tensor& x, const Shape& axes, bool keepdims) {
  const auto compute = [&] {
    return Tensor(raw::reduce(ReduceOp::sum, defined_raw(x, "sum"), axes, keepdims));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("sum", compute, x);
  }
  return compute();
}
Tensor Prims<Tensor>::max(const Tensor& x, const Shape& axes, bool keepdims) {
  const auto compute = [&] {
    return Tensor(raw::reduce(ReduceOp::max, defined_raw(x, "max"), axes, keepdims));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("max", compute, x);
  }
  return compute();
}
Tensor Prims<Tensor>::permute(const Tensor& x, const Shape& dims) {
  return Tensor(defined_raw(x, "permute").permute(dims));
}
Tensor Prims<Tensor>::expand(const Tensor& x, const Shape& shape) {
  return Tensor(defined_raw(x, "expand").expand(shape));
}
Tensor Prims<Tensor>::reshape(const Tensor& x, const Shape& shape) {
  return Tensor(raw::reshape(defined_raw(x, "reshape"), shape));
}
Tensor Prims<Tensor>::slice(const Tensor& x, int64_t axis, std::optional<int64_t> start,
                            std::optional<int64_t> stop, int64_t step) {
  return Tensor(defined_raw(x, "slice").slice(axis, start, stop, step));
}
Tensor Prims<Tensor>::pad(const Tensor& x, const Pads& pads) {
  const auto compute = [&] { return Tensor(raw::pad(defined_raw(x, "pad"), pads, 0.0)); };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("pad", compute, x);
  }
  return compute();
}
Tensor Prims<Tensor>::concat(const std::vector<Tensor>& xs, int64_t axis) {
  std::vector<RawTensor> rs;
  rs.reserve(xs.size());
  for (const Tensor& x : xs) rs.push_back(defined_raw(x, "concat"));
  Tensor y(raw::concat(rs, axis));
  if (maybe_debug_nans()) [[unlikely]] {
    check_new_nan_effect("concat", y.raw(), rs);
  }
  return y;
}
Tensor Prims<Tensor>::windows(const Tensor& x, const Window& w) {
  return Tensor(defined_raw(x, "windows").windows(w));
}
Tensor Prims<Tensor>::fold(const Tensor& y, const Window& w, const Shape& spatial) {
  const auto compute = [&] { return Tensor(raw::fold(defined_raw(y, "fold"), w, spatial)); };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("fold", compute, y);
  }
  return compute();
}
Tensor Prims<Tensor>::cast(const Tensor& x, DType dtype) {
  const auto compute = [&] { return Tensor(raw::cast(defined_raw(x, "cast"), dtype)); };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("cast", compute, x);
  }
  return compute();
}
Tensor Prims<Tensor>::matmul(const Tensor& a, const Tensor& b) {
  const auto compute = [&] {
    return Tensor(raw::matmul(defined_raw(a, "matmul"), defined_raw(b, "matmul")));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("matmul", compute, a, b);
  }
  return compute();
}
// The convolutions: raw/conv.hpp's kernels where they exist, else diff/conv.hpp's composites.
Tensor Prims<Tensor>::conv(const Tensor& x, const Tensor& w, const ConvGeometry& g) {
  const auto compute = [&] {
    if (!raw::has_conv_kernels(defined_raw(x, "conv"), defined_raw(w, "conv"))) {
      return detail::conv_composite(
          x, w, detail::conv_plan(x.shape(), w.shape(), detail::conv_options(g)));
    }
    return Tensor(raw::conv_forward(x.raw(), w.raw(), g));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("conv", compute, x, w);
  }
  return compute();
}
Tensor Prims<Tensor>::conv_input_grad(const Tensor& gy, const Tensor& w, const Shape& x_shape,
                                      const ConvGeometry& g) {
  const auto compute = [&] {
    if (!raw::has_conv_kernels(defined_raw(gy, "conv_input_grad"),
                               defined_raw(w, "conv_input_grad"))) {
      return detail::conv_input_grad_composite(gy, w, x_shape, g);
    }
    return Tensor(raw::conv_input_grad(gy.raw(), w.raw(), x_shape, g));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("conv_input_grad", compute, gy, w);
  }
  return compute();
}
Tensor Prims<Tensor>::conv_weight_grad(const Tensor& x, const Tensor& gy, const Shape& w_shape,
                                       const ConvGeometry& g) {
  const auto compute = [&] {
    if (!raw::has_conv_kernels(defined_raw(x, "conv_weight_grad"),
                               defined_raw(gy, "conv_weight_grad"))) {
      return detail::conv_weight_grad_composite(x, gy, w_shape, g);
    }
    return Tensor(raw::conv_weight_grad(x.raw(), gy.raw(), w_shape, g));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("conv_weight_grad", compute, x, gy);
  }
  return compute();
}
Tensor Prims<Tensor>::index_select(const Tensor& x, int64_t axis, const Tensor& idx) {
  const auto compute = [&] {
    return Tensor(
        raw::index_select(defined_raw(x, "index_select"), axis, defined_raw(idx, "index_select")));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("index_select", compute, x, idx);
  }
  return compute();
}
Tensor Prims<Tensor>::index_add(const Tensor& x, int64_t axis, const Tensor& idx,
                                const Tensor& src) {
  const auto compute = [&] {
    return Tensor(raw::index_add(defined_raw(x, "index_add"), axis, defined_raw(idx, "index_add"),
                                 defined_raw(src, "index_add")));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("index_add", compute, x, idx, src);
  }
  return compute();
}

Tensor Prims<Tensor>::cholesky(const Tensor& a) {
  const auto compute = [&] { return Tensor(raw::cholesky(defined_raw(a, "cholesky"))); };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("cholesky", compute, a);
  }
  return compute();
}
Tensor Prims<Tensor>::triangular_solve(const Tensor& a, const Tensor& b, TriangularSolve opts) {
  const auto compute = [&] {
    return Tensor(raw::triangular_solve(defined_raw(a, "triangular_solve"),
                                        defined_raw(b, "triangular_solve"), opts));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("triangular_solve", compute, a, b);
  }
  return compute();
}

// Through the SVD: v diag(1 / s) u^T over the singular values above cutoff times the largest.
Tensor Prims<Tensor>::pinv(const Tensor& a, double cutoff) {
  const std::array<Tensor, 3> usv = svd(a);
  const Tensor& s = usv[1];
  const Tensor kept = s > strata::unsqueeze(strata::max(s, {-1}), -1) * cutoff;
  const Tensor inv_s = strata::where(kept, 1.0 / strata::where(kept, s, 1.0), 0.0);
  return strata::matmul(strata::transpose(usv[2], -1, -2) * strata::unsqueeze(inv_s, -2),
                        strata::transpose(usv[0], -1, -2));
}

namespace {
/// The raw results of a factorisation as tensors, each checked by st::debug_nans when on.
template <std::size_t K>
std::array<Tensor, K> factors(std::string_view op, const std::array<RawTensor, K>& rs,
                              const Tensor& a) {
  std::array<Tensor, K> out;
  for (std::size_t k = 0; k < K; ++k) {
    out[k] = Tensor(rs[k]);
    if (maybe_debug_nans()) [[unlikely]] {
      check_new_nan_effect(op, out[k].raw(), {a.raw()});
    }
  }
  return out;
}
}  // namespace

std::array<Tensor, 3> Prims<Tensor>::lu(const Tensor& a) {
  return factors("lu", raw::lu(defined_raw(a, "lu")), a);
}
// a's own value is not read: lu and perm are its factors (Diffable's lu_inverse, logabsdet).
Tensor Prims<Tensor>::lu_inverse(const Tensor& a, const Tensor& lu, const Tensor& perm) {
  (void)defined_raw(a, "lu_inverse");
  const auto compute = [&] {
    return Tensor(raw::lu_inverse(defined_raw(lu, "lu_inverse"), defined_raw(perm, "lu_inverse")));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("lu_inverse", compute, lu);
  }
  return compute();
}
Tensor Prims<Tensor>::logabsdet(const Tensor& a, const Tensor& lu, const Tensor& perm) {
  (void)defined_raw(a, "logabsdet");
  (void)defined_raw(perm, "logabsdet");
  const RawTensor& f = defined_raw(lu, "logabsdet");
  if (f.ndim() < 2 || f.shape()[f.ndim() - 1] != f.shape()[f.ndim() - 2]) {
    detail::fail<ShapeError>("logabsdet", "lu has shape ", f.shape(),
                             ", needs square matrices [..., n, n]");
  }
  // sum(log|U_ii|) over U's diagonal, a view with the stride of one row plus one column.
  const int64_t nd = f.ndim();
  Layout diag{Shape(f.shape().begin(), f.shape().end() - 1),
              Strides(f.strides().begin(), f.strides().end() - 1), f.offset()};
  diag.strides[std::size_t(nd - 2)] = f.strides()[nd - 2] + f.strides()[nd - 1];
  const auto compute = [&] {
    const RawTensor d = raw::unary(UnaryOp::abs, f.view(std::move(diag)));
    return Tensor(raw::reduce(ReduceOp::sum, raw::unary(UnaryOp::log, d), {nd - 2}));
  };
  if (maybe_debug_nans()) [[unlikely]] {
    return compute_checked("logabsdet", compute, lu);
  }
  return compute();
}
std::array<Tensor, 2> Prims<Tensor>::eigh(const Tensor& a) {
  return factors("eigh", raw::eigh(defined_raw(a, "eigh")), a);
}
std::array<Tensor, 3> Prims<Tensor>::svd(const Tensor& a) {
  return factors("svd", raw::svd(defined_raw(a, "svd")), a);
}
std::array<Tensor, 2> Prims<Tensor>::qr(const Tensor& a) {
  return factors("qr", raw::qr(defined_raw(a, "qr")), a);
}

}  // namespace strata
