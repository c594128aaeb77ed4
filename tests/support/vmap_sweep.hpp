// SPDX-License-Identifier: MIT
#pragma once
/// The primitive sweep of the st::vmap tests (tests/ad/vmap.test.cpp,
/// vmap_ops.test.cpp): one function of two tensors checked three ways against
/// loops over examples on plain tensors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <strata.hpp>
#include <string>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/vmap_ref.hpp"

namespace strata::testing::vmap_sweep {

/// The number of examples of every sweep case.
inline constexpr int64_t kB = 3;

/// [kB, ...s].
inline Shape batch_of(const Shape& s) {
  Shape out{kB};
  for (int64_t d : s) out.push_back(d);
  return out;
}

/// Operand values: kind 0 normal, 1 positive (log, sqrt, pow's base), 2 away from 0.
inline Tensor draw(const Shape& s, uint64_t seed, int kind) {
  if (kind == 1) return positive(s, seed);
  if (kind == 2) return nonzero(s, seed);
  return normal(s, seed);
}

/// One example's operand shapes and the kinds of values drawn for them.
struct Operands {
  Shape a, b;  // one example's shapes
  int ka = 0, kb = 0;
};

/// The three checks for the function f of two tensors, on B = kB examples from `seed`:
/// vmap(f)(a, b) equals the stack of f(a_i, b_i); vmap(f, {0, none})(a, b) the stack of
/// f(a_i, b); vmap(grad(sum(sin(f))))(a, b) the stack of the single-example gradients.
template <class F>
void check(const std::string& name, const Operands& o, F f, uint64_t seed) {
  INFO(name);
  const Tensor A = draw(batch_of(o.a), seed, o.ka), Bm = draw(batch_of(o.b), seed + 1, o.kb);
  const Tensor b0 = draw(o.b, seed + 2, o.kb);
  std::vector<Tensor> both, shared, ga, gb;
  auto loss = [&f](const auto& a, const auto& b) { return sum(sin(f(a, b))); };
  for (int64_t i = 0; i < kB; ++i) {
    const Tensor ai = example(A, 0, i), bi = example(Bm, 0, i);
    both.push_back(f(ai, bi));
    shared.push_back(f(ai, b0));
    auto [dai, dbi] = grad(loss, ai, bi);
    ga.push_back(dai);
    gb.push_back(dbi);
  }
  require_close(vmap(f)(A, Bm), stacked(both), 1e-10, "vmap(f)");
  require_close(vmap(f, {0, none})(A, b0), stacked(shared), 1e-10, "vmap(f, {0, none})");
  auto [da, db] = vmap(grad(loss))(A, Bm);
  require_close(da, stacked(ga), 1e-10, "vmap(grad) of a");
  require_close(db, stacked(gb), 1e-10, "vmap(grad) of b");
}

}  // namespace strata::testing::vmap_sweep
