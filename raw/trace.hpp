// SPDX-License-Identifier: MIT
#pragma once
/// The hooks st::jit records through (jit/jit.hpp). While a sink is recording on this thread,
/// each outermost call of a raw primitive (raw/ops.hpp, raw/linalg.hpp) runs as usual and is
/// also handed to the sink: the primitive's name, its operands, its results and a kernel that
/// calls it again with the same parameters. The sink is jit/'s recorder (jit/recorder.hpp),
/// which builds the trace that jit/plan.hpp compiles into a plan; raw/ knows only the Sink
/// interface, so the layer that compiles plans sits above the tensors.
///
/// Calls made inside a recorded call (raw::matmul's own raw::contiguous) are part of it and
/// are not recorded again. Reading a traced value at the top (to_host: item(), to_vector(),
/// printing) throws, since the plan could not replay what the program did with it. Library
/// code that must act on values (an index check, an optimiser's step counter) records its
/// action with effect(), so that the plan runs it again on every call.
#include <array>
#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "raw/raw_tensor.hpp"

namespace strata::raw::trace {

/// A recorded call, run again by a plan: reads `in`, writes its results into `out` (one
/// slot per result, none for an in-place primitive or an effect).
using Kernel = std::function<void(std::span<const RawTensor> in, std::span<RawTensor> out)>;

/// What a recorded call does besides returning its results.
enum class Effect : uint8_t {
  pure,          ///< nothing: a plan may fold it when its operands are constants, or drop it
  writes_first,  ///< writes its first operand in place (fill_, copy_, axpby_, ...)
  effect,        ///< may write any operand and act on host state (a check, an optimiser step)
};

/// What a plan's fuser (jit/fuse.hpp) needs of an elementwise primitive, of a reduction that
/// may end a fused chain, or of a pad a chain may read through: which one it is.
struct Elementwise {
  /// The elementwise primitives; `reduce`: a reduction over the trailing axes of its operand;
  /// `pad` (none: any other primitive, a reduction over other axes among them).
  enum class Kind : uint8_t { none, unary, binary, where, cast, reduce, pad };
  Kind kind = Kind::none;  ///< which primitive
  /// Its UnaryOp, BinaryOp or ReduceOp; for a cast, the DType it casts to.
  uint8_t op = 0;
  /// A pad's padding before each axis (the padding after follows from the shapes); a
  /// vector, not a Shape: a recurrence traced whole records a million steps.
  std::vector<int64_t> before{};
  /// A pad's value.
  double value = 0;
};

/// What records a thread's raw calls: jit/recorder.hpp implements it.
class Sink {
 public:
  virtual ~Sink() = default;
  /// Notes that op reads x; throws ValueError when something the sink did not see wrote x
  /// since the sink last saw it.
  virtual void read(std::string_view op, const RawTensor& x) = 0;
  /// Takes a call that has run: its operands `in`, its results `out` (none for an in-place
  /// primitive or an effect) and the kernel that runs it again.
  virtual void append(std::string_view op, Effect effect, std::vector<RawTensor> in,
                      std::span<const RawTensor> out, Kernel kernel, Elementwise ew) = 0;
  /// Whether x holds a value computed from the traced function's inputs.
  virtual bool traced(const RawTensor& x) const = 0;
  /// Notes that the program read x's value on the host (item(), to_vector()): x holds no
  /// traced value, so the read is allowed, but what the program did with the value is fixed
  /// into the trace.
  virtual void host_read(const RawTensor& x) { (void)x; }
};

namespace detail {
/// The sink of this thread's trace (null when none records).
inline thread_local Sink* active = nullptr;
/// How many recorded calls are running on this thread (their inner calls are not recorded).
inline thread_local int depth = 0;

/// Appends a call that has run to the active recorder.
void append(std::string_view op, Effect effect, std::vector<RawTensor> in,
            std::span<const RawTensor> out, Kernel kernel, Elementwise ew = {});
/// Checks that the operands were last written by recorded calls (throws ValueError otherwise).
void check_operands(std::string_view op, std::span<const RawTensor> in);

/// Marks a recorded call as running (its inner calls are not recorded) for its lifetime.
struct Inside {
  Inside() { ++depth; }
  ~Inside() { --depth; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

/// A call's results as a list: one RawTensor, an array of them, or none (void).
template <class R>
std::vector<RawTensor> results(const R& r) {
  if constexpr (std::is_same_v<R, RawTensor>) {
    return {r};
  } else {
    return std::vector<RawTensor>(r.begin(), r.end());
  }
}
}  // namespace detail

/// Makes `sink` record this thread's raw calls until detach(); throws ValueError when a sink
/// already records on this thread (traces do not nest).
void attach(Sink& sink);
/// Stops `sink` recording (nothing when it is not the thread's sink).
void detach(Sink& sink);
/// True when a sink records on this thread (inside a recorded call too).
inline bool active() { return detail::active != nullptr; }

/// True when a trace records on this thread and no recorded call is running: a raw primitive
/// called now is recorded.
inline bool recording() { return detail::active != nullptr && detail::depth == 0; }

/// Runs fn(xs...) (xs RawTensors: the operands; fn holds every other parameter by value)
/// and, when recording(), records it as op with the given effect (and, for an elementwise
/// primitive, what it is: `ew`). Returns fn's result: a
/// RawTensor, a std::array of them, or void. The raw primitives call this around their body.
template <class Fn, class... X>
auto call_as(Elementwise ew, std::string_view op, Effect effect, Fn fn, const X&... xs) {
  using R = std::invoke_result_t<Fn&, const X&...>;
  if (!recording()) return fn(xs...);
  detail::check_operands(op, std::array<RawTensor, sizeof...(X)>{xs...});
  Kernel kernel = [fn](std::span<const RawTensor> in, std::span<RawTensor> out) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      if constexpr (std::is_void_v<R>) {
        fn(in[I]...);
      } else if constexpr (std::is_same_v<R, RawTensor>) {
        out[0] = fn(in[I]...);
      } else {
        R r = fn(in[I]...);
        for (std::size_t k = 0; k < r.size(); ++k) out[k] = std::move(r[k]);
      }
    }
    (std::index_sequence_for<X...>{});
  };
  if constexpr (std::is_void_v<R>) {
    {
      detail::Inside inside;
      fn(xs...);
    }
    detail::append(op, effect, {xs...}, {}, std::move(kernel), ew);
  } else {
    R r = [&] {
      detail::Inside inside;
      return fn(xs...);
    }();
    const std::vector<RawTensor> out = detail::results(r);
    detail::append(op, effect, {xs...}, out, std::move(kernel), ew);
    return r;
  }
}

/// call_as() for a primitive the fuser does not know.
template <class Fn, class... X>
auto call(std::string_view op, Effect effect, Fn fn, const X&... xs) {
  return call_as(Elementwise{}, op, effect, std::move(fn), xs...);
}

/// call() for a primitive whose operands are one list (concat): fn takes the span.
template <class Fn>
RawTensor call_list(std::string_view op, Fn fn, const std::vector<RawTensor>& xs) {
  if (!recording()) return fn(std::span<const RawTensor>(xs));
  detail::check_operands(op, xs);
  RawTensor r = [&] {
    detail::Inside inside;
    return fn(std::span<const RawTensor>(xs));
  }();
  detail::append(
      op, Effect::pure, xs, std::span<const RawTensor>(&r, 1),
      [fn](std::span<const RawTensor> in, std::span<RawTensor> out) { out[0] = fn(in); });
  return r;
}

/// Runs action(xs) now and, when recording(), records it so that a plan runs it again on every
/// call, on that call's values of xs (a check that reads values, an optimiser's step with its
/// host-side counters). action may write any of xs in place and may throw.
void effect(std::string_view op, std::vector<RawTensor> xs,
            std::function<void(std::span<const RawTensor>)> action);

/// Throws ValueError naming op when recording(): for an operation a plan cannot replay
/// (a collective that exchanges values with other processes).
void forbid(std::string_view op);

/// Throws ValueError when recording() and x holds a traced value (computed from the traced
/// function's inputs): reading it on the host would fix the value into the plan. `op` names
/// the read (to_host). Any other read while recording is handed to the sink (host_read).
void check_read(std::string_view op, const RawTensor& x);

}  // namespace strata::raw::trace
