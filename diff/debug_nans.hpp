// SPDX-License-Identifier: MIT
#pragma once
/// st::debug_nans: report the first primitive that makes a NaN (JAX's jax_debug_nans,
/// PyTorch's detect_anomaly). While it is on, every value-computing primitive of the bottom
/// level (Prims<Tensor>: unary, binary, where, sum, max, pad, concat, cast, matmul,
/// index_select, index_add) whose float output holds a NaN although none of its float inputs
/// does throws ValueError naming the op, the dtypes and shapes, and the pass:
///   debug_nans: log produced NaN in the forward pass from inputs without NaN
///   (input f32[3]; output f32[3])
/// "backward" is any primitive a Tape::backward runs (a pullback, or the sum of two
/// cotangents). Views (permute, expand, reshape, slice) make no values and are not checked.
///
/// The switch is per thread: each thread starts from the environment variable
/// STRATA_DEBUG_NANS (exactly "1" is on; unset or any other value is off; read once per
/// process), and st::DebugNans changes it for the calling thread until the guard ends. Off
/// everywhere, a primitive pays one relaxed atomic load and one predictable branch.
#include <atomic>

namespace strata {

namespace detail {
/// Zero when no thread can have the switch on: the number of live DebugNans guards, plus
/// one while STRATA_DEBUG_NANS is "1" or not yet read. Prims<Tensor> tests it (one relaxed
/// load and a branch) before it looks at the calling thread's own switch.
inline constinit std::atomic<int> debug_nans_users{1};
/// True while this thread runs Tape::backward: what the message calls the backward pass.
inline constinit thread_local bool in_backward_pass = false;

/// STRATA_DEBUG_NANS's value as a switch: true only for exactly "1"; nullptr (unset), "",
/// "0", "yes", "true", "10" or any other string is false. Reads at most two characters.
bool parse_debug_nans_env(const char* value) noexcept;

/// Marks the calling thread as inside a backward pass until the scope ends (Tape::backward).
class BackwardPassScope {
 public:
  BackwardPassScope() : previous_(in_backward_pass) { in_backward_pass = true; }
  ~BackwardPassScope() { in_backward_pass = previous_; }
  BackwardPassScope(const BackwardPassScope&) = delete;
  BackwardPassScope& operator=(const BackwardPassScope&) = delete;

 private:
  bool previous_;
};
}  // namespace detail

/// Is st::debug_nans on for the calling thread? Initially STRATA_DEBUG_NANS == "1".
bool debug_nans_enabled();

/// Switches st::debug_nans on (or off, with `false`) for the calling thread until the guard
/// ends, then restores the previous state; guards nest. Example:
/// `{ st::DebugNans on; auto g = st::grad(loss)(w); }` throws ValueError at the first
/// primitive that makes a NaN from inputs without one; `st::DebugNans off(false);` inside
/// switches it off for a stretch that makes NaNs on purpose.
class DebugNans {
 public:
  /// Sets the calling thread's switch to `on`, remembering the previous state.
  explicit DebugNans(bool on = true);
  /// Restores the state from before this guard.
  ~DebugNans();
  DebugNans(const DebugNans&) = delete;
  DebugNans& operator=(const DebugNans&) = delete;

 private:
  bool previous_;
};

}  // namespace strata
