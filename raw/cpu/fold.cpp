// SPDX-License-Identifier: MIT
// CPU fold (col2im), the kernel of raw::fold.
//
// Letters: y is [B..., O1..Ok, K1..Kk] with any strides, out is [B..., S1..Sk],
// contiguous; window position o and kernel position k land at p = o * stride +
// k * dilation (each axis). Per batch element b (one thread's block of S
// outputs), out[b] is zeroed and then, for each k in row-major order, every
// window o adds y[b, o, k] at its p. So each output takes its terms in
// row-major order of k from 0, the order of the CUDA kernel's gather
// (raw/cuda/fold.cu): the same bits on both devices and for any thread count.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/walk.hpp"

namespace strata::detail {
namespace {

/// o += v, wrapping for integers (as every integer add in strata).
template <class T>
inline void accumulate(T& o, T v) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    o = T(U(o) + U(v));
  } else {
    o += v;
  }
}

/// The steps of one walk over a k-axis grid (the windows O, or the kernel K): for axis i,
/// how far one step moves in out and in y.
struct GridSteps {
  Shape size;   ///< the grid's extent per axis
  Strides out;  ///< out's step per axis
  Strides y;    ///< y's step per axis
};

/// Calls f(out_offset, y_offset) for every point of the grid in row-major order, the
/// innermost axis as a run: f(out_offset, y_offset, n, out_step, y_step).
template <class F>
void walk_grid(const GridSteps& g, F&& f) {
  const int64_t k = g.size.ndim(), last = k - 1;
  Shape idx(std::size_t(k), 0);
  int64_t oo = 0, yo = 0;
  for (;;) {
    f(oo, yo, g.size[last], g.out[last], g.y[last]);
    int64_t d = last - 1;
    for (; d >= 0; --d) {
      oo += g.out[d];
      yo += g.y[d];
      if (++idx[d] < g.size[d]) break;
      oo -= g.out[d] * g.size[d];
      yo -= g.y[d] * g.size[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void CpuBackend::fold(const RawTensor& out, const RawTensor& y, const Window& w) {
  const int64_t k = w.kernel.ndim(), lead = y.ndim() - 2 * k;
  const Shape& ys = y.shape();
  const Strides& yst = y.strides();
  const Shape spatial(out.shape().begin() + lead, out.shape().end());
  const Strides ost = contiguous_strides(spatial);
  // The windows grid (o) and the kernel grid (k), each with its steps in out and in y.
  GridSteps windows, kernel;
  for (int64_t i = 0; i < k; ++i) {
    windows.size.push_back(ys[lead + i]);
    windows.out.push_back(w.stride[i] * ost[i]);
    windows.y.push_back(yst[lead + i]);
    kernel.size.push_back(ys[lead + k + i]);
    kernel.out.push_back(w.dilation[i] * ost[i]);
    kernel.y.push_back(yst[lead + k + i]);
  }
  int64_t batch = 1, per_window = 1;
  for (int64_t i = 0; i < lead; ++i) batch *= ys[i];
  for (int64_t i = lead; i < ys.ndim(); ++i) per_window *= ys[i];
  const int64_t sn = checked_numel(spatial, "fold");
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, sn + per_window));
  visit_dtype(out.dtype(), "fold", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) {
      T* const ob = base_ptr<T>(out) + out.offset();
      const T* const yb = base_ptr<T>(y) + y.offset();
      parallel_for(0, batch, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; ++b) {
          int64_t yoff = 0;  // y's offset of batch element b (its leading axes, row-major)
          for (int64_t d = lead, rem = b; d-- > 0;) {
            yoff += (rem % ys[d]) * yst[d];
            rem /= ys[d];
          }
          T* const o = ob + b * sn;
          const T* const yy = yb + yoff;
          std::fill(o, o + sn, T(0));
          walk_grid(kernel, [&](int64_t ko, int64_t ky, int64_t kn, int64_t kos, int64_t kys) {
            for (int64_t j = 0; j < kn; ++j) {
              T* const ok = o + ko + j * kos;
              const T* const yk = yy + ky + j * kys;
              walk_grid(windows, [&](int64_t wo, int64_t wy, int64_t n, int64_t os, int64_t ws) {
                for (int64_t i = 0; i < n; ++i) accumulate(ok[wo + i * os], yk[wy + i * ws]);
              });
            }
          });
        }
      });
    }
  });
}

}  // namespace strata::detail
