// SPDX-License-Identifier: MIT
// Gathering a fused group's strided and broadcast operands (jit/gather.hpp).
#include "jit/gather.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace strata::tracing {

Layout coalesced(const Layout& l) {
  Layout out;
  out.offset = l.offset;
  for (int64_t d = 0; d < l.ndim(); ++d) {
    const int64_t size = l.shape[std::size_t(d)], stride = l.strides[std::size_t(d)];
    if (size == 1) continue;
    if (!out.shape.empty() && out.strides.back() == stride * size) {
      out.shape.back() *= size;
      out.strides.back() = stride;
      continue;
    }
    out.shape.push_back(size);
    out.strides.push_back(stride);
  }
  if (out.shape.empty()) out.shape.push_back(1), out.strides.push_back(0);
  return out;
}

PadRead::PadRead(Layout source_in, Shape before_in, Shape padded_in, uint64_t fill_in)
    : source(std::move(source_in)),
      before(std::move(before_in)),
      padded(std::move(padded_in)),
      fill(fill_in) {
  const int64_t nd = padded.ndim();
  if (nd == 0) return;
  Layout outer;  // x's rows
  for (int64_t d = 0; d + 1 < nd; ++d) {
    if (before[std::size_t(d)] != 0 || source.shape[std::size_t(d)] != padded[std::size_t(d)])
      return;
    outer.shape.push_back(source.shape[std::size_t(d)]);
    outer.strides.push_back(source.strides[std::size_t(d)]);
  }
  const Layout rows = coalesced(outer);
  if (rows.ndim() == 1) row_step = rows.strides[0];
}

namespace {

// Copies m elements: short runs (a slice's rows of 1 to 4 elements, a reprojection's point or
// camera centre) without the call std::copy makes to memmove, which cost more than the copy.
template <class U>
void copy_run(const U* src, int64_t m, U* dst) {
  switch (m) {
    case 4:
      dst[3] = src[3];
      [[fallthrough]];
    case 3:
      dst[2] = src[2];
      [[fallthrough]];
    case 2:
      dst[1] = src[1];
      [[fallthrough]];
    case 1:
      dst[0] = src[0];
      [[fallthrough]];
    case 0:
      return;
    default:
      std::copy(src, src + m, dst);
  }
}

// gather() for elements of type U.
template <class U>
void gather_typed(const U* base, const Layout& l, int64_t lo, int64_t n, U* dst) {
  const int64_t nd = l.ndim();
  const int64_t inner = l.shape[std::size_t(nd - 1)], step = l.strides[std::size_t(nd - 1)];
  if (nd <= 2) {
    // One row after another (a broadcast column, a strided column, a transposed matrix): the
    // common views, without the general walk's carries.
    const int64_t outer_step = nd == 2 ? l.strides[0] : 0;
    int64_t c = lo % inner;
    const U* row = base + l.offset + (lo / inner) * outer_step;
    for (int64_t j = 0; j < n; row += outer_step, c = 0) {
      const int64_t m = std::min(n - j, inner - c);
      if (step == 1) {
        copy_run(row + c, m, dst + j);  // rows of a slice: a copy each
      } else if (step == 0) {
        std::fill(dst + j, dst + j + m, row[0]);
      } else {
        for (int64_t k = 0; k < m; ++k) dst[j + k] = row[(c + k) * step];
      }
      j += m;
    }
    return;
  }
  Shape idx = l.shape;  // the multi-index of element lo (inline storage: no allocation)
  int64_t rest = lo, off = l.offset;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[std::size_t(d)] = rest % l.shape[std::size_t(d)];
    rest /= l.shape[std::size_t(d)];
    off += idx[std::size_t(d)] * l.strides[std::size_t(d)];
  }
  int64_t j = 0;
  while (j < n) {
    // The rest of the current innermost row, then carry into the outer axes.
    const int64_t m = std::min(n - j, inner - idx[std::size_t(nd - 1)]);
    if (step == 1) {
      copy_run(base + off, m, dst + j);
    } else if (step == 0) {
      std::fill(dst + j, dst + j + m, base[off]);
    } else {
      for (int64_t k = 0; k < m; ++k) dst[j + k] = base[off + k * step];
    }
    j += m;
    off += m * step;
    idx[std::size_t(nd - 1)] += m;
    for (int64_t d = nd - 1; d > 0 && idx[std::size_t(d)] == l.shape[std::size_t(d)]; --d) {
      off -= idx[std::size_t(d)] * l.strides[std::size_t(d)];
      idx[std::size_t(d)] = 0;
      ++idx[std::size_t(d - 1)];
      off += l.strides[std::size_t(d - 1)];
    }
  }
}

// gather_padded() for elements of type U: the pad value everywhere, then x's part of each
// row of the padded shape that falls inside x on every outer axis.
template <class U>
void gather_padded_typed(const U* base, const PadRead& p, int64_t lo, int64_t n, U* dst) {
  U fill;
  std::memcpy(&fill, &p.fill, sizeof(U));
  const Layout& x = p.source;
  const int64_t nd = p.padded.ndim();
  if (nd == 0) {
    *dst = base[x.offset];  // a pad of a scalar: the scalar
    return;
  }
  if (p.fill == 0) {
    std::memset(dst, 0, std::size_t(n) * sizeof(U));  // the C library's widest stores
  } else {
    std::fill(dst, dst + n, fill);
  }
  const int64_t width = p.padded[std::size_t(nd - 1)];
  const int64_t first = p.before[std::size_t(nd - 1)], count = x.shape[std::size_t(nd - 1)];
  const int64_t step = x.strides[std::size_t(nd - 1)];
  if (p.row_step != PadRead::kNoRowStep) {
    // Only the last axis is padded, x's rows a row_step apart: each row's part of x copied.
    // Offsets, not a pointer stepped row by row: past the last row it would leave the buffer.
    int64_t c = lo % width, row = x.offset + lo / width * p.row_step;
    for (int64_t j = 0; j < n; c = 0, row += p.row_step) {
      const int64_t m = std::min(n - j, width - c);
      const int64_t a = std::clamp(first, c, c + m), b = std::clamp(first + count, c, c + m);
      for (int64_t k = a; k < b; ++k) dst[j - c + k] = base[row + (k - first) * step];
      j += m;
    }
    return;
  }
  // The row of element lo: its outer axes' index (idx, relative to x: may be outside it) and,
  // for the axes inside x, its offset there.
  Shape idx = p.padded;
  int64_t rest = lo / width;
  for (int64_t d = nd - 2; d >= 0; --d) {
    idx[std::size_t(d)] = rest % p.padded[std::size_t(d)] - p.before[std::size_t(d)];
    rest /= p.padded[std::size_t(d)];
  }
  int64_t c = lo % width;
  for (int64_t j = 0; j < n; c = 0) {
    const int64_t m = std::min(n - j, width - c);
    int64_t off = x.offset;
    bool inside = true;
    for (int64_t d = 0; d + 1 < nd; ++d) {
      const int64_t i = idx[std::size_t(d)];
      inside = inside && i >= 0 && i < x.shape[std::size_t(d)];
      off += i * x.strides[std::size_t(d)];
    }
    // Columns [c, c + m) of the row: x's from a to b.
    const int64_t a = std::clamp(first, c, c + m), b = std::clamp(first + count, c, c + m);
    if (inside) {
      for (int64_t k = a; k < b; ++k) dst[j - c + k] = base[off + (k - first) * step];
    }
    j += m;
    for (int64_t d = nd - 2; d >= 0; --d) {
      if (++idx[std::size_t(d)] < p.padded[std::size_t(d)] - p.before[std::size_t(d)]) break;
      idx[std::size_t(d)] = -p.before[std::size_t(d)];
    }
  }
}

// Calls f with the unsigned type of `size` bytes.
template <class F>
void by_size(std::size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

}  // namespace

void gather_padded(const char* base, const PadRead& p, std::size_t size, int64_t lo, int64_t n,
                   char* dst) {
  by_size(size, [&]<class U>(U) {
    gather_padded_typed(reinterpret_cast<const U*>(base), p, lo, n, reinterpret_cast<U*>(dst));
  });
}

void gather(const char* base, const Layout& l, std::size_t size, int64_t lo, int64_t n, char* dst) {
  by_size(size, [&]<class U>(U) {
    gather_typed(reinterpret_cast<const U*>(base), l, lo, n, reinterpret_cast<U*>(dst));
  });
}

}  // namespace strata::tracing
