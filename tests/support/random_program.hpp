// SPDX-License-Identifier: MIT
#pragma once
/// Random programs: seeded expression DAGs over the ops of strata, for
/// differential tests of the derivative rules (tests/ad/random_programs*.test.cpp).
///
/// A Program is a list of nodes over two inputs x and y (f64 tensors); each
/// node applies one row of the op table (tests/support/program_ops.hpp: every
/// differentiable primitive, every composite of diff/, custom rules) to earlier
/// nodes, and the last node is the result. run_program evaluates it generically,
/// so the same program runs on Tensor, Forward<...>, Reverse<...>, Batched<...>
/// and their nestings; ProgramFn is that evaluation as one callable type, so
/// check_grads (tests/support/check_grads.hpp) instantiates it once for every
/// program. run_program is compiled once per level (tests/CMakeLists.txt,
/// tests/support/random_program_levels.inc).
///
///   const Program p = random_program(seed, {.ops = 8});
///   const auto [x, y] = program_inputs(p, seed);
///   if (program_guard(p, x, y).empty()) check_grads<2>(ProgramFn{&p}, {x, y});
///
/// The table keeps inputs away from the points where an op is not
/// differentiable by construction where it can (log, sqrt and pow with a
/// variable exponent act on a*a + c, c > 0; division is by b*b + 1), and each
/// op with a kink (relu, abs, maximum, max, where, clamp, std at 0, ...) names
/// the distance of its inputs from it: program_guard rejects a program whose
/// inputs land near a kink, or whose values grow so large that the finite
/// differences' truncation error swamps a comparison.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <strata.hpp>

#include "ad/stacks.hpp"

namespace strata::testing {

/// One node: a row of the op table applied to earlier nodes, with the row's parameters.
struct ProgNode {
  int op = -1;                  ///< the row of the op table; -1 for an input
  int a = -1, b = -1;           ///< the operands (b is -1 for a row of one operand)
  Shape shape{};                ///< the result's shape
  int64_t axis = 0;             ///< the axis of a row along one axis
  Shape dims{};                 ///< axes, a permutation, a shape or sizes (the row says which)
  std::vector<int64_t> ints{};  ///< the row's other integers (slice bounds, pads, index entries)
  double k = 0;                 ///< the row's number (an exponent, a bound, keepdims, a diagonal)
  std::vector<Tensor> index{};  ///< the row's index tensors and masks (plain constants)
};

/// A program over inputs nodes[0] (x) and nodes[1] (y); its result is the last node.
struct Program {
  std::vector<ProgNode> nodes;
  /// The other nodes no node uses (not inputs): each adds its sum to the result,
  /// so no op a program draws is dead code.
  std::vector<int> sinks;
  uint64_t seed = 0;
  /// One line per node, for failure reports.
  std::string str() const;
};

/// Options of random_program.
struct ProgramOptions {
  int ops = 6;                 ///< nodes after the two inputs
  int64_t max_dim = 4;         ///< the largest size of an input's axis
  int64_t max_numel = 64;      ///< the most elements a node may have
  bool kinks = true;           ///< whether rows with a kink (relu, abs, max, where, ...) may appear
  bool lossy = false;          ///< whether rows that round through f32 (cast) may appear
  std::vector<int> only = {};  ///< when not empty, the rows drawn from (indices into the table)
};

/// What the op table says about one of its rows (tests/support/program_ops.hpp).
struct ProgramOpInfo {
  std::string_view name;    ///< the row's name, unique ("log", "softmax", "matmul_batched")
  std::string_view form;    ///< the expression it computes, for reports
  std::string_view covers;  ///< the op of raw/primitives.hpp's tables it differentiates, or ""
  bool kink = false;        ///< whether it has points where it is not differentiable
  bool lossy = false;       ///< whether it rounds through f32 (first order only)
};

/// Every row of the op table, in table order (ProgNode::op indexes it).
const std::vector<ProgramOpInfo>& program_ops();
/// The row of the op table named `name` (std::out_of_range when there is none).
int program_op(std::string_view name);

/// A seeded random program. x's shape has rank 1 to 3; y's broadcasts with x's, is
/// a suffix of it, has its last two axes swapped, or is unrelated.
Program random_program(uint64_t seed, const ProgramOptions& o = {});

/// The inputs of p: standard normal f64 values from `seed`, in the shapes of nodes 0 and 1.
std::pair<Tensor, Tensor> program_inputs(const Program& p, uint64_t seed);

/// Why the finite differences of p at (x, y) cannot be trusted ("" when they can): a node
/// whose inputs lie within 1e-3 of a kink of its op (exact ties excepted, whose derivative
/// is defined by the split rules), or a value that is not finite or above 100 in magnitude.
std::string program_guard(const Program& p, const Tensor& x, const Tensor& y);

/// Whether p draws a row that rounds through f32.
bool program_is_lossy(const Program& p);

/// Evaluates p on x and y at any level of the AD stack; `trace`, when given, receives the
/// value of every node. Compiled for the levels below (random_program_levels.inc).
template <Diffable T>
T run_program(const Program& p, const T& x, const T& y, std::vector<T>* trace = nullptr);

/// run_program as one callable type (check_grads instantiates it once for every program).
struct ProgramFn {
  const Program* program;
  template <class T>
  T operator()(const T& x, const T& y) const {
    return run_program(*program, x, y);
  }
};

/// Calls X(level) for every level run_program is compiled for: the stacks of check_grads
/// to order 3, and those of vmap(f) and vmap(grad(f)). run_program is compiled for six
/// levels a file, in files tests/CMakeLists.txt generates (random_program_levels.inc).
#define STRATA_PROGRAM_LEVELS(X)   \
  X(Tensor)                        \
  STRATA_FOR_EACH_STACK_ORDER12(X) \
  STRATA_FOR_EACH_STACK_ORDER3(X)  \
  X(Batched<Tensor>)               \
  X(Reverse<Batched<Tensor>>)
/// How many levels STRATA_PROGRAM_LEVELS lists (random_program_levels.inc checks it).
#define STRATA_PROGRAM_LEVEL_COUNT 17

#define STRATA_PROGRAM_EXTERN(...)                      \
  extern template __VA_ARGS__ run_program<__VA_ARGS__>( \
      const Program&, const __VA_ARGS__&, const __VA_ARGS__&, std::vector<__VA_ARGS__>*);
STRATA_PROGRAM_LEVELS(STRATA_PROGRAM_EXTERN)
#undef STRATA_PROGRAM_EXTERN

}  // namespace strata::testing
