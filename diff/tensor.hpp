// SPDX-License-Identifier: MIT
#pragma once
/// Tensor: the user-facing plain tensor, the bottom level of the AD stack. It
/// wraps an immutable RawTensor, adds the factories and accessors of DESIGN's
/// "exact spelling", the in-place updates optimisers need, and (through the
/// Ops mixin and Prims<Tensor>) every differentiable op.
#include <cstdint>
#include <iosfwd>
#include <span>
#include <vector>

#include "diff/diffable.hpp"
#include "diff/mixin.hpp"
#include "raw/conv.hpp"
#include "raw/ops.hpp"
#include "raw/raw_tensor.hpp"

namespace strata {

/// The plain tensor: an n-dimensional array of one dtype (bool, i32, i64, f32, f64) on one
/// device, with every op as a free function (`st::exp(x)`) and a method (`x.exp()`).
/// Copies are cheap and share the data (views too); ops return new tensors. Example:
/// `st::Tensor x = st::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});`
class Tensor : public Ops<Tensor> {
 public:
  /// An undefined tensor; most operations on it throw ValueError.
  Tensor() = default;
  /// The tensor whose value is `raw` (shares its storage).
  explicit Tensor(RawTensor raw) : raw_(std::move(raw)) {}

  /// The value underneath: storage, layout, dtype.
  const RawTensor& raw() const { return raw_; }
  /// False for a default-constructed tensor.
  bool defined() const { return raw_.defined(); }
  /// The size of each dimension: `x.shape()` prints as [2, 3].
  const Shape& shape() const { return raw_.shape(); }
  /// The number of dimensions (0 for a scalar tensor).
  int64_t ndim() const { return raw_.ndim(); }
  /// The number of elements (1 for a 0-d tensor).
  int64_t numel() const { return raw_.numel(); }
  /// The element type.
  DType dtype() const { return raw_.dtype(); }
  /// Where the data lives; ValueError for an undefined tensor.
  Device device() const;

  /// The elements in row-major order, converted to T (like numpy's tolist()).
  template <Element T>
  std::vector<T> to_vector() const;
  /// The same elements written into `out`, which must hold exactly numel() of them: no
  /// allocation, for a buffer a loop fills again on every step. ValueError when the sizes
  /// differ. Example: `jac.copy_to(std::span<double>(values))`.
  template <Element T>
  void copy_to(std::span<T> out) const;
  /// The single element, converted to T; ValueError unless numel() == 1.
  template <Element T>
  T item() const;

  /// A copy converted to dtype (this tensor when it already has it).
  Tensor to(DType dtype) const;
  /// A copy on device (this tensor when it is already there).
  Tensor to(Device device) const;

  // In-place updates (for optimisers): write through to the storage, shared
  // by every view, and bump its version so a pending backward pass that saved
  // this value notices. `other` broadcasts to this shape and is cast to its dtype.
  // ShapeError when `other` does not broadcast to this shape.

  /// *this += other, in place: `w.add_(g)`.
  Tensor& add_(const Tensor& other);
  /// *this -= other, in place: `w.sub_(g * 0.1)`.
  Tensor& sub_(const Tensor& other);
  /// *this *= other, in place.
  Tensor& mul_(const Tensor& other);
  /// *this /= other, in place (integer tensors divide truncating toward zero).
  Tensor& div_(const Tensor& other);
  /// Overwrites every element with other's, in place (other cast to this dtype).
  Tensor& copy_(const Tensor& other);
  /// Sets every element to value, in place: `m.fill_(0.0)`.
  Tensor& fill_(double value);

 private:
  RawTensor raw_;
};

/// The primitives of the bottom level: the raw primitives on the plain value.
template <>
struct Prims<Tensor> {
  /// @{
  /// The raw primitive of the same name (raw/ops.hpp) on the plain values; constant(t) is t
  /// and plain(x) is x. Throws what the raw primitive throws.
  static Tensor unary(UnaryOp op, const Tensor& x);
  static Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
  static Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
  static Tensor sum(const Tensor& x, const Shape& axes, bool keepdims);
  static Tensor max(const Tensor& x, const Shape& axes, bool keepdims);
  static Tensor permute(const Tensor& x, const Shape& dims);
  static Tensor expand(const Tensor& x, const Shape& shape);
  static Tensor reshape(const Tensor& x, const Shape& shape);
  static Tensor slice(const Tensor& x, int64_t axis, std::optional<int64_t> start,
                      std::optional<int64_t> stop, int64_t step);
  static Tensor pad(const Tensor& x, const Pads& pads);
  static Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
  static Tensor windows(const Tensor& x, const Window& w);
  static Tensor fold(const Tensor& y, const Window& w, const Shape& spatial);
  static Tensor cast(const Tensor& x, DType dtype);
  static Tensor matmul(const Tensor& a, const Tensor& b);
  static Tensor conv(const Tensor& x, const Tensor& w, const ConvGeometry& g);
  static Tensor conv_input_grad(const Tensor& gy, const Tensor& w, const Shape& x_shape,
                                const ConvGeometry& g);
  static Tensor conv_weight_grad(const Tensor& x, const Tensor& gy, const Shape& w_shape,
                                 const ConvGeometry& g);
  static Tensor index_select(const Tensor& x, int64_t axis, const Tensor& idx);
  static Tensor index_add(const Tensor& x, int64_t axis, const Tensor& idx, const Tensor& src);
  static Tensor cholesky(const Tensor& a);
  static Tensor triangular_solve(const Tensor& a, const Tensor& b, TriangularSolve opts);
  static std::array<Tensor, 3> lu(const Tensor& a);
  static Tensor lu_inverse(const Tensor& a, const Tensor& lu, const Tensor& perm);
  static Tensor logabsdet(const Tensor& a, const Tensor& lu, const Tensor& perm);
  static Tensor pinv(const Tensor& a, double cutoff);
  static std::array<Tensor, 2> eigh(const Tensor& a);
  static std::array<Tensor, 3> svd(const Tensor& a);
  static std::array<Tensor, 2> qr(const Tensor& a);
  static Tensor constant(const Tensor& t) { return t; }
  static const Tensor& plain(const Tensor& x) { return x; }
  /// @}

  /// @{
  /// The LevelHooks (diff/diffable.hpp) of the bottom level: a plain tensor holds no batch
  /// axis and carries no derivative, so each is the plain op itself.
  static bool mapped(const Tensor&) { return false; }
  static const Tensor& stored(const Tensor& x) { return x; }
  static Tensor detach(const Tensor& x) { return x; }
  static Tensor constant_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
    return binary(op, a, b);
  }
  static Tensor constant_unary(UnaryOp op, const Tensor& x) { return unary(op, x); }
  static Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b) {
    return where(cond, a, b);
  }
  /// @}
};
static_assert(LevelHooks<Tensor>);

/// NumPy-like printing (raw/print.cpp).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// A tensor holding a copy of `data` with the given shape, dtype from T (float: f32, double:
/// f64, int32_t, int64_t, bool), on st::default_device() (the CPU unless a DefaultDevice guard
/// says otherwise; `.to(device)` moves it). ShapeError when data.size() is not the shape's element
/// count. Example: `st::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3})`.
template <Element T>
Tensor from_vector(const std::vector<T>& data, const Shape& shape);
/// A 1-D tensor holding a copy of `data`.
template <Element T>
Tensor from_vector(const std::vector<T>& data) {
  return from_vector(data, Shape{static_cast<int64_t>(data.size())});
}

/// A tensor of zeros: `st::zeros({2, 3})` (f32), `st::zeros({2, 3}, st::f64)`. Here and in the
/// factories below, the device defaults to st::default_device() (the CPU unless a
/// DefaultDevice guard says otherwise). ValueError for a
/// negative dim or an element count that overflows.
Tensor zeros(const Shape& shape, DType dtype = f32, Device device = default_device());
/// A tensor of ones: `st::ones({3}, st::f64)`. Throws like zeros.
Tensor ones(const Shape& shape, DType dtype = f32, Device device = default_device());
/// A tensor whose every element is value, cast to dtype: `st::full({2}, 1.5, st::f64)`.
Tensor full(const Shape& shape, double value, DType dtype = f32, Device device = default_device());
/// start, start + step, ... below stop; i64 unless told otherwise (numpy.arange).
Tensor arange(double start, double stop, double step = 1, DType dtype = i64,
              Device device = default_device());
/// 0, 1, ... below stop (numpy.arange(stop)): `st::arange(5)`, `st::arange(4, st::f64)`.
Tensor arange(double stop, DType dtype = i64, Device device = default_device());
/// n evenly spaced values from start to stop inclusive (numpy.linspace); n >= 0.
Tensor linspace(double start, double stop, int64_t n, DType dtype = f32,
                Device device = default_device());
/// The n x n identity matrix.
Tensor eye(int64_t n, DType dtype = f32, Device device = default_device());
/// Standard normal values from seed (Philox: the same on every device).
Tensor randn(const Shape& shape, uint64_t seed, DType dtype = f32,
             Device device = default_device());
/// Uniform values in [0, 1) from seed.
Tensor rand(const Shape& shape, uint64_t seed, DType dtype = f32, Device device = default_device());

}  // namespace strata
