// SPDX-License-Identifier: MIT
// The AD layer's error reporting, shared by every dual-type stack.
#include <atomic>
#include <sstream>

#include "ad/custom.hpp"
#include "ad/transforms.hpp"

namespace strata::detail {

namespace {
constexpr std::string_view kMixedFix =
    "values from two different grad/jvp calls were combined. This happens when the function "
    "given to an inner transform captures a value of an outer transform of the same kind and "
    "the inner transform is called on a plain value. Call the inner transform on "
    "st::constant_like(x, value) instead (x: the outer transform's value), so that its argument "
    "sits one level above the captured value";
}  // namespace

uint64_t common_tag(std::initializer_list<uint64_t> tags) {
  uint64_t tag = 0;
  for (uint64_t t : tags) {
    if (t == 0) continue;
    if (tag != 0 && tag != t) fail<ValueError>("jvp", kMixedFix);
    tag = t;
  }
  return tag;
}

void mixed_transform_calls(std::string_view op) { fail<ValueError>(op, kMixedFix); }

void saved_value_modified(uint64_t saved, uint64_t now) {
  fail<ValueError>("backward",
                   "a tensor saved for the backward pass was modified in place "
                   "(storage version ",
                   saved, " when saved, ", now,
                   " now); modify a copy, or compute the gradient before the in-place update");
}

void batched_plain() {
  fail<ValueError>("vmap/jacfwd/jacrev",
                   "a value that holds a batch of examples (an argument mapped by st::vmap, or "
                   "the tangents or cotangents of jacfwd/jacrev) has no single plain value: "
                   "index tensors and argmax/argmin cannot be computed from it (comparisons, "
                   "masks and st::where can); compute such indices outside the function, or "
                   "pass per-example targets as one-hot tensors");
}

void mixed_batches(std::string_view op) {
  fail<ValueError>(op,
                   "batched values of two different st::vmap calls (or of a vmap and a "
                   "jacfwd/jacrev) were combined. This happens when the function given to an "
                   "inner vmap captures a batched value of an outer vmap of the same type: pass "
                   "that value to the inner vmap as an argument with in_axes st::none instead");
}

uint64_t new_batch_tag() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void require_float_leaf(DType dtype, std::string_view op) {
  if (!is_floating(dtype)) {
    fail<DTypeError>(op, "cannot differentiate with respect to a tensor of dtype ",
                     dtype_name(dtype), " (needs f32 or f64; cast it with .to(st::f32))");
  }
}

void require_matching_tangent(const Shape& primal_shape, DType primal_dtype, const Shape& shape,
                              DType dtype, std::string_view op, std::string_view what) {
  if (shape != primal_shape) {
    fail<ShapeError>(op, what, " has shape ", shape, " but the primal has shape ", primal_shape);
  }
  if (dtype != primal_dtype) {
    fail<DTypeError>(op, what, " has dtype ", dtype_name(dtype), " but the primal has dtype ",
                     dtype_name(primal_dtype));
  }
}

void require_single_element(const Shape& shape, std::string_view op) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n != 1) {
    fail<ShapeError>(op, "the function's output has shape ", shape, " (", n, " elements); ", op,
                     " needs exactly one (use jacrev, jacfwd or vjp for more)");
  }
}

void require_gradient_output(const Shape& shape, DType dtype, std::string_view op) {
  require_single_element(shape, op);
  if (!is_floating(dtype)) {
    fail<DTypeError>(op, "the function's output has dtype ", dtype_name(dtype),
                     ", which carries no derivative; ", op,
                     " needs a float output (differentiate the float value it came from)");
  }
}

void require_rule_value(const std::string& fn, std::string_view what, int index,
                        const Shape& want_shape, DType want_dtype, const Shape& shape,
                        DType dtype) {
  std::ostringstream where;
  where << what;
  if (index >= 0) where << " for argument " << index;
  const std::string want = index >= 0 ? "the argument" : "the function's result";
  if (shape != want_shape) {
    fail<ShapeError>(fn, "custom rule: ", where.str(), " has shape ", shape, " but ", want,
                     " has shape ", want_shape);
  }
  if (dtype != want_dtype) {
    fail<DTypeError>(fn, "custom rule: ", where.str(), " has dtype ", dtype_name(dtype), " but ",
                     want, " has dtype ", dtype_name(want_dtype));
  }
}

void rule_count_mismatch(const std::string& fn, std::size_t want, std::size_t got) {
  fail<ValueError>(fn, "custom rule: the backward rule returned ", got, " cotangent(s) for ", want,
                   " argument(s); return one per argument, in order (a tuple for several)");
}

}  // namespace strata::detail
