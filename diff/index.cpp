// SPDX-License-Identifier: MIT
// The index planner: turns an index spec into validated steps for apply_index.
#include <algorithm>
#include <sstream>
#include <string>

#include "diff/arithmetic.hpp"
#include "diff/index.hpp"
#include "raw/cpu/vmath.hpp"

namespace strata::detail {
namespace {

bool is_mask(const Tensor& t) { return t.dtype() == DType::b8; }

/// The axes entry `e` consumes (newaxis and ellipsis: none; a mask: its rank).
int64_t consumed_axes(const Index& e) {
  return std::visit(
      [](const auto& v) -> int64_t {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, NewAxis> || std::is_same_v<V, Ellipsis>) {
          return 0;
        } else if constexpr (std::is_same_v<V, Tensor>) {
          return is_mask(v) ? v.ndim() : 1;
        } else {
          return 1;
        }
      },
      e.value());
}

/// An integer index tensor as in-range positions: the tensor itself when it has
/// no negative entries, else a normalised i64 copy. IndexError names the entry.
Tensor positions_for(const Tensor& idx, int64_t axis, int64_t size, std::string_view op) {
  if (idx.numel() == 0) return idx;
  // The common case, every entry in [0, size), is found without bringing the
  // tensor over: on a device by reading back its extremes (reduced there), on
  // the CPU by one vectorised scan (vmath::first_outside: several times faster
  // than two reductions or a plain loop). A bad or negative index takes the
  // path below.
  const RawTensor flat = raw::reshape(idx.raw(), {-1});
  bool in_range = false;
  if (idx.device().is_cpu()) {
    const RawTensor pos = raw::contiguous(raw::cast(flat, DType::i64));
    const int64_t* v = static_cast<const int64_t*>(pos.storage()->data()) + pos.offset();
    const int64_t n = pos.numel();
    in_range = vmath::first_outside(v, n, 0, size) == n;
  } else {
    const int64_t lo = Tensor(raw::reduce(ReduceOp::min, flat, {0})).item<int64_t>();
    const int64_t hi = Tensor(raw::reduce(ReduceOp::max, flat, {0})).item<int64_t>();
    in_range = lo >= 0 && hi < size;
  }
  if (in_range) return idx;
  const std::vector<int64_t> v = idx.to_vector<int64_t>();
  for (std::size_t j = 0; j < v.size(); ++j) {
    if (v[j] < -size || v[j] >= size) {
      fail<IndexError>(op, "index ", v[j], " (entry ", j, " of the index tensor of shape ",
                       idx.shape(), ") is out of range for axis ", axis, " with size ", size);
    }
  }
  std::vector<int64_t> norm(v);
  for (int64_t& p : norm) p = p < 0 ? p + size : p;
  return Tensor(raw::from_host(norm.data(), idx.shape(), DType::i64, idx.device()));
}

/// The row-major flat positions of a mask's true entries, as a 1-D i64 tensor.
Tensor mask_positions(const Tensor& mask) {
  const std::vector<bool> m = mask.to_vector<bool>();
  std::vector<int64_t> pos;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i]) pos.push_back(int64_t(i));
  }
  return Tensor(raw::from_host(pos.data(), {int64_t(pos.size())}, DType::i64, mask.device()));
}

}  // namespace

std::string_view index_op_name(IndexMode mode) {
  switch (mode) {
    case IndexMode::basic:
      return "ix";
    case IndexMode::outer:
      return "oix";
    case IndexMode::vectorized:
      return "vix";
  }
  return "index";
}

std::vector<IndexStep> plan_index(const Shape& shape, const std::vector<Index>& spec,
                                  IndexMode mode, Device device) {
  const std::string_view op = index_op_name(mode);
  const int64_t ndim = shape.ndim();

  // Kinds, ellipses and the number of axes the entries consume.
  int64_t consumed = 0;
  std::optional<std::size_t> ellipsis_at;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const auto& v = spec[i].value();
    if (std::holds_alternative<Ellipsis>(v)) {
      if (ellipsis_at) {
        fail<IndexError>(op, "an index can have only one ellipsis, found two (entries ",
                         *ellipsis_at, " and ", i, ")");
      }
      ellipsis_at = i;
    }
    if (const Tensor* t = std::get_if<Tensor>(&v)) {
      if (!t->defined()) fail<ValueError>(op, "entry ", i, " is an undefined tensor");
      if (mode == IndexMode::basic) {
        fail<IndexError>(op, "entry ", i, " is a tensor of shape ", t->shape(),
                         "; basic indexing takes integers, slices, all, newaxis and "
                         "ellipsis: use oix or vix to index with tensors");
      }
      if (!is_mask(*t) && !is_integral(t->dtype())) {
        fail<DTypeError>(op, "entry ", i, " is an index tensor of dtype ", dtype_name(t->dtype()),
                         "; index tensors need i32 or i64 (positions) or bool (a mask)");
      }
      if (t->device() != device) {
        fail<DeviceError>(op, "entry ", i, " is an index tensor on ", t->device(),
                          " but the indexed tensor is on ", device);
      }
    }
    if (const Slice* s = std::get_if<Slice>(&v); s && s->step == 0) {
      fail<ValueError>(op, "entry ", i, " is a slice with step 0; the step must not be zero");
    }
    consumed += consumed_axes(spec[i]);
  }
  if (consumed > ndim) {
    fail<IndexError>(op, "too many indices: they cover ", consumed,
                     " axes but the tensor of shape ", shape, " has ", ndim);
  }

  std::vector<IndexStep> steps;
  std::vector<Shape> fancy_shapes;
  int64_t axis = 0;  // the next source axis
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const auto& v = spec[i].value();
    IndexStep s;
    s.axis = axis;
    if (const int64_t* k = std::get_if<int64_t>(&v)) {
      const int64_t size = shape[axis];
      if (*k < -size || *k >= size) {
        fail<IndexError>(op, "index ", *k, " is out of range for axis ", axis, " with size ", size);
      }
      s.kind = IndexStep::integer;
      s.value = *k < 0 ? *k + size : *k;
      ++axis;
    } else if (const Slice* sl = std::get_if<Slice>(&v)) {
      s.kind = IndexStep::slice;
      s.range = *sl;
      ++axis;
    } else if (std::holds_alternative<All>(v)) {
      s.kind = IndexStep::whole;
      s.value = 1;
      ++axis;
    } else if (std::holds_alternative<Ellipsis>(v)) {
      s.kind = IndexStep::whole;
      s.value = ndim - consumed;
      axis += s.value;
    } else if (std::holds_alternative<NewAxis>(v)) {
      s.kind = IndexStep::newaxis;
    } else {
      const Tensor& t = std::get<Tensor>(v);
      if (is_mask(t)) {
        const int64_t k = t.ndim();
        for (int64_t d = 0; d < k; ++d) {
          if (t.shape()[d] != shape[axis + d]) {
            fail<IndexError>(op, "mask of shape ", t.shape(),
                             " does not match the axes it covers (", axis, " to ", axis + k - 1,
                             " of shape ", shape, "): axis ", axis + d, " has size ",
                             shape[axis + d], " but the mask has ", t.shape()[d]);
          }
        }
        s.kind = IndexStep::mask;
        s.mask_ndim = k;
        s.positions = mask_positions(t);
        axis += k;
      } else {
        s.kind = IndexStep::tensor;
        s.positions = positions_for(t, axis, shape[axis], op);
        ++axis;
      }
      fancy_shapes.push_back(s.positions.shape());
    }
    steps.push_back(std::move(s));
  }

  if (mode == IndexMode::vectorized && fancy_shapes.size() > 1) {
    Shape b = fancy_shapes.front();
    for (std::size_t j = 1; j < fancy_shapes.size(); ++j) {
      try {
        b = broadcast_shapes(b, fancy_shapes[j], op);
      } catch (const ShapeError&) {
        std::string shapes;
        for (const Shape& f : fancy_shapes) {
          std::ostringstream os;
          os << f;
          shapes += (shapes.empty() ? "" : ", ") + os.str();
        }
        fail<IndexError>(op, "index tensors of shapes ", shapes, " do not broadcast together");
      }
    }
  }
  return steps;
}

Tensor flat_positions(const std::vector<Tensor>& idx, const std::vector<int64_t>& sizes) {
  // Row-major strides of the merged axes.
  std::vector<int64_t> stride(sizes.size(), 1);
  for (std::size_t j = sizes.size(); j-- > 1;) stride[j - 1] = stride[j] * sizes[j];
  Tensor flat = idx[0].to(DType::i64) * stride[0];
  for (std::size_t j = 1; j < idx.size(); ++j) flat = flat + idx[j].to(DType::i64) * stride[j];
  return flat;
}

}  // namespace strata::detail
