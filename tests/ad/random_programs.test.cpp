// SPDX-License-Identifier: MIT
// A differential test of every derivative rule: random programs over the whole
// op table (tests/support/program_ops.hpp: every differentiable primitive, the
// composites of diff/, custom rules), each checked (tests/support/program_checks.hpp)
// against f64 central differences at second order through all four compositions
// of forward and reverse mode and at third order through all eight, forward
// against reverse to rounding, and vmap against a loop. This is the fast entry of
// the ad suite; random_programs_large.test.cpp runs thousands of larger programs
// as their own ctest entry.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <string>
#include <string_view>

#include "support/program_checks.hpp"
#include "support/random_program.hpp"

namespace st = strata;
using st::testing::check_program;
using st::testing::Program;
using st::testing::ProgramCheck;
using st::testing::ProgramOptions;
using st::testing::ProgramTally;

namespace {

/// Checks `count` programs from seeds first, first + 1, ... at `order`; fails on the first
/// mismatch, with the program and the comparisons that failed.
ProgramTally check_programs(uint64_t first, int count, int order, const ProgramOptions& o) {
  ProgramTally tally;
  for (uint64_t seed = first; seed < first + uint64_t(count); ++seed) {
    const Program p = st::testing::random_program(seed, o);
    const ProgramCheck c = check_program(p, order);
    INFO(c.report);
    REQUIRE((!c.checked || c.ok));
    tally.add(p, c);
  }
  return tally;
}

}  // namespace

TEST_CASE("random programs: orders 1 and 2, every mode composition, every op", "[ad][random]") {
  // 400 programs of 8 ops on inputs of up to 64 elements.
  const ProgramTally t = check_programs(1000, 400, 2, {.ops = 8, .lossy = true});
  INFO(t.checked << " of " << t.drawn << " programs checked, " << t.comparisons
                 << " comparisons; rows never drawn: " << t.missing());
  CHECK(t.checked >= 0.85 * t.drawn);
  CHECK(t.missing().empty());
}

TEST_CASE("random programs: order 3, all eight mode compositions", "[ad][random]") {
  // 100 programs of 5 ops on small inputs, checked at orders 1, 2 and 3 (every nesting
  // of jvp and vjp three deep).
  const ProgramTally t = check_programs(5000, 100, 3, {.ops = 5, .max_dim = 3, .max_numel = 24});
  INFO(t.checked << " of " << t.drawn << " programs checked, " << t.comparisons << " comparisons");
  CHECK(t.checked >= 0.85 * t.drawn);
}

TEST_CASE("the random programs' op table has a row for every differentiable primitive",
          "[ad][random]") {
  // Every row of raw/primitives.hpp's tables whose rule has a derivative: the unary ops
  // but logical_not (bool), the binary ops but the comparisons and the logical ops,
  // and sum, max and min (argmax and argmin give positions).
  auto covered = [](std::string_view op) {
    for (const auto& row : st::testing::program_ops()) {
      if (row.covers == op) return true;
    }
    return false;
  };
  for (const auto& row : st::kUnaryOps) {
    INFO("unary op " << row.name);
    if (row.dtypes != st::DTypeClass::boolean) CHECK(covered(row.name));
  }
  for (const auto& row : st::kBinaryOps) {
    INFO("binary op " << row.name);
    if (row.dtypes != st::DTypeClass::boolean && !st::is_comparison(row.op)) {
      CHECK(covered(row.name));
    }
  }
  for (const auto& row : st::kReduceOps) {
    INFO("reduction " << row.name);
    if (row.op != st::ReduceOp::argmax && row.op != st::ReduceOp::argmin) CHECK(covered(row.name));
  }
  // The other Diffable primitives (diff/diffable.hpp; unary, binary, sum and max above),
  // each with a rule in ad/rules/ (ad/level.hpp lists them): permute by a row that is not
  // a transpose, lu by solve, triangular_solve by cho_solve, lu_inverse by inv, logabsdet by
  // slogdet, svd by svdvals, pinv by pinv.
  for (std::string_view prim :
       {"where",  "permute",      "expand",    "reshape",  "slice",
        "pad",    "concat",       "windows",   "fold",     "cast",
        "matmul", "index_select", "index_add", "cholesky", "triangular_solve",
        "lu",     "lu_inverse",   "logabsdet", "eigh",     "svd",
        "qr",     "pinv"}) {
    INFO("primitive " << prim);
    CHECK(covered(prim));
  }
}
