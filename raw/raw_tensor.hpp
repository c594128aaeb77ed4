// SPDX-License-Identifier: MIT
#pragma once
/// RawTensor: an immutable tensor value — shared storage, a layout, a dtype.
/// Copying one is cheap (a shared_ptr copy); view methods return new values
/// over the same storage. Arithmetic lives in raw/ops.hpp.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string_view>

#include "core/dtype.hpp"
#include "core/layout.hpp"
#include "core/storage.hpp"

namespace strata {

/// The value under every Tensor: shared storage, a layout (shape, strides, offset) and a
/// dtype. Immutable; copies share the storage. Tensor::raw() reaches it; most programs never do.
class RawTensor {
 public:
  /// An undefined tensor (no storage); defined() is false.
  RawTensor() = default;
  /// A view of `storage` through `layout`; throws ValueError if the layout reaches outside it.
  RawTensor(std::shared_ptr<Storage> storage, Layout layout, DType dtype);

  /// False for a default-constructed tensor.
  bool defined() const { return storage_ != nullptr; }
  /// Shape, strides and offset.
  const Layout& layout() const { return layout_; }
  /// The size of each dimension.
  const Shape& shape() const { return layout_.shape; }
  /// The step of each dimension, in elements (zero or negative for views).
  const Strides& strides() const { return layout_.strides; }
  /// The storage index of element (0, 0, ...).
  int64_t offset() const { return layout_.offset; }
  /// The number of dimensions.
  int64_t ndim() const { return layout_.ndim(); }
  /// The number of elements.
  int64_t numel() const { return layout_.numel(); }
  /// The element type.
  DType dtype() const { return dtype_; }
  /// The device of the storage; throws ValueError for an undefined tensor.
  Device device() const { return defined_storage("device").device(); }
  /// Whether the elements form one dense row-major run (Layout::is_contiguous).
  bool is_contiguous() const { return layout_.is_contiguous(); }
  /// The shared storage.
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  /// Bumped by every in-place write to the storage (any view of it); throws ValueError for
  /// an undefined tensor.
  uint64_t version() const { return defined_storage("version").version(); }

  /// Pointer to element (0, 0, ...) in host memory; T must match the dtype, and the tensor
  /// must be defined (ValueError).
  template <Element T>
  T* data() const {
    if (dtype_v<T> != dtype_) {
      detail::fail<DTypeError>("data", "tensor has dtype ", dtype_name(dtype_), ", requested ",
                               dtype_name(dtype_v<T>));
    }
    return static_cast<T*>(defined_storage("data").data()) + layout_.offset;
  }

  // Views: each shares storage and only rewrites the layout (core/layout.hpp); a layout
  // derived from this one by Layout's own view methods stays inside the storage, so it
  // needs none of view()'s checks.
  /// A view with the axes reordered (Layout::permute).
  RawTensor permute(const Shape& dims) const { return derived(layout_.permute(dims)); }
  /// A view with axes a and b swapped.
  RawTensor transpose(int64_t a, int64_t b) const { return derived(layout_.transpose(a, b)); }
  /// A view broadcast to shape (zero strides).
  RawTensor expand(const Shape& shape) const { return derived(layout_.expand(shape)); }
  /// A view of start:stop:step along axis (Python's clamping).
  RawTensor slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
                  int64_t step = 1) const {
    return derived(layout_.slice(axis, start, stop, step));
  }
  /// A view of position index along axis, without that axis.
  RawTensor select(int64_t axis, int64_t index) const {
    return derived(layout_.select(axis, index));
  }
  /// A view reversed along axis.
  RawTensor flip(int64_t axis) const { return derived(layout_.flip(axis)); }
  /// A view without the size-1 axis.
  RawTensor squeeze(int64_t axis) const { return derived(layout_.squeeze(axis)); }
  /// A view with a new size-1 axis at axis.
  RawTensor unsqueeze(int64_t axis) const { return derived(layout_.unsqueeze(axis)); }
  /// A view of the sliding windows over the trailing axes (Layout::windows): [..., S...] ->
  /// [..., O..., K...]; windows that overlap share elements.
  RawTensor windows(const Window& w) const { return derived(layout_.windows(w)); }
  /// The same storage under another layout (validated against the storage size;
  /// errors name "view").
  RawTensor view(Layout layout) const {
    return RawTensor(storage_, std::move(layout), dtype_, "view");
  }

 private:
  /// The storage, or a ValueError naming op when the tensor is undefined.
  Storage& defined_storage(std::string_view op) const {
    if (!storage_) detail::fail<ValueError>(op, "undefined tensor (default-constructed)");
    return *storage_;
  }
  /// The public constructor, with errors naming op.
  RawTensor(std::shared_ptr<Storage> storage, Layout layout, DType dtype, std::string_view op);
  /// A view through a layout that Layout's view methods derived from this tensor's: inside
  /// the storage by construction, so unchecked.
  RawTensor derived(Layout layout) const {
    RawTensor t;
    t.storage_ = storage_;
    t.layout_ = std::move(layout);
    t.dtype_ = dtype_;
    return t;
  }

  std::shared_ptr<Storage> storage_;
  Layout layout_;
  DType dtype_ = DType::f32;
};

/// NumPy-like printing: values, then shape and dtype; large tensors summarised with "...".
std::ostream& operator<<(std::ostream& os, const RawTensor& t);

}  // namespace strata
