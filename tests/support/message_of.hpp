// SPDX-License-Identifier: MIT
#pragma once
/// message_of<E>(fn): the message of the E that fn throws, for tests of error
/// messages: `CHECK_THAT(message_of<st::ShapeError>([&] { f(x); }), Contains("[2, 3]"));`
#include <catch2/catch.hpp>
#include <string>

namespace strata::testing {

/// The message of the E that fn throws. Fails the test when fn returns normally; an
/// exception of another type propagates, and Catch fails the test with its message.
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception was thrown");
  return {};
}

}  // namespace strata::testing
