// SPDX-License-Identifier: MIT
#include "diff/tensor.hpp"

#include <array>
#include <ostream>
#include <span>
#include <sstream>
#include <type_traits>

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
    copy_to(std::span<T>(out));
    return out;
  }
}

template <Element T>
void Tensor::copy_to(std::span<T> out) const {
  const RawTensor& r = defined_raw(*this, "copy_to");
  if (static_cast<int64_t>(out.size()) != r.numel()) {
    detail::fail<ValueError>("copy_to", "tensor of shape ", r.shape(), " has ", r.numel(),
                             " elements, the destination holds ", out.size(),
                             "; give it exactly numel() elements");
  }
  if (out.empty()) return;
  // A bool is one byte holding 0 or 1: the b8 cast's bytes are bools.
  raw::to_host(raw::cast(r, std::is_same_v<T, bool> ? DType::b8 : dtype_v<T>), out.data());
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
  template void Tensor::copy_to<T>(std::span<T>) const; \
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

Tensor arange(double stop, DType dtype, Device device) {
  return Tensor(raw::arange(0, stop, 1, dtype, device));
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
