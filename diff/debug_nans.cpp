// SPDX-License-Identifier: MIT
#include "diff/debug_nans.hpp"

#include <cstdint>
#include <cstdlib>

namespace strata {
namespace detail {

bool parse_debug_nans_env(const char* value) noexcept {
  return value != nullptr && value[0] == '1' && value[1] == '\0';
}

namespace {

/// STRATA_DEBUG_NANS, read once per process (by the first thread to ask); when it is off,
/// its count in debug_nans_users goes.
bool debug_nans_from_env() noexcept {
  static const bool on = [] {
    const bool v = parse_debug_nans_env(std::getenv("STRATA_DEBUG_NANS"));
    if (!v) debug_nans_users.fetch_sub(1, std::memory_order_relaxed);
    return v;
  }();
  return on;
}

/// The calling thread's switch: 1 on, 0 off, -1 not yet read from the environment.
constinit thread_local int8_t debug_nans_state = -1;

}  // namespace
}  // namespace detail

bool debug_nans_enabled() {
  if (detail::debug_nans_state < 0) detail::debug_nans_state = detail::debug_nans_from_env();
  return detail::debug_nans_state != 0;
}

DebugNans::DebugNans(bool on) : previous_(debug_nans_enabled()) {
  detail::debug_nans_users.fetch_add(1, std::memory_order_relaxed);
  detail::debug_nans_state = on ? 1 : 0;
}

DebugNans::~DebugNans() {
  detail::debug_nans_state = previous_ ? 1 : 0;
  detail::debug_nans_users.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace strata
