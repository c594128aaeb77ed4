// SPDX-License-Identifier: MIT
#pragma once
/// Test support: Catch2's session, whose implementation is compiled once
/// (support/catch_session.cpp) for every test runner (tests/main.cpp, cuda/main.cpp,
/// dist/main.cpp) instead of in each.

namespace strata::testing {

/// Runs the Catch2 session with the command line: the test cases it selects, reported as
/// Catch2 reports them; returns its exit status.
int run_catch_session(int argc, char** argv);

}  // namespace strata::testing
