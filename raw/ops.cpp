// SPDX-License-Identifier: MIT
// Front end of the primitives: validation, output shapes, allocation. The
// kernels themselves are the device backend's (raw/backend.hpp).
#include "raw/ops.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/index_positions.hpp"

namespace strata::raw {
namespace {

using detail::fail;

void require_defined(const RawTensor& x, std::string_view op) {
  if (!x.defined()) fail<ValueError>(op, "undefined tensor (default-constructed)");
}

void require_same_device(const RawTensor& a, const RawTensor& b, std::string_view op) {
  if (a.device() != b.device()) {
    fail<DeviceError>(op, "tensors are on different devices (", to_string(a.device()), " and ",
                      to_string(b.device()), "); move one with .to(device)");
  }
}

void require_same_shape(const RawTensor& a, const RawTensor& b, std::string_view op) {
  if (a.shape() != b.shape()) {
    fail<ShapeError>(op, "shapes ", a.shape(), " and ", b.shape(),
                     " differ (the primitive does not broadcast)");
  }
}

void require_same_dtype(const RawTensor& a, const RawTensor& b, std::string_view op) {
  if (a.dtype() != b.dtype()) {
    fail<DTypeError>(op, "dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
                     " differ (cast one first)");
  }
}

void require_float(DType t, std::string_view op) {
  if (!is_floating(t)) {
    fail<DTypeError>(op, "dtype ", dtype_name(t), " is not supported (needs f32 or f64)");
  }
}

void require_numeric(DType t, std::string_view op) {
  if (t == DType::b8) fail<DTypeError>(op, "dtype bool is not supported (cast to a number)");
}

void require_bool(DType t, std::string_view op) {
  if (t != DType::b8)
    fail<DTypeError>(op, "dtype ", dtype_name(t), " is not supported (needs bool)");
}

void require_writable(const RawTensor& dst, std::string_view op) {
  for (int64_t i = 0; i < dst.ndim(); ++i) {
    if (dst.strides()[i] == 0 && dst.shape()[i] > 1) {
      fail<ValueError>(op, "cannot write in place to a broadcast view (shape ", dst.shape(),
                       ", strides ", dst.strides(), ")");
    }
  }
}

/// src itself, or a private copy when it shares dst's storage under another layout.
RawTensor unaliased(const RawTensor& dst, const RawTensor& src) {
  if (src.storage() == dst.storage() &&
      !(src.layout().strides == dst.layout().strides && src.offset() == dst.offset())) {
    RawTensor copy = empty(src.shape(), src.dtype(), src.device());
    backend_for(src.device()).copy(copy, src);
    return copy;
  }
  return src;
}

Shape all_axes(int64_t ndim) {
  Shape axes;
  for (int64_t d = 0; d < ndim; ++d) axes.push_back(d);
  return axes;
}

/// The dtype check of an op table row: its dtype class admits t.
template <class Op>
void check_dtype(Op op, DType t) {
  const OpInfo<Op>& row = op_info(op);
  switch (row.dtypes) {
    case DTypeClass::floating:
      return require_float(t, row.name);
    case DTypeClass::numeric:
      return require_numeric(t, row.name);
    case DTypeClass::boolean:
      return require_bool(t, row.name);
    case DTypeClass::any:
      return;
  }
}

/// Integer division has no value for a zero divisor: checked here, before any
/// backend runs, so kernels on every device divide without a check.
void require_nonzero_divisor(const RawTensor& b) {
  const RawTensor zero = full({}, 0.0, b.dtype(), b.device()).expand(b.shape());
  bool found = false;
  to_host(reduce(ReduceOp::max, binary(BinaryOp::eq, b, zero), all_axes(b.ndim())), &found);
  if (found) fail<ValueError>("div", "integer division by zero");
}

}  // namespace

// --- creation ---------------------------------------------------------------

namespace {

/// full() whose errors name op.
RawTensor full_for(const Shape& shape, double value, DType dtype, Device device,
                   std::string_view op) {
  RawTensor out = empty(shape, dtype, device, op);
  if (out.numel() > 0) backend_for(device).fill(out, value);
  return out;
}

}  // namespace

RawTensor empty(const Shape& shape, DType dtype, Device device, std::string_view op) {
  const std::size_t bytes = detail::checked_bytes(shape, dtype, op);
  Backend& be = backend_for(device);
  std::shared_ptr<Storage> storage;
  try {
    storage = make_storage(be.allocator(), bytes);
  } catch (const ValueError& e) {
    // The allocator's own message ("allocate: ...") under the op that asked.
    fail<ValueError>(op, "cannot allocate shape ", shape, " (", dtype_name(dtype), ", ", bytes,
                     " bytes): ", e.what());
  }
  return RawTensor(std::move(storage), Layout::contiguous(shape), dtype);
}

RawTensor full(const Shape& shape, double value, DType dtype, Device device) {
  return full_for(shape, value, dtype, device, "full");
}

RawTensor from_host(const void* data, const Shape& shape, DType dtype, Device device) {
  RawTensor out = empty(shape, dtype, device, "from_host");
  if (out.numel() > 0) {
    if (!data) fail<ValueError>("from_host", "null data pointer for shape ", shape);
    backend_for(device).from_host(out, data);
  }
  return out;
}

RawTensor arange(double start, double stop, double step, DType dtype, Device device) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop)) {
    fail<ValueError>("arange", "start, stop and step must be finite and step nonzero (got ", start,
                     ", ", stop, ", ", step, ")");
  }
  const double count = std::ceil((stop - start) / step);
  if (count > 9.0e18) fail<ValueError>("arange", "element count ", count, " overflows int64");
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  // Rounding in (stop - start) / step can admit one element at or past stop; drop it.
  while (n > 0 &&
         (step > 0 ? start + double(n - 1) * step >= stop : start + double(n - 1) * step <= stop)) {
    --n;
  }
  RawTensor out = empty({n}, dtype, device, "arange");
  if (n > 0) backend_for(device).arange(out, start, step);
  return out;
}

static RawTensor random(const Shape& shape, uint64_t seed, DType dtype, Device device,
                        RandomKind kind, std::string_view op) {
  require_float(dtype, op);
  RawTensor out = empty(shape, dtype, device, op);
  if (out.numel() > 0) backend_for(device).random(out, kind, seed);
  return out;
}

RawTensor uniform(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return random(shape, seed, dtype, device, RandomKind::uniform, "uniform");
}

RawTensor normal(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return random(shape, seed, dtype, device, RandomKind::normal, "normal");
}

void to_host(const RawTensor& x, void* dst) {
  require_defined(x, "to_host");
  if (x.numel() == 0) return;
  if (!dst) fail<ValueError>("to_host", "null destination pointer");
  backend_for(x.device()).to_host(x, dst);
}

RawTensor to_device(const RawTensor& x, Device device) {
  require_defined(x, "to_device");
  if (x.device() == device) return x;
  RawTensor out = empty(x.shape(), x.dtype(), device, "to_device");
  if (x.numel() == 0) return out;
  // Through host memory: correct for every pair of devices.
  std::vector<char> host(static_cast<std::size_t>(x.numel()) * dtype_size(x.dtype()));
  backend_for(x.device()).to_host(x, host.data());
  backend_for(device).from_host(out, host.data());
  return out;
}

// --- elementwise --------------------------------------------------------------

RawTensor unary(UnaryOp op, const RawTensor& x) {
  require_defined(x, op_name(op));
  check_dtype(op, x.dtype());
  RawTensor out = empty(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) backend_for(x.device()).unary(op, out, x);
  return out;
}

RawTensor binary(BinaryOp op, const RawTensor& a, const RawTensor& b) {
  const std::string_view name = op_name(op);
  require_defined(a, name);
  require_defined(b, name);
  require_same_device(a, b, name);
  require_same_shape(a, b, name);
  require_same_dtype(a, b, name);
  check_dtype(op, a.dtype());
  if (op == BinaryOp::div && is_integral(a.dtype()) && a.numel() > 0) require_nonzero_divisor(b);
  const DType out_dtype = is_comparison(op) ? DType::b8 : a.dtype();
  RawTensor out = empty(a.shape(), out_dtype, a.device());
  if (out.numel() > 0) backend_for(a.device()).binary(op, out, a, b);
  return out;
}

RawTensor where(const RawTensor& cond, const RawTensor& a, const RawTensor& b) {
  for (const RawTensor* t : {&cond, &a, &b}) require_defined(*t, "where");
  require_same_device(cond, a, "where");
  require_same_device(a, b, "where");
  if (cond.dtype() != DType::b8) {
    fail<DTypeError>("where", "condition has dtype ", dtype_name(cond.dtype()), ", needs bool");
  }
  if (cond.shape() != a.shape() || a.shape() != b.shape()) {
    fail<ShapeError>("where", "shapes ", cond.shape(), ", ", a.shape(), " and ", b.shape(),
                     " differ (the primitive does not broadcast)");
  }
  require_same_dtype(a, b, "where");
  RawTensor out = empty(a.shape(), a.dtype(), a.device());
  if (out.numel() > 0) backend_for(a.device()).where(out, cond, a, b);
  return out;
}

// --- reductions ---------------------------------------------------------------

RawTensor reduce(ReduceOp op, const RawTensor& x, const Shape& axes, bool keepdims) {
  const std::string_view name = op_name(op);
  require_defined(x, name);
  Shape sorted;
  for (int64_t a : axes) sorted.push_back(normalize_axis(a, x.shape(), name));
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      fail<IndexError>(name, "axis ", sorted[i], " repeated in axes ", axes, " (shape ", x.shape(),
                       ")");
    }
  }
  Shape kept = x.shape();
  int64_t reduced = 1;
  for (int64_t a : sorted) reduced *= x.shape()[a], kept[a] = 1;
  if (op != ReduceOp::sum && reduced == 0) {
    fail<ValueError>(name, "cannot reduce over an empty axis (shape ", x.shape(), ", axes ", axes,
                     ")");
  }
  DType out_dtype = x.dtype();
  if (op == ReduceOp::sum && !is_floating(x.dtype())) out_dtype = DType::i64;
  if (op == ReduceOp::argmax || op == ReduceOp::argmin) out_dtype = DType::i64;
  RawTensor out = empty(kept, out_dtype, x.device());
  if (out.numel() > 0) {
    if (reduced == 0) {
      backend_for(x.device()).fill(out, 0.0);
    } else {
      backend_for(x.device()).reduce(op, out, x, sorted);
    }
  }
  if (keepdims) return out;
  Shape squeezed;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (!std::binary_search(sorted.begin(), sorted.end(), i)) squeezed.push_back(x.shape()[i]);
  }
  return out.view(Layout::contiguous(squeezed));
}

// --- movement -----------------------------------------------------------------

RawTensor contiguous(const RawTensor& x) {
  require_defined(x, "contiguous");
  if (x.is_contiguous()) return x;
  RawTensor out = empty(x.shape(), x.dtype(), x.device());
  backend_for(x.device()).copy(out, x);
  return out;
}

RawTensor reshape(const RawTensor& x, const Shape& shape) {
  require_defined(x, "reshape");
  const Shape target = infer_reshape(shape, x.numel(), x.shape(), "reshape");
  if (auto view = x.layout().reshape_view(target)) return x.view(*view);
  return contiguous(x).view(Layout::contiguous(target));
}

RawTensor pad(const RawTensor& x, const std::vector<std::pair<int64_t, int64_t>>& pads,
              double value) {
  require_defined(x, "pad");
  if (static_cast<int64_t>(pads.size()) != x.ndim()) {
    fail<ShapeError>("pad", pads.size(), " (before, after) pairs given for a tensor of shape ",
                     x.shape(), " (needs one per axis)");
  }
  Shape shape = x.shape();
  for (std::size_t i = 0; i < pads.size(); ++i) {
    const auto [lo, hi] = pads[i];
    if (lo < 0 || hi < 0) {
      fail<ValueError>("pad", "padding (", lo, ", ", hi, ") on axis ", i, " is negative");
    }
    if (__builtin_add_overflow(shape[i], lo, &shape[i]) ||
        __builtin_add_overflow(shape[i], hi, &shape[i])) {
      fail<ValueError>("pad", "padded size of axis ", i, " overflows");
    }
  }
  RawTensor out = full_for(shape, value, x.dtype(), x.device(), "pad");
  RawTensor inner = out;
  for (std::size_t i = 0; i < pads.size(); ++i) {
    inner = inner.slice(static_cast<int64_t>(i), pads[i].first, pads[i].first + x.shape()[i]);
  }
  if (x.numel() > 0) backend_for(x.device()).copy(inner, x);
  return out;
}

RawTensor concat(const std::vector<RawTensor>& xs, int64_t axis) {
  if (xs.empty()) fail<ValueError>("concat", "needs at least one tensor");
  for (const RawTensor& x : xs) require_defined(x, "concat");
  const RawTensor& first = xs.front();
  axis = normalize_axis(axis, first.shape(), "concat");
  Shape shape = first.shape();
  shape[axis] = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const RawTensor& x = xs[i];
    require_same_device(first, x, "concat");
    require_same_dtype(first, x, "concat");
    bool fits = x.ndim() == first.ndim();
    for (int64_t d = 0; fits && d < x.ndim(); ++d)
      fits = d == axis || x.shape()[d] == first.shape()[d];
    if (!fits) {
      fail<ShapeError>("concat", "tensor ", i, " has shape ", x.shape(), ", which does not match ",
                       first.shape(), " outside axis ", axis);
    }
    if (__builtin_add_overflow(shape[axis], x.shape()[axis], &shape[axis])) {
      fail<ValueError>("concat", "size of axis ", axis, " overflows");
    }
  }
  RawTensor out = empty(shape, first.dtype(), first.device(), "concat");
  int64_t at = 0;
  for (const RawTensor& x : xs) {
    const int64_t len = x.shape()[axis];
    if (x.numel() > 0) backend_for(x.device()).copy(out.slice(axis, at, at + len), x);
    at += len;
  }
  return out;
}

RawTensor cast(const RawTensor& x, DType dtype) {
  require_defined(x, "cast");
  if (x.dtype() == dtype) return x;
  RawTensor out = empty(x.shape(), dtype, x.device());
  if (out.numel() > 0) backend_for(x.device()).copy(out, x);
  return out;
}

// --- contraction --------------------------------------------------------------

RawTensor matmul(const RawTensor& a, const RawTensor& b) {
  require_defined(a, "matmul");
  require_defined(b, "matmul");
  require_same_device(a, b, "matmul");
  if (a.ndim() < 2 || b.ndim() < 2) {
    fail<ShapeError>("matmul", "operands need rank >= 2, got shapes ", a.shape(), " and ",
                     b.shape(), " (use the composite st::matmul for vectors)");
  }
  require_same_dtype(a, b, "matmul");
  require_numeric(a.dtype(), "matmul");
  const int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1];
  const int64_t k2 = b.shape()[b.ndim() - 2], n = b.shape()[b.ndim() - 1];
  if (k != k2) {
    fail<ShapeError>("matmul", "shapes ", a.shape(), " and ", b.shape(), " do not fit (inner dims ",
                     k, " vs ", k2, ")");
  }
  Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape = batch, a_shape = batch, b_shape = batch;
  out_shape.push_back(m), out_shape.push_back(n);
  a_shape.push_back(m), a_shape.push_back(k);
  b_shape.push_back(k), b_shape.push_back(n);
  RawTensor out = empty(out_shape, a.dtype(), a.device(), "matmul");
  if (out.numel() == 0) return out;
  if (k == 0) {
    backend_for(a.device()).fill(out, 0.0);
    return out;
  }
  backend_for(a.device()).matmul(out, a.expand(a_shape), b.expand(b_shape));
  return out;
}

// --- indexing -----------------------------------------------------------------

static Shape index_result_shape(const RawTensor& x, int64_t axis, const RawTensor& idx,
                                std::string_view op) {
  if (!is_integral(idx.dtype())) {
    fail<DTypeError>(op, "index tensor has dtype ", dtype_name(idx.dtype()), ", needs i32 or i64");
  }
  Shape shape;
  for (int64_t d = 0; d < axis; ++d) shape.push_back(x.shape()[d]);
  for (int64_t d : idx.shape()) shape.push_back(d);
  for (int64_t d = axis + 1; d < x.ndim(); ++d) shape.push_back(x.shape()[d]);
  checked_numel(shape, op);
  return shape;
}

RawTensor index_select(const RawTensor& x, int64_t axis, const RawTensor& idx) {
  require_defined(x, "index_select");
  require_defined(idx, "index_select");
  require_same_device(x, idx, "index_select");
  if (x.ndim() == 0) fail<IndexError>("index_select", "cannot index a rank-0 tensor");
  axis = normalize_axis(axis, x.shape(), "index_select");
  RawTensor out = empty(index_result_shape(x, axis, idx, "index_select"), x.dtype(), x.device(),
                        "index_select");
  // Checked even when the result is empty; the backend gets [0, size) positions.
  const RawTensor pos = detail::index_positions(idx, axis, x.shape()[axis], "index_select");
  if (out.numel() > 0) backend_for(x.device()).index_select(out, x, axis, pos);
  return out;
}

RawTensor index_add(const RawTensor& x, int64_t axis, const RawTensor& idx, const RawTensor& src) {
  for (const RawTensor* t : {&x, &idx, &src}) require_defined(*t, "index_add");
  require_same_device(x, idx, "index_add");
  require_same_device(x, src, "index_add");
  if (x.ndim() == 0) fail<IndexError>("index_add", "cannot index a rank-0 tensor");
  axis = normalize_axis(axis, x.shape(), "index_add");
  const Shape expected = index_result_shape(x, axis, idx, "index_add");
  if (src.shape() != expected) {
    fail<ShapeError>("index_add", "source has shape ", src.shape(), ", expected ", expected,
                     " (base ", x.shape(), " with axis ", axis, " replaced by index shape ",
                     idx.shape(), ")");
  }
  require_same_dtype(x, src, "index_add");
  require_numeric(x.dtype(), "index_add");
  const RawTensor pos = detail::index_positions(idx, axis, x.shape()[axis], "index_add");
  RawTensor out = empty(x.shape(), x.dtype(), x.device(), "index_add");
  Backend& be = backend_for(x.device());
  if (out.numel() > 0) {
    // A broadcast float scalar base (the zero of a backward pass) is a fill,
    // not a copy (exact: f32 and f64 values round-trip through double).
    bool scalar = is_floating(x.dtype());
    for (int64_t s : x.strides()) scalar = scalar && s == 0;
    if (scalar) {
      RawTensor first = x;
      while (first.ndim() > 0) first = first.select(0, 0);
      double v = 0;
      to_host(cast(first, DType::f64), &v);
      be.fill(out, v);
    } else {
      be.copy(out, x);
    }
  }
  if (src.numel() > 0) be.index_add(out, axis, pos, contiguous(src));
  return out;
}

// --- in place -----------------------------------------------------------------

void fill_(const RawTensor& dst, double value) {
  require_defined(dst, "fill_");
  require_writable(dst, "fill_");
  if (dst.numel() > 0) backend_for(dst.device()).fill(dst, value);
  dst.storage()->bump_version();
}

void copy_(const RawTensor& dst, const RawTensor& src) {
  require_defined(dst, "copy_");
  require_defined(src, "copy_");
  require_same_device(dst, src, "copy_");
  require_same_shape(dst, src, "copy_");
  require_writable(dst, "copy_");
  if (dst.numel() > 0) backend_for(dst.device()).copy(dst, unaliased(dst, src));
  dst.storage()->bump_version();
}

void binary_(BinaryOp op, const RawTensor& dst, const RawTensor& src) {
  const std::string_view name = op_name(op);
  require_defined(dst, name);
  require_defined(src, name);
  require_same_device(dst, src, name);
  require_same_shape(dst, src, name);
  require_same_dtype(dst, src, name);
  if (is_comparison(op)) fail<ValueError>(name, "comparisons cannot be done in place");
  check_dtype(op, dst.dtype());
  require_writable(dst, name);
  // Checked before writing, so a failed division leaves dst untouched.
  if (op == BinaryOp::div && is_integral(src.dtype()) && src.numel() > 0) {
    require_nonzero_divisor(src);
  }
  if (dst.numel() > 0) backend_for(dst.device()).binary(op, dst, dst, unaliased(dst, src));
  dst.storage()->bump_version();
}

void axpby_(const RawTensor& dst, double alpha, const RawTensor& src, double beta) {
  constexpr std::string_view name = "axpby_";
  require_defined(dst, name);
  require_defined(src, name);
  require_same_device(dst, src, name);
  require_same_shape(dst, src, name);
  require_same_dtype(dst, src, name);
  require_float(dst.dtype(), name);
  require_writable(dst, name);
  if (dst.numel() > 0) backend_for(dst.device()).axpby(dst, alpha, unaliased(dst, src), beta);
  dst.storage()->bump_version();
}

void adam_step_(const RawTensor& p, const RawTensor& m, const RawTensor& v, const RawTensor& g,
                const AdamStepCoefficients& c) {
  constexpr std::string_view name = "adam_step_";
  for (const RawTensor* t : {&p, &m, &v, &g}) {
    require_defined(*t, name);
    require_same_device(p, *t, name);
    require_same_shape(p, *t, name);
    require_same_dtype(p, *t, name);
  }
  require_float(p.dtype(), name);
  for (const RawTensor* t : {&p, &m, &v}) require_writable(*t, name);
  if (p.storage() == m.storage() || p.storage() == v.storage() || m.storage() == v.storage()) {
    fail<ValueError>(name, "the parameter and its two moments must be three separate tensors");
  }
  if (p.numel() > 0) {
    // g shares at most one of the three storages; read under another layout, it is copied.
    const RawTensor& dst = g.storage() == m.storage() ? m : g.storage() == v.storage() ? v : p;
    backend_for(p.device()).adam_step(p, m, v, unaliased(dst, g), c);
  }
  for (const RawTensor* t : {&p, &m, &v}) t->storage()->bump_version();
}

}  // namespace strata::raw
