// SPDX-License-Identifier: MIT
#pragma once
/// The checks of one random program (tests/support/random_program.hpp), shared
/// by the fast and the large random-program tests (tests/ad/random_programs*.test.cpp):
///
///   - check_grads to `order` (every composition of forward and reverse mode)
///     against f64 central differences; order 1 for a program that rounds
///     through f32 (a cast), whose derivative functions are not smooth enough
///     for finite differences of finite differences;
///   - forward = reverse, to rounding: <u, J v> by jvp equals <J^T u, v> by vjp,
///     and, from order 2, the Hessian-vector products fwd-over-rev and
///     rev-over-fwd agree (sum_k u_k H_k v both ways);
///   - vmap against a loop over three examples: vmap(f), vmap(f) with y
///     shared, and vmap(grad(sum(f))).
///
/// A program whose inputs land near a kink or whose values grow large is
/// skipped (program_guard), and counted as such: coverage counts checked
/// programs only.
#include <cstdint>
#include <string>
#include <vector>

#include "support/random_program.hpp"

namespace strata::testing {

/// What check_program found.
struct ProgramCheck {
  bool checked = false;  ///< false: skipped, `report` says why
  bool ok = false;       ///< every comparison passed (when checked)
  int comparisons = 0;   ///< how many ran
  std::string report;    ///< the program and the comparisons that failed (or the skip)
};

/// Runs every check above on p at inputs from p's seed.
ProgramCheck check_program(const Program& p, int order);

/// Counts of a run of many programs, and every row each checked program drew.
struct ProgramTally {
  int drawn = 0;          ///< programs generated
  int checked = 0;        ///< programs checked (the others were skipped)
  int comparisons = 0;    ///< comparisons run in all
  std::vector<int> rows;  ///< per row of the op table, its nodes in checked programs
  /// Adds one program's outcome.
  void add(const Program& p, const ProgramCheck& c);
  /// The rows no checked program drew, by name ("" when every row was drawn).
  std::string missing() const;
};

}  // namespace strata::testing
