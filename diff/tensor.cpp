// SPDX-License-Identifier: MIT
#include "diff/tensor.hpp"

#include <array>
#include <ostream>
#include <span>
#include <sstream>

#include "core/error.hpp"
#include "diff/debug_nans.hpp"

namespace strata {
namespace {

const RawTensor& defined_raw(const Tensor& t, std::string_view op) {
  if (!t.defined()) detail::fail<ValueError>(op, "undefined tensor (default-constructed)");
  return t.raw();
}

}  // namespace

Device Tensor::device() const { return defined_raw(*this, "device").device(); }

template <Element T>
std::vector<T> Tensor::to_vector() const {
  const RawTensor& r = defined_raw(*this, "to_vector");
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> is packed (no data()): go through bytes.
    std::vector<uint8_t> bytes(static_cast<std::size_t>(r.numel()));
    if (!bytes.empty()) raw::to_host(raw::cast(r, DType::b8), bytes.data());
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> out(static_cast<std::size_t>(r.numel()));
    if (!out.empty()) raw::to_host(raw::cast(r, dtype_v<T>), out.data());
    return out;
  }
}

template <Element T>
T Tensor::item() const {
  const RawTensor& r = defined_raw(*this, "item");
  if (r.numel() != 1) {
    detail::fail<ValueError>("item", "tensor of shape ", r.shape(), " has ", r.numel(),
                             " elements, not 1");
  }
  return to_vector<T>()[0];
}

Tensor Tensor::to(DType dtype) const { return Tensor(raw::cast(defined_raw(*this, "to"), dtype)); }

Tensor Tensor::to(Device device) const {
  return Tensor(raw::to_device(defined_raw(*this, "to"), device));
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.raw(); }

namespace {

/// `other` as this tensor's dtype, broadcast to its shape (for in-place updates).
RawTensor fitted(const Tensor& self, const Tensor& other, std::string_view op) {
  const RawTensor& dst = defined_raw(self, op);
  const RawTensor src = raw::cast(defined_raw(other, op), dst.dtype());
  if (src.shape() == dst.shape()) return src;
  const Shape b = broadcast_shapes(dst.shape(), src.shape(), op);
  if (b != dst.shape()) {
    detail::fail<ShapeError>(op, "cannot broadcast ", src.shape(), " into the in-place target ",
                             dst.shape());
  }
  return src.expand(dst.shape());
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other) {
  raw::binary_(BinaryOp::add, raw_, fitted(*this, other, "add_"));
  return *this;
}
Tensor& Tensor::sub_(const Tensor& other) {
  raw::binary_(BinaryOp::sub, raw_, fitted(*this, other, "sub_"));
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  raw::binary_(BinaryOp::mul, raw_, fitted(*this, other, "mul_"));
  return *this;
}
Tensor& Tensor::div_(const Tensor& other) {
  raw::binary_(BinaryOp::div, raw_, fitted(*this, other, "div_"));
  return *this;
}
Tensor& Tensor::copy_(const Tensor& other) {
  raw::copy_(raw_, fitted(*this, other, "copy_"));
  return *this;
}
Tensor& Tensor::fill_(double value) {
  raw::fill_(defined_raw(*this, "fill_"), value);
  return *this;
}

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

/// The check of compute_checked(): throws when `out` holds a NaN and no input does.
void check_new_nan(std::string_view op, const RawTensor& out,
                   std::span<const Tensor* const> inputs) {
  if (!debug_nans_enabled() || !has_nan(out)) return;
  for (const Tensor* x : inputs) {
    if (has_nan(x->raw())) return;
  }
  std::ostringstream what;
  what << (inputs.size() == 1 ? "input " : "inputs ");
  const char* sep = "";
  for (const Tensor* x : inputs) {
    what << sep;
    describe(what, x->raw());
    sep = ", ";
  }
  what << "; output ";
  describe(what, out);
  detail::fail<ValueError>("debug_nans", op, " produced NaN in the ",
                           detail::in_backward_pass ? "backward" : "forward",
                           " pass from inputs without NaN (", what.str(), ")");
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
  const std::array<const Tensor*, sizeof...(Inputs)> ins{&inputs...};
  check_new_nan(name_of(op), y.raw(), ins);
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
    std::vector<const Tensor*> ins;
    for (const Tensor& x : xs) ins.push_back(&x);
    check_new_nan("concat", y.raw(), ins);
  }
  return y;
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

template <Element T>
Tensor from_vector(const std::vector<T>& data, const Shape& shape) {
  const int64_t n = checked_numel(shape, "from_vector");
  if (n != static_cast<int64_t>(data.size())) {
    detail::fail<ShapeError>("from_vector", data.size(), " values do not fill shape ", shape, " (",
                             n, " elements)");
  }
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> is packed; widen to one byte per element first.
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return Tensor(raw::from_host(bytes.data(), shape, DType::b8));
  } else {
    return Tensor(raw::from_host(data.data(), shape, dtype_v<T>));
  }
}

// The element types, instantiated once here rather than in every user.
#define STRATA_INSTANTIATE(T)                           \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;                   \
  template Tensor from_vector<T>(const std::vector<T>&, const Shape&);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(int32_t)
STRATA_INSTANTIATE(int64_t)
STRATA_INSTANTIATE(bool)
#undef STRATA_INSTANTIATE

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  return full(shape, 0.0, dtype, device);
}

Tensor ones(const Shape& shape, DType dtype, Device device) {
  return full(shape, 1.0, dtype, device);
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  return Tensor(raw::full(shape, value, dtype, device));
}

Tensor arange(double start, double stop, double step, DType dtype, Device device) {
  return Tensor(raw::arange(start, stop, step, dtype, device));
}

Tensor linspace(double start, double stop, int64_t n, DType dtype, Device device) {
  if (n < 0) detail::fail<ValueError>("linspace", "number of points ", n, " is negative");
  if (n == 1) return full({1}, start, dtype, device);
  // start + i * (stop - start) / (n - 1), with the last point exactly stop,
  // computed in a host tensor (a count too large for memory fails naming linspace).
  const RawTensor v = raw::empty({n}, f64, Device::cpu(), "linspace");
  double* p = v.data<double>();
  for (int64_t i = 0; i < n; ++i) {
    p[i] = i == n - 1 ? stop : start + double(i) * (stop - start) / double(n - 1);
  }
  return Tensor(raw::to_device(raw::cast(v, dtype), device));
}

Tensor eye(int64_t n, DType dtype, Device device) {
  if (n < 0) detail::fail<ValueError>("eye", "size ", n, " is negative");
  checked_numel({n, n}, "eye");  // n * n must fit before any [n, n] view is made
  const RawTensor i = raw::arange(0, double(n), 1, i64, device);
  const RawTensor eq =
      raw::binary(BinaryOp::eq, i.unsqueeze(1).expand({n, n}), i.unsqueeze(0).expand({n, n}));
  return Tensor(raw::cast(eq, dtype));
}

Tensor randn(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return Tensor(raw::normal(shape, seed, dtype, device));
}

Tensor rand(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return Tensor(raw::uniform(shape, seed, dtype, device));
}

}  // namespace strata
