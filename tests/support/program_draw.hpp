// SPDX-License-Identifier: MIT
#pragma once
/// How the rows of the random programs' op table (tests/support/program_ops.hpp)
/// draw their parameters (the index rows': program_index.hpp; the linear algebra rows':
/// program_linalg.hpp); how far their inputs lie from their kinks: program_gaps.hpp.
///
/// A planner (Plan) gets the node with its first operand chosen; it draws the
/// second operand and the row's parameters, or returns false when the row does
/// not apply to that operand. The result's shape is not the planner's business:
/// random_program evaluates the row on zeros of the operands' shapes and rejects
/// the node when that throws or gives an empty or too large result.
///
/// A gap (Gap) is the distance of a node's inputs from the nearest point where
/// its op is not differentiable (program_gaps.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <strata.hpp>

#include "support/random_program.hpp"

namespace strata::testing::program {

/// What a planner draws from: the random stream and the nodes so far.
class Draw {
 public:
  Draw(std::mt19937_64& rng, const std::vector<ProgNode>& nodes) : rng_(rng), nodes_(nodes) {}
  /// Uniform in [0, n).
  int pick(int n) { return int(rng_() % uint64_t(n)); }
  /// Uniform in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) { return lo + int64_t(rng_() % uint64_t(hi - lo + 1)); }
  /// True half the time.
  bool coin() { return (rng_() & 1) != 0; }
  /// Node i's shape.
  const Shape& shape(int i) const { return nodes_[std::size_t(i)].shape; }
  /// A random node other than `a` whose shape passes ok; `a` itself when self_ok and no
  /// other fits (or, when self_ok, half the time anyway); -1 when none fits.
  template <class Ok>
  int operand(int a, bool self_ok, Ok ok) {
    std::vector<int> fits;
    for (int j = 0; j < int(nodes_.size()); ++j) {
      if (j != a && ok(shape(j))) fits.push_back(j);
    }
    if (self_ok && (fits.empty() || coin())) return a;
    return fits.empty() ? -1 : fits[std::size_t(pick(int(fits.size())))];
  }
  /// Between 1 and r distinct axes of a rank-r shape, increasing (empty for r = 0, which
  /// reductions read as every axis).
  Shape axes(int64_t r) {
    Shape out;
    for (int64_t i = 0; i < r; ++i) {
      if (coin()) out.push_back(i);
    }
    if (out.empty() && r > 0) out.push_back(between(0, r - 1));
    return out;
  }
  /// `count` positions in [-n, n) (negative ones count from the end), repeats likely, as
  /// an i64 tensor of shape s (numel count).
  Tensor positions(int64_t n, const Shape& s) {
    std::vector<int64_t> v(std::size_t(checked_numel(s, "positions")));
    for (int64_t& e : v) e = between(0, n - 1) - (coin() && coin() ? n : 0);
    return from_vector(v, s);
  }
  /// A bool mask of n elements with at least one true.
  Tensor mask(int64_t n) {
    std::vector<bool> m(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = coin();
    m[std::size_t(between(0, n - 1))] = true;
    return from_vector(m, {n});
  }

 private:
  std::mt19937_64& rng_;
  const std::vector<ProgNode>& nodes_;
};

/// An absent slice bound in ProgNode::ints (Python's omitted start or stop).
inline constexpr int64_t kAbsent = std::numeric_limits<int64_t>::min();

/// A row's planner: draws n.b and the parameters for n.a's shape; false when it does not apply.
using Plan = bool (*)(Draw& d, ProgNode& n);
/// A row's distance from its kinks, given the plain values of its operands (+inf if none).
using Gap = double (*)(const ProgNode& n, const Tensor& a, const Tensor& b);

/// Whether shapes a and b broadcast together.
inline bool broadcasts(const Shape& a, const Shape& b) {
  for (int64_t i = 1; i <= std::min(a.ndim(), b.ndim()); ++i) {
    const int64_t x = a[std::size_t(a.ndim() - i)], y = b[std::size_t(b.ndim() - i)];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

// --- planners ---------------------------------------------------------------------------

/// Rows of one operand and no parameters.
inline bool any(Draw&, ProgNode&) { return true; }
/// A second operand that broadcasts with the first (never the first itself: x - x would
/// put exact zeros under a kink).
inline bool broadcast_pair(Draw& d, ProgNode& n) {
  n.b = d.operand(n.a, false, [&](const Shape& s) { return broadcasts(d.shape(n.a), s); });
  return n.b >= 0;
}
/// A second operand of the first's shape, or the first itself.
inline bool same_shape_pair(Draw& d, ProgNode& n) {
  n.b = d.operand(n.a, true, [&](const Shape& s) { return s == d.shape(n.a); });
  return true;
}
/// A second operand of the first's shape (or the first) and a new axis for both.
inline bool stacking(Draw& d, ProgNode& n) {
  const int64_t r = d.shape(n.a).ndim();
  n.axis = d.between(0, r) - (d.coin() ? r + 1 : 0);
  return same_shape_pair(d, n);
}
/// A reduction: some axes (every one for a 0-d operand), keepdims half the time (k).
inline bool reduction(Draw& d, ProgNode& n) {
  n.dims = d.axes(d.shape(n.a).ndim());
  n.k = d.coin();
  return true;
}
/// A reduction over axes holding at least two elements (std's variance is then positive).
inline bool spread_reduction(Draw& d, ProgNode& n) {
  reduction(d, n);
  int64_t count = 1;
  for (int64_t a : n.dims) count *= d.shape(n.a)[std::size_t(a)];
  return count >= 2;
}
/// One axis of a rank >= 1 operand, negative half the time.
inline bool one_axis(Draw& d, ProgNode& n) {
  const int64_t r = d.shape(n.a).ndim();
  if (r == 0) return false;
  n.axis = d.between(0, r - 1) - (d.coin() ? r : 0);
  return true;
}
/// Two axes of a rank >= 2 operand to swap (ints).
inline bool axis_pair(Draw& d, ProgNode& n) {
  const int64_t r = d.shape(n.a).ndim();
  if (r < 2) return false;
  const int64_t i = d.between(0, r - 1), j = (i + d.between(1, r - 1)) % r;
  n.ints = {i, j - (d.coin() ? r : 0)};
  return true;
}
/// A permutation of rank >= 3 axes that is not its own inverse (a transpose is:
/// axis_pair), so that its rule's inverse permutation matters.
inline bool cycle(Draw& d, ProgNode& n) {
  const int64_t r = d.shape(n.a).ndim();
  if (r < 3) return false;
  std::vector<int64_t> p(static_cast<std::size_t>(r));
  std::iota(p.begin(), p.end(), 0);
  auto involution = [&] {
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[std::size_t(p[i])] != int64_t(i)) return false;
    }
    return true;
  };
  while (involution()) {
    for (std::size_t i = p.size() - 1; i > 0; --i)
      std::swap(p[i], p[std::size_t(d.pick(int(i) + 1))]);
  }
  n.dims = Shape(p);
  return true;
}
/// A broadcast target: a new leading axis of 2, and size-1 axes grown to 3.
inline bool expansion(Draw& d, ProgNode& n) {
  Shape s = d.shape(n.a);
  for (int64_t& e : s) {
    if (e == 1 && d.coin()) e = 3;
  }
  if (s == d.shape(n.a) || d.coin()) s.insert(0, 2);
  n.dims = s;
  return true;
}
/// Another shape of the same elements: the sizes' prime factors regrouped at random.
inline bool regrouping(Draw& d, ProgNode& n) {
  std::vector<int64_t> f;
  for (int64_t e : d.shape(n.a)) {
    for (int64_t p = 2; e > 1; ++p) {
      while (e % p == 0) {
        f.push_back(p);
        e /= p;
      }
    }
  }
  for (std::size_t i = f.size(); i > 1; --i) std::swap(f[i - 1], f[std::size_t(d.pick(int(i)))]);
  Shape s;
  for (int64_t p : f) {
    if (s.empty() || (s.ndim() < 4 && d.coin())) {
      s.push_back(p);
    } else {
      s[std::size_t(s.ndim() - 1)] *= p;
    }
  }
  if (d.coin()) s.insert(std::size_t(d.between(0, s.ndim())), 1);
  if (s == d.shape(n.a)) return false;
  n.dims = s;
  return true;
}
/// Python's start:stop:step along one axis; step in {-2, -1, 1, 2, 3}; an absent bound is
/// kAbsent in ints.
inline bool slicing(Draw& d, ProgNode& n) {
  if (!one_axis(d, n)) return false;
  const int64_t size =
      d.shape(n.a)[std::size_t(n.axis < 0 ? n.axis + d.shape(n.a).ndim() : n.axis)];
  const int64_t steps[] = {-2, -1, 1, 2, 3};
  auto bound = [&] { return d.pick(4) == 0 ? kAbsent : d.between(-size - 1, size + 1); };
  n.ints = {bound(), bound(), steps[d.pick(5)]};
  return true;
}
/// (before, after) pads in [0, 2] for every axis, some nonzero.
inline bool padding(Draw& d, ProgNode& n) {
  n.ints.clear();
  for (int64_t i = 0; i < 2 * d.shape(n.a).ndim(); ++i) n.ints.push_back(d.between(0, 2));
  return std::any_of(n.ints.begin(), n.ints.end(), [](int64_t p) { return p > 0; });
}
/// A second operand that matches the first except along one axis.
inline bool concatenation(Draw& d, ProgNode& n) {
  if (!one_axis(d, n)) return false;
  const Shape& sa = d.shape(n.a);
  const int64_t ax = n.axis < 0 ? n.axis + sa.ndim() : n.axis;
  n.b = d.operand(n.a, true, [&](const Shape& s) {
    if (s.ndim() != sa.ndim()) return false;
    for (int64_t i = 0; i < s.ndim(); ++i) {
      if (i != ax && s[std::size_t(i)] != sa[std::size_t(i)]) return false;
    }
    return true;
  });
  return true;
}
/// A matrix operand (rank exactly r_lo..r_hi) and a second one of its shape but for batch
/// dims that broadcast: their product a b^T.
template <int RLo, int RHi>
bool gram(Draw& d, ProgNode& n) {
  const Shape& sa = d.shape(n.a);
  if (sa.ndim() < RLo || sa.ndim() > RHi) return false;
  n.b = d.operand(n.a, true, [&](const Shape& s) {
    if (s.ndim() < 2 || s[std::size_t(s.ndim() - 1)] != sa[std::size_t(sa.ndim() - 1)] ||
        s[std::size_t(s.ndim() - 2)] != sa[std::size_t(sa.ndim() - 2)]) {
      return false;
    }
    return broadcasts(sa, s) && s.ndim() >= RLo;
  });
  return true;
}
/// A 1-D second operand as long as the first's last axis.
inline bool vector_pair(Draw& d, ProgNode& n) {
  const Shape& sa = d.shape(n.a);
  if (sa.ndim() < 1) return false;
  n.b = d.operand(n.a, sa.ndim() == 1, [&](const Shape& s) {
    return s.ndim() == 1 && s[0] == sa[std::size_t(sa.ndim() - 1)];
  });
  return n.b >= 0;
}
/// Positions along one axis (1 to size + 2 of them, repeats likely) for a gather.
inline bool gather(Draw& d, ProgNode& n) {
  if (!one_axis(d, n)) return false;
  const int64_t size =
      d.shape(n.a)[std::size_t(n.axis < 0 ? n.axis + d.shape(n.a).ndim() : n.axis)];
  if (size == 0) return false;
  std::vector<int64_t> v(std::size_t(d.between(1, size + 2)));
  for (int64_t& e : v) e = d.between(0, size - 1);  // index_select takes no negative position
  n.index = {from_vector(v, {int64_t(v.size())})};
  return true;
}
/// A scatter-add of a same-shaped operand at positions along one axis (repeats likely).
inline bool scatter(Draw& d, ProgNode& n) {
  if (!one_axis(d, n)) return false;
  const int64_t size =
      d.shape(n.a)[std::size_t(n.axis < 0 ? n.axis + d.shape(n.a).ndim() : n.axis)];
  std::vector<int64_t> v(static_cast<std::size_t>(size));
  for (int64_t& e : v) e = d.between(0, size - 1);
  n.index = {from_vector(v, {size})};
  return same_shape_pair(d, n);
}
/// A rank >= 2 operand and a diagonal k in [-1, 1].
inline bool band(Draw& d, ProgNode& n) {
  n.k = double(d.between(-1, 1));
  return d.shape(n.a).ndim() >= 2;
}
/// Sizes (some 0) adding up to one axis: split, then joined in reverse order.
inline bool splitting(Draw& d, ProgNode& n) {
  if (!one_axis(d, n)) return false;
  int64_t left = d.shape(n.a)[std::size_t(n.axis < 0 ? n.axis + d.shape(n.a).ndim() : n.axis)];
  if (left < 2) return false;
  n.dims = Shape{};
  while (left > 0) {
    n.dims.push_back(d.between(0, left));
    left -= n.dims.back();
  }
  return n.dims.ndim() >= 2;
}
/// A rank <= 3 operand and a new axis position.
inline bool new_axis(Draw& d, ProgNode& n) {
  const int64_t r = d.shape(n.a).ndim();
  n.axis = d.between(0, r);
  return r <= 3;
}
/// A size-1 axis to remove.
inline bool unit_axis(Draw& d, ProgNode& n) {
  std::vector<int64_t> ones;
  for (int64_t i = 0; i < d.shape(n.a).ndim(); ++i) {
    if (d.shape(n.a)[std::size_t(i)] == 1) ones.push_back(i);
  }
  if (ones.empty()) return false;
  n.axis = ones[std::size_t(d.pick(int(ones.size())))];
  return true;
}
/// A target shape x's shape broadcasts from: a suffix of it with some axes made 1.
inline bool reduction_target(Draw& d, ProgNode& n) {
  const Shape& sa = d.shape(n.a);
  Shape s;
  for (int64_t i = d.between(0, sa.ndim()); i < sa.ndim(); ++i)
    s.push_back(d.coin() ? sa[std::size_t(i)] : 1);
  if (s == sa) return false;
  n.dims = s;
  return true;
}
/// A pair of bounds lo in [-1, 0), hi in (0, 1].
inline bool bounds(Draw& d, ProgNode& n) {
  n.k = -0.25 * double(d.between(1, 4));
  n.ints = {d.between(1, 4)};  // hi = ints[0] / 4
  return true;
}
/// An exponent in {0, 1, 2, 3}.
inline bool small_power(Draw& d, ProgNode& n) {
  n.k = double(d.pick(4));
  return true;
}
/// A condition among the comparisons and logical ops (k picks it).
inline bool condition(Draw& d, ProgNode& n) {
  n.k = double(d.pick(9));
  return broadcast_pair(d, n);
}

}  // namespace strata::testing::program
