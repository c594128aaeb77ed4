// SPDX-License-Identifier: MIT
// Gathering a fused group's strided and broadcast operands (jit/gather.hpp).
#include "jit/gather.hpp"

#include <algorithm>

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

namespace {

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
        std::copy(row + c, row + c + m, dst + j);  // rows of a slice: a copy each
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
      std::copy(base + off, base + off + m, dst + j);
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

}  // namespace

void gather(const char* base, const Layout& l, std::size_t size, int64_t lo, int64_t n, char* dst) {
  switch (size) {
    case 1:
      return gather_typed(reinterpret_cast<const uint8_t*>(base), l, lo, n,
                          reinterpret_cast<uint8_t*>(dst));
    case 2:
      return gather_typed(reinterpret_cast<const uint16_t*>(base), l, lo, n,
                          reinterpret_cast<uint16_t*>(dst));
    case 4:
      return gather_typed(reinterpret_cast<const uint32_t*>(base), l, lo, n,
                          reinterpret_cast<uint32_t*>(dst));
    default:
      return gather_typed(reinterpret_cast<const uint64_t*>(base), l, lo, n,
                          reinterpret_cast<uint64_t*>(dst));
  }
}

}  // namespace strata::tracing
