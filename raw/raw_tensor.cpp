// SPDX-License-Identifier: MIT
#include "raw/raw_tensor.hpp"

namespace strata {

RawTensor::RawTensor(std::shared_ptr<Storage> storage, Layout layout, DType dtype)
    : RawTensor(std::move(storage), std::move(layout), dtype, "RawTensor") {}

RawTensor::RawTensor(std::shared_ptr<Storage> storage, Layout layout, DType dtype,
                     std::string_view op)
    : storage_(std::move(storage)), layout_(std::move(layout)), dtype_(dtype) {
  if (!storage_) detail::fail<ValueError>(op, "null storage");
  if (layout_.shape.size() != layout_.strides.size()) {
    detail::fail<ShapeError>(op, "shape ", layout_.shape, " and strides ", layout_.strides,
                             " differ in rank");
  }
  const auto [lo, hi] = layout_.span(op);  // checks the element count and every offset
  const auto elems = static_cast<int64_t>(storage_->bytes() / dtype_size(dtype_));
  if (layout_.numel() > 0 && (lo < 0 || hi > elems)) {
    detail::fail<ValueError>(op, "layout (shape ", layout_.shape, ", strides ", layout_.strides,
                             ", offset ", layout_.offset, ") reaches outside a storage of ", elems,
                             " elements");
  }
}

}  // namespace strata
