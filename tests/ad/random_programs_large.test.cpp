// SPDX-License-Identifier: MIT
// The random-program test at scale (tests/ad/random_programs.test.cpp is the
// fast one): 6000 programs of 12 ops on inputs of up to 256 elements, each
// checked as there (tests/support/program_checks.hpp), at order 2 and every
// tenth at order 3. Hidden from the ad suite's default run; ctest runs it as
// its own entry, ad_random_programs (tests/CMakeLists.txt), where the
// environment variable STRATA_RANDOM_PROGRAMS sets how many programs (fewer
// under the sanitizers).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <strata.hpp>
#include <string>

#include "support/program_checks.hpp"
#include "support/random_program.hpp"

namespace st = strata;

TEST_CASE("random programs, large: thousands, every op, against finite differences",
          "[.][random_large]") {
  const char* env = std::getenv("STRATA_RANDOM_PROGRAMS");
  const int count = env ? std::atoi(env) : 6000;
  REQUIRE(count > 0);
  st::testing::ProgramTally t;
  for (uint64_t seed = 100000; seed < 100000 + uint64_t(count); ++seed) {
    const st::testing::Program p = st::testing::random_program(
        seed, {.ops = 12, .max_dim = 6, .max_numel = 256, .lossy = true});
    const st::testing::ProgramCheck c = st::testing::check_program(p, seed % 10 == 0 ? 3 : 2);
    INFO(c.report);
    REQUIRE((!c.checked || c.ok));
    t.add(p, c);
  }
  INFO(t.checked << " of " << t.drawn << " programs checked, " << t.comparisons
                 << " comparisons; rows never drawn: " << t.missing());
  CHECK(t.checked >= 0.75 * t.drawn);  // 80% of 6000
  CHECK(t.missing().empty());
}
