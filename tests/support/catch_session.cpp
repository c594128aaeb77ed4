// SPDX-License-Identifier: MIT
// Catch2's implementation (about 20 s of compile time), once for every test runner.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/catch_session.hpp"

namespace strata::testing {

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }

}  // namespace strata::testing
