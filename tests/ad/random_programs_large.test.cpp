// SPDX-License-Identifier: MIT
// The random-program test at scale (tests/ad/random_programs.test.cpp is the
// fast one): 10000 programs of 10 ops on inputs of up to 192 elements, each
// checked as there (tests/support/program_checks.hpp): forward = reverse and
// vmap = loop for all, against finite differences at order 1 for most, every
// fourth at order 2 and every twentieth at order 3 (each order costs several
// times the one below; the fast test checks orders 2 and 3 on every program).
// Hidden from the ad suite's default run; ctest runs it as its own entry,
// ad_random_programs (tests/CMakeLists.txt), where the environment variable
// STRATA_RANDOM_PROGRAMS sets how many programs (fewer under the sanitizers).
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
  const int count = env ? std::atoi(env) : 10000;
  REQUIRE(count > 0);
  st::testing::ProgramTally t;
  for (uint64_t seed = 100000; seed < 100000 + uint64_t(count); ++seed) {
    const st::testing::Program p = st::testing::random_program(
        seed, {.ops = 10, .max_dim = 6, .max_numel = 192, .lossy = true});
    const int order = seed % 20 == 0 ? 3 : seed % 4 == 0 ? 2 : 1;
    const st::testing::ProgramCheck c = st::testing::check_program(p, order);
    INFO(c.report);
    REQUIRE((!c.checked || c.ok));
    t.add(p, c);
  }
  INFO(t.checked << " of " << t.drawn << " programs checked, " << t.comparisons
                 << " comparisons; rows never drawn: " << t.missing());
  CHECK(t.checked >= 0.75 * t.drawn);
  CHECK(t.missing().empty());
}
