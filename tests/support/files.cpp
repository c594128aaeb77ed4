// SPDX-License-Identifier: MIT
#include "support/files.hpp"

namespace strata::testing {

// The one test object compiled with the checkout's absolute path (tests/CMakeLists.txt): the
// others' ccache entries then serve any clone.
std::filesystem::path tests_dir() { return STRATA_TESTS_DIR; }

}  // namespace strata::testing
