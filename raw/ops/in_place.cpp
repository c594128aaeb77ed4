// SPDX-License-Identifier: MIT
// The in-place primitives (fill_, copy_, binary_, axpby_, adam_step_):
// validation, a private copy of an aliased source, the backend's kernel, and
// the version bump of every storage written.
#include "raw/ops.hpp"

#include <string_view>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::check_dtype;
using detail::fail;
using detail::require_defined;
using detail::require_float;
using detail::require_nonzero_divisor;
using detail::require_same_device;
using detail::require_same_dtype;
using detail::require_same_shape;
using detail::require_writable;
using detail::unaliased;

static void fill_now(const RawTensor& dst, double value) {
  require_defined(dst, "fill_");
  require_writable(dst, "fill_");
  if (dst.numel() > 0) backend_for(dst.device()).fill(dst, value);
  dst.storage()->bump_version();
}

static void copy_now(const RawTensor& dst, const RawTensor& src) {
  require_defined(dst, "copy_");
  require_defined(src, "copy_");
  require_same_device(dst, src, "copy_");
  require_same_shape(dst, src, "copy_");
  require_writable(dst, "copy_");
  if (dst.numel() > 0) backend_for(dst.device()).copy(dst, unaliased(dst, src));
  dst.storage()->bump_version();
}

static void binary_in_place_now(BinaryOp op, const RawTensor& dst, const RawTensor& src) {
  const std::string_view name = op_name(op);
  require_defined(dst, name);
  require_defined(src, name);
  require_same_device(dst, src, name);
  require_same_shape(dst, src, name);
  require_same_dtype(dst, src, name);
  if (is_comparison(op)) fail<ValueError>(name, "comparisons cannot be done in place");
  check_dtype(op, dst.dtype());
  require_writable(dst, name);
  // Checked before writing, so a failed division leaves dst untouched.
  if (op == BinaryOp::div && is_integral(src.dtype()) && src.numel() > 0) {
    require_nonzero_divisor(src);
  }
  if (dst.numel() > 0) backend_for(dst.device()).binary(op, dst, dst, unaliased(dst, src));
  dst.storage()->bump_version();
}

static void axpby_now(const RawTensor& dst, double alpha, const RawTensor& src, double beta) {
  constexpr std::string_view name = "axpby_";
  require_defined(dst, name);
  require_defined(src, name);
  require_same_device(dst, src, name);
  require_same_shape(dst, src, name);
  require_same_dtype(dst, src, name);
  require_float(dst.dtype(), name);
  require_writable(dst, name);
  if (dst.numel() > 0) backend_for(dst.device()).axpby(dst, alpha, unaliased(dst, src), beta);
  dst.storage()->bump_version();
}

static void adam_step_now(const RawTensor& p, const RawTensor& m, const RawTensor& v,
                          const RawTensor& g, const AdamStepCoefficients& c) {
  constexpr std::string_view name = "adam_step_";
  for (const RawTensor* t : {&p, &m, &v, &g}) {
    require_defined(*t, name);
    require_same_device(p, *t, name);
    require_same_shape(p, *t, name);
    require_same_dtype(p, *t, name);
  }
  require_float(p.dtype(), name);
  for (const RawTensor* t : {&p, &m, &v}) require_writable(*t, name);
  if (p.storage() == m.storage() || p.storage() == v.storage() || m.storage() == v.storage()) {
    fail<ValueError>(name, "the parameter and its two moments must be three separate tensors");
  }
  if (p.numel() > 0) {
    // g shares at most one of the three storages; read under another layout, it is copied.
    const RawTensor& dst = g.storage() == m.storage() ? m : g.storage() == v.storage() ? v : p;
    backend_for(p.device()).adam_step(p, m, v, unaliased(dst, g), c);
  }
  for (const RawTensor* t : {&p, &m, &v}) t->storage()->bump_version();
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

void fill_(const RawTensor& dst, double value) {
  trace::call(
      "fill_", Effect::writes_first, [value](const RawTensor& dst) { fill_now(dst, value); }, dst);
}

void copy_(const RawTensor& dst, const RawTensor& src) {
  trace::call("copy_", Effect::writes_first, copy_now, dst, src);
}

void binary_(BinaryOp op, const RawTensor& dst, const RawTensor& src) {
  trace::call(
      op_name(op), Effect::writes_first,
      [op](const RawTensor& dst, const RawTensor& src) { binary_in_place_now(op, dst, src); }, dst,
      src);
}

void axpby_(const RawTensor& dst, double alpha, const RawTensor& src, double beta) {
  trace::call(
      "axpby_", Effect::writes_first,
      [alpha, beta](const RawTensor& dst, const RawTensor& src) {
        axpby_now(dst, alpha, src, beta);
      },
      dst, src);
}

void adam_step_(const RawTensor& p, const RawTensor& m, const RawTensor& v, const RawTensor& g,
                const AdamStepCoefficients& c) {
  trace::call(
      "adam_step_", Effect::effect,
      [c](const RawTensor& p, const RawTensor& m, const RawTensor& v, const RawTensor& g) {
        adam_step_now(p, m, v, g, c);
      },
      p, m, v, g);
}

}  // namespace strata::raw
