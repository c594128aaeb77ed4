// SPDX-License-Identifier: MIT
// The CPU's in-place optimiser updates: axpby (out = alpha out + beta x) and AdamW's
// adam_step, each reading an element before writing it. The front end (raw/ops/) has checked
// shapes and dtypes; the arithmetic is raw/scalar/binary.hpp's, shared with CUDA.
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/map.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"
#include "raw/scalar_ops.hpp"

namespace strata::detail {

void CpuBackend::axpby(const RawTensor& out, double alpha, const RawTensor& x, double beta) {
  visit_dtype(out.dtype(), "axpby_", [&]<std::floating_point T>(type_tag<T>) {
    map<T, T, T>(out, scalar::Axpby<T>{T(alpha), T(beta)}, out, x);
  });
}

void CpuBackend::adam_step(const RawTensor& p, const RawTensor& m, const RawTensor& v,
                           const RawTensor& g, const AdamStepCoefficients& c) {
  visit_dtype(p.dtype(), "adam_step_", [&]<std::floating_point T>(type_tag<T>) {
    const scalar::AdamStep<T> step(c);
    // Contiguous blocks by the instruction set's kernel (the same bits: vmath.hpp).
    const vmath::AdamCoefficients<T> coef{
        step.beta1, step.one_minus_beta1, step.beta2, step.one_minus_beta2, step.l2,
        step.decay, step.sqrt_bc2,        step.eps,   step.neg_step};
    void (*kernel)(T*, T*, T*, const T*, int64_t, const vmath::AdamCoefficients<T>&) = nullptr;
    if (const vmath::Kernels* k = vmath::best()) {
      if constexpr (std::is_same_v<T, float>) kernel = k->adam_f32;
      if constexpr (std::is_same_v<T, double>) kernel = k->adam_f64;
    }
    T *pb = base_ptr<T>(p), *mb = base_ptr<T>(m), *vb = base_ptr<T>(v);
    const T* gb = base_ptr<T>(g);
    parallel_walk<4>(p.shape(), {&p.layout(), &m.layout(), &v.layout(), &g.layout()},
                     [&](const auto& off, int64_t n, const auto& st) {
                       // A local copy: stores through pp cannot change its coefficients,
                       // so the loop keeps them in registers.
                       const scalar::AdamStep<T> f = step;
                       T *pp = pb + off[0], *mp = mb + off[1], *vp = vb + off[2];
                       const T* gp = gb + off[3];
                       if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 1) {
                         if (kernel) return kernel(pp, mp, vp, gp, n, coef);
                         for (int64_t i = 0; i < n; ++i) f(pp[i], mp[i], vp[i], gp[i]);
                         return;
                       }
                       for (int64_t i = 0; i < n; ++i) {
                         f(pp[i * st[0]], mp[i * st[1]], vp[i * st[2]], gp[i * st[3]]);
                       }
                     });
  });
}

}  // namespace strata::detail
