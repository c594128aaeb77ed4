// SPDX-License-Identifier: MIT
// The recording hooks (raw/trace.hpp): what every raw primitive calls, forwarded to the
// thread's sink when one records.
#include "raw/trace.hpp"

#include <utility>

#include "core/error.hpp"

namespace strata::raw::trace {

using strata::detail::fail;

namespace detail {

void append(std::string_view op, Effect effect, std::vector<RawTensor> in,
            std::span<const RawTensor> out, Kernel kernel, Elementwise ew) {
  active->append(op, effect, std::move(in), out, std::move(kernel), ew);
}

void check_operands(std::string_view op, std::span<const RawTensor> in) {
  for (const RawTensor& x : in) {
    if (x.defined()) active->read(op, x);
  }
}

}  // namespace detail

void attach(Sink& sink) {
  if (detail::active) fail<ValueError>("jit", "a trace is already recording on this thread");
  detail::active = &sink;
}

void detach(Sink& sink) {
  if (detail::active == &sink) detail::active = nullptr;
}

void effect(std::string_view op, std::vector<RawTensor> xs,
            std::function<void(std::span<const RawTensor>)> action) {
  if (!recording()) return action(xs);
  detail::check_operands(op, xs);
  {
    detail::Inside inside;
    action(xs);
  }
  detail::append(op, Effect::effect, std::move(xs), {},
                 [action = std::move(action)](std::span<const RawTensor> in, std::span<RawTensor>) {
                   action(in);
                 });
}

void forbid(std::string_view op) {
  if (recording()) {
    fail<ValueError>(op,
                     "cannot run inside st::jit: a plan cannot replay it (call it outside "
                     "the jitted function, on its results)");
  }
}

void check_read(std::string_view op, const RawTensor& x) {
  if (!recording()) return;
  if (!detail::active->traced(x)) {
    detail::active->host_read(x);
    return;
  }
  {
    fail<ValueError>("jit", op, " of a traced tensor (shape ", x.shape(),
                     "): the jitted function reads a value computed from its inputs (item(), "
                     "to_vector(), printing, or an op whose result shape depends on values, "
                     "such as boolean-mask indexing); a plan replays only what depends on shapes. "
                     "Pass the value as a non-tensor argument, read it outside the jitted "
                     "function, or set STRATA_JIT=0 to run eagerly");
  }
}

}  // namespace strata::raw::trace
