// SPDX-License-Identifier: MIT
#include "core/layout.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"

namespace strata {

Layout Layout::contiguous(const Shape& shape) {
  checked_numel(shape, "layout");
  return Layout{shape, contiguous_strides(shape), 0};
}

int64_t Layout::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Layout::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

std::pair<int64_t, int64_t> Layout::span(std::string_view op) const {
  if (checked_numel(shape, op) == 0) return {offset, offset};
  // Every step checked: a user-built layout (RawTensor::view) may have
  // strides whose reach does not fit in int64.
  int64_t lo = offset, hi = offset;
  bool overflow = false;
  for (std::size_t i = 0; i < shape.size() && !overflow; ++i) {
    int64_t reach = 0;
    overflow = __builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
               __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi);
  }
  if (overflow || __builtin_add_overflow(hi, 1, &hi)) {
    detail::fail<ValueError>(op, "layout (shape ", shape, ", strides ", strides, ", offset ",
                             offset, ") reaches past the int64 range of element offsets");
  }
  return {lo, hi};
}

Layout Layout::permute(const Shape& dims) const {
  const int64_t n = ndim();
  if (dims.ndim() != n) {
    detail::fail<ShapeError>("permute", "permutation ", dims, " has ", dims.size(),
                             " entries for a tensor of shape ", shape);
  }
  std::vector<bool> seen(n, false);
  Layout out{Shape(n), Strides(n), offset};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = normalize_axis(dims[i], shape, "permute");
    if (seen[d]) {
      detail::fail<ShapeError>("permute", "permutation ", dims, " repeats axis ", d, " (shape ",
                               shape, ")");
    }
    seen[d] = true;
    out.shape[i] = shape[d];
    out.strides[i] = strides[d];
  }
  return out;
}

Layout Layout::transpose(int64_t a, int64_t b) const {
  a = normalize_axis(a, shape, "transpose");
  b = normalize_axis(b, shape, "transpose");
  Layout out = *this;
  std::swap(out.shape[a], out.shape[b]);
  std::swap(out.strides[a], out.strides[b]);
  return out;
}

Layout Layout::expand(const Shape& target) const {
  const int64_t n = target.ndim(), lead = n - ndim();
  if (lead < 0) {
    detail::fail<ShapeError>("expand", "cannot broadcast shape ", shape, " to ", target,
                             " (fewer dims)");
  }
  checked_numel(target, "expand");
  Layout out{target, Strides(n, 0), offset};
  for (int64_t i = 0; i < ndim(); ++i) {
    if (shape[i] == target[lead + i]) {
      out.strides[lead + i] = strides[i];
    } else if (shape[i] != 1) {
      detail::fail<ShapeError>("expand", "cannot broadcast shape ", shape, " to ", target,
                               " (axis ", lead + i, ": ", shape[i], " vs ", target[lead + i], ")");
    }
  }
  return out;
}

Layout Layout::slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
                     int64_t step) const {
  axis = normalize_axis(axis, shape, "slice");
  if (step == 0) detail::fail<ValueError>("slice", "step must not be zero (axis ", axis, ")");
  const int64_t n = shape[axis];
  // Python's slice.indices: clamp into range, with defaults depending on the step's sign.
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t b = clamp(start, step > 0 ? 0 : n - 1);
  const int64_t e = clamp(stop, step > 0 ? n : -1);
  // b and e are clamped into [-1, n], so these never overflow, whatever the step.
  int64_t len = 0;
  if (step > 0 && e > b) len = (e - b - 1) / step + 1;
  if (step < 0 && b > e) len = (e - b + 1) / step + 1;
  Layout out = *this;
  out.shape[axis] = len;
  if (len > 1 && __builtin_mul_overflow(strides[axis], step, &out.strides[axis])) {
    detail::fail<ValueError>("slice", "step ", step, " overflows the stride of axis ", axis);
  }
  if (len > 0) out.offset += b * strides[axis];
  return out;
}

Layout Layout::windows(const Window& w) const {
  const Shape counts = window_counts(shape, w, "windows");
  const int64_t k = w.kernel.ndim(), lead = ndim() - k;
  Layout out{Shape(shape.begin(), shape.begin() + lead),
             Strides(strides.begin(), strides.begin() + lead), offset};
  // A size-1 axis keeps the axis's own stride, whatever the step; otherwise the product is
  // at most the axis's reach, (O - 1) s <= S - 1 and (K - 1) d <= S - 1, checked all the
  // same (the layout of an empty tensor is never checked against int64).
  auto step = [&](int64_t i, int64_t n, int64_t by) {
    int64_t st = strides[lead + i];
    if (n > 1 && __builtin_mul_overflow(st, by, &st)) {
      detail::fail<ValueError>("windows", "the step of axis ", lead + i, " overflows (stride ",
                               strides[lead + i], " times ", by, ")");
    }
    return st;
  };
  for (int64_t i = 0; i < k; ++i) {
    out.shape.push_back(counts[i]);
    out.strides.push_back(step(i, counts[i], w.stride[i]));
  }
  for (int64_t i = 0; i < k; ++i) {
    out.shape.push_back(w.kernel[i]);
    out.strides.push_back(step(i, w.kernel[i], w.dilation[i]));
  }
  checked_numel(out.shape, "windows");
  return out;
}

Layout Layout::select(int64_t axis, int64_t index) const {
  axis = normalize_axis(axis, shape, "select");
  const int64_t n = shape[axis];
  if (index < -n || index >= n) {
    detail::fail<IndexError>("select", "index ", index, " is out of range for axis ", axis,
                             " with size ", n);
  }
  if (index < 0) index += n;
  Layout out = *this;
  out.offset += index * strides[axis];
  out.shape.erase(axis);
  out.strides.erase(axis);
  return out;
}

Layout Layout::flip(int64_t axis) const {
  axis = normalize_axis(axis, shape, "flip");
  Layout out = *this;
  if (shape[axis] > 0) out.offset += (shape[axis] - 1) * strides[axis];
  out.strides[axis] = -strides[axis];
  return out;
}

Layout Layout::squeeze(int64_t axis) const {
  axis = normalize_axis(axis, shape, "squeeze");
  if (shape[axis] != 1) {
    detail::fail<ShapeError>("squeeze", "axis ", axis, " of shape ", shape, " has size ",
                             shape[axis], ", not 1");
  }
  Layout out = *this;
  out.shape.erase(axis);
  out.strides.erase(axis);
  return out;
}

Layout Layout::unsqueeze(int64_t axis) const {
  axis = normalize_axis(axis, ndim() + 1, "unsqueeze");
  Layout out = *this;
  // The new axis has size 1, so its stride never moves a pointer: the
  // row-major choice when it fits, else any value.
  int64_t stride = 1;
  if (axis < ndim() &&
      __builtin_mul_overflow(strides[axis], std::max<int64_t>(shape[axis], 1), &stride)) {
    stride = strides[axis];
  }
  out.shape.insert(axis, 1);
  out.strides.insert(axis, stride);
  return out;
}

std::optional<Layout> Layout::reshape_view(const Shape& new_shape) const {
  if (checked_numel(new_shape, "reshape") != numel()) {
    detail::fail<ShapeError>("reshape", "cannot view shape ", shape, " as ", new_shape,
                             " (element counts differ)");
  }
  // Group the old dims (size-1 dims dropped) into runs whose product matches a
  // run of new dims; each old run must be contiguous within itself.
  Shape os, ot, ns;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (shape[i] != 1) os.push_back(shape[i]), ot.push_back(strides[i]);
  }
  for (int64_t d : new_shape) {
    if (d != 1) ns.push_back(d);
  }
  Strides nt(ns.size(), 1);
  if (numel() != 0) {
    std::size_t oi = 0, ni = 0;
    while (oi < os.size() && ni < ns.size()) {
      int64_t np = ns[ni], op = os[oi];
      std::size_t nj = ni + 1, oj = oi + 1;
      while (np != op) {
        if (np < op) {
          np *= ns[nj++];
        } else {
          op *= os[oj++];
        }
      }
      for (std::size_t k = oi; k + 1 < oj; ++k) {
        int64_t next = 0;
        if (__builtin_mul_overflow(ot[k + 1], os[k + 1], &next) || ot[k] != next) {
          return std::nullopt;
        }
      }
      nt[nj - 1] = ot[oj - 1];
      for (std::size_t k = nj - 1; k > ni; --k) nt[k - 1] = nt[k] * ns[k];
      ni = nj;
      oi = oj;
    }
  } else {
    nt = contiguous_strides(ns);
  }
  // Put the size-1 dims back with a stride that keeps row-major neighbours
  // tidy (any stride is right for them: one that would overflow stays 1).
  Layout out{new_shape, Strides(new_shape.size(), 1), offset};
  std::size_t k = ns.size();
  for (std::size_t i = new_shape.size(); i-- > 0;) {
    if (new_shape[i] != 1) {
      out.strides[i] = nt[--k];
    } else if (i + 1 < new_shape.size() &&
               __builtin_mul_overflow(out.strides[i + 1], new_shape[i + 1], &out.strides[i])) {
      out.strides[i] = 1;
    }
  }
  return out;
}

Shape infer_reshape(const Shape& requested, int64_t numel, const Shape& from, std::string_view op) {
  Shape out = requested;
  int64_t known = 1, infer_at = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) {
        detail::fail<ShapeError>(op, "shape ", requested, " has more than one -1");
      }
      infer_at = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      detail::fail<ShapeError>(op, "shape ", requested, " has negative dimension ", out[i]);
    } else if (__builtin_mul_overflow(known, out[i], &known)) {
      detail::fail<ValueError>(op, "element count of shape ", requested, " overflows int64");
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0) {
      detail::fail<ShapeError>(op, "cannot reshape ", from, " (", numel, " elements) to ",
                               requested);
    }
    out[infer_at] = numel / known;
  } else if (known != numel) {
    detail::fail<ShapeError>(op, "cannot reshape ", from, " (", numel, " elements) to ", requested,
                             " (", known, " elements)");
  }
  return out;
}

}  // namespace strata
