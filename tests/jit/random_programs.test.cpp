// SPDX-License-Identifier: MIT
// The random-composition test under st::jit: seeded programs over every row of the op table
// (tests/support/random_program.hpp), traced on one pair of inputs and replayed on another,
// give eager's bits for the value, the gradient (a backward pass in the plan) and vmap of the
// gradient (a batched backward pass).
#include <catch2/catch.hpp>
#include <set>
#include <strata.hpp>
#include <string>
#include <tuple>

#include "jit/jit.hpp"
#include "support/naive.hpp"
#include "support/random_program.hpp"
#include "support/same_bits.hpp"

namespace st = strata;
using st::testing::Program;
using st::testing::ProgramFn;
using st::testing::same_bits;

namespace {

/// The program's result summed: a scalar to differentiate.
struct SummedProgram {
  const Program* p;
  template <class T>
  T operator()(const T& x, const T& y) const {
    return st::sum(ProgramFn{p}(x, y));
  }
};

}  // namespace

TEST_CASE("jit: random programs replay with eager's bits (value, grad, vmap of grad)",
          "[jit][random]") {
  int replayed = 0, refused = 0;
  std::set<std::string> rows;
  for (uint64_t seed = 7000; seed < 7150; ++seed) {
    const Program p = st::testing::random_program(seed, {.ops = 8, .lossy = true});
    const auto [x0, y0] = st::testing::program_inputs(p, seed);
    const auto [x1, y1] = st::testing::program_inputs(p, seed + 100000);
    INFO(p.str());
    auto value = st::jit(ProgramFn{&p});
    try {
      (void)value(x0, y0);
    } catch (const st::ValueError& e) {
      // A row whose result shape depends on values (boolean-mask indexing) cannot be traced:
      // the error must say so.
      REQUIRE(std::string(e.what()).find("traced tensor") != std::string::npos);
      ++refused;
      continue;
    }
    REQUIRE(same_bits(value(x1, y1), ProgramFn{&p}(x1, y1)));
    auto grad = st::jit(st::grad(SummedProgram{&p}));
    (void)grad(x0, y0);
    const auto [gx, gy] = grad(x1, y1);
    const auto [ex, ey] = st::grad(SummedProgram{&p})(x1, y1);
    REQUIRE(same_bits(gx, ex));
    REQUIRE(same_bits(gy, ey));
    // Per-example gradients over a batch of three copies of the inputs, scaled apart.
    const st::Tensor bx = st::stack({x1, x1 * 0.5, x1 * 2.0}, 0);
    auto per_example = st::jit(st::vmap(st::grad(SummedProgram{&p}), {0, st::none}));
    (void)per_example(st::stack({x0, x0, x0}, 0), y0);
    const auto [vx, vy] = per_example(bx, y1);
    const auto [wx, wy] = st::vmap(st::grad(SummedProgram{&p}), {0, st::none})(bx, y1);
    REQUIRE(same_bits(vx, wx));
    REQUIRE(same_bits(vy, wy));
    for (const auto& n : p.nodes) {
      if (n.op >= 0) rows.insert(std::string(st::testing::program_ops()[std::size_t(n.op)].name));
    }
    ++replayed;
  }
  INFO(replayed << " programs replayed, " << refused << " refused; " << rows.size()
                << " rows drawn");
  CHECK(replayed >= 120);
  CHECK(rows.size() >= 40);
}
