// SPDX-License-Identifier: MIT
// Tests for core/layout.hpp: the view operations only rewrite (shape, strides,
// offset). Every view is checked against storage positions computed here by
// brute force (an odometer over row-major multi-indices).
#include "core/layout.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace st = strata;

namespace {

using Dims = std::vector<int64_t>;

// Storage positions of every element of l, in row-major order of its multi-indices.
std::vector<int64_t> addresses(const st::Layout& l) {
  std::vector<int64_t> out;
  const std::size_t r = l.shape.size();
  for (int64_t d : l.shape) {
    if (d == 0) return out;
  }
  std::vector<int64_t> idx(r, 0);
  for (;;) {
    int64_t pos = l.offset;
    for (std::size_t k = 0; k < r; ++k) pos += idx[k] * l.strides[k];
    out.push_back(pos);
    std::size_t d = r;
    for (;;) {
      if (d == 0) return out;
      --d;
      if (++idx[d] < l.shape[d]) break;
      idx[d] = 0;
    }
  }
}

Dims dims_of(const st::Shape& s) { return Dims(s.begin(), s.end()); }

// True when the positions are exactly offset, offset+1, ... (row-major dense).
bool dense_run(const std::vector<int64_t>& pos) {
  for (std::size_t i = 1; i < pos.size(); ++i) {
    if (pos[i] != pos[0] + static_cast<int64_t>(i)) return false;
  }
  return true;
}

void check(const st::Layout& l, const Dims& shape, const Dims& strides, int64_t offset,
           bool contiguous) {
  INFO("shape " << l.shape << " strides " << l.strides << " offset " << l.offset);
  REQUIRE(dims_of(l.shape) == shape);
  REQUIRE(dims_of(l.strides) == strides);
  REQUIRE(l.offset == offset);
  REQUIRE(l.is_contiguous() == contiguous);
}

// Python's slicing by its definition in the language reference: negative
// bounds count from the end, out-of-range bounds are clamped, omitted bounds
// are the ends in the direction of the step; then walk from start by step.
std::vector<int64_t> python_positions(int64_t n, std::optional<int64_t> start,
                                      std::optional<int64_t> stop, int64_t step) {
  std::vector<int64_t> out;
  if (step > 0) {
    int64_t lo = 0, hi = n;
    if (start) lo = *start < 0 ? std::max<int64_t>(*start + n, 0) : std::min(*start, n);
    if (stop) hi = *stop < 0 ? std::max<int64_t>(*stop + n, 0) : std::min(*stop, n);
    for (int64_t x = lo; x < hi;) {
      out.push_back(x);
      if (step >= hi - x) break;  // the next position would reach stop (and might overflow)
      x += step;
    }
  } else {
    int64_t hi = n - 1, lo = -1;  // walk from hi down to (exclusive) lo
    if (start) hi = *start < 0 ? std::max<int64_t>(*start + n, -1) : std::min(*start, n - 1);
    if (stop) lo = *stop < 0 ? std::max<int64_t>(*stop + n, -1) : std::min(*stop, n - 1);
    for (int64_t x = hi; x > lo;) {
      out.push_back(x);
      if (step <= lo - x) break;  // the next position would reach stop (and might overflow)
      x += step;
    }
  }
  return out;
}

// A random 3-D view: contiguous dims in [1, max_dim], then `ops` random
// flips, transposes, slices (made by `slice(view, axis)`) or nothing.
template <class Slice>
st::Layout random_view(std::mt19937_64& rng, int64_t max_dim, int ops, Slice slice) {
  st::Layout l = st::Layout::contiguous(
      {int64_t(1 + rng() % max_dim), int64_t(1 + rng() % max_dim), int64_t(1 + rng() % max_dim)});
  for (int op = 0; op < ops; ++op) {
    const int64_t ax = int64_t(rng() % 3);
    switch (rng() % 4) {
      case 0:
        l = l.flip(ax);
        break;
      case 1:
        l = l.transpose(ax, int64_t(rng() % 3));
        break;
      case 2:
        l = slice(l, ax);
        break;
      default:
        break;
    }
  }
  return l;
}

}  // namespace

TEST_CASE("Layout: the reference table for a (2,3,4) tensor", "[core]") {
  const st::Layout x = st::Layout::contiguous({2, 3, 4});
  auto narrow = [](const st::Layout& l, int64_t d, int64_t start, int64_t len) {
    return l.slice(d, start, start + len);
  };

  SECTION("x") { check(x, {2, 3, 4}, {12, 4, 1}, 0, true); }
  SECTION("x.narrow(2,1,2)") { check(narrow(x, 2, 1, 2), {2, 3, 2}, {12, 4, 1}, 1, false); }
  SECTION("x.narrow(1,1,2)") { check(narrow(x, 1, 1, 2), {2, 2, 4}, {12, 4, 1}, 4, false); }
  SECTION("x.transpose(1,2)") { check(x.transpose(1, 2), {2, 4, 3}, {12, 1, 4}, 0, false); }
  SECTION("x.select(0,0).transpose(0,1)") {
    check(x.select(0, 0).transpose(0, 1), {4, 3}, {1, 4}, 0, false);
  }
  SECTION("x.narrow(0,1,1).narrow(1,1,1)") {
    check(narrow(narrow(x, 0, 1, 1), 1, 1, 1), {1, 1, 4}, {12, 4, 1}, 16, true);
  }
  SECTION("broadcast (1,4)->(3,4)") {
    check(st::Layout::contiguous({1, 4}).expand({3, 4}), {3, 4}, {0, 1}, 0, false);
  }
  SECTION("the transposed strided index sequence") {
    // Listed in the reference for x.transpose(1,2).
    const std::vector<int64_t> expect = {0,  4,  8,  1,  5,  9,  2,  6,  10, 3,  7,  11,
                                         12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23};
    REQUIRE(addresses(x.transpose(1, 2)) == expect);
  }
  SECTION("a (4,1) tensor transposed is contiguous") {
    check(st::Layout::contiguous({4, 1}).transpose(0, 1), {1, 4}, {1, 1}, 0, true);
  }
}

TEST_CASE("Layout basics", "[core]") {
  SECTION("contiguous") {
    check(st::Layout::contiguous({}), {}, {}, 0, true);
    REQUIRE(st::Layout::contiguous({}).numel() == 1);
    REQUIRE(st::Layout::contiguous({2, 0, 3}).numel() == 0);
    REQUIRE(st::Layout::contiguous({2, 3, 4}).ndim() == 3);
    REQUIRE_THROWS_AS(st::Layout::contiguous({2, -1}), st::ValueError);
  }
  SECTION("is_contiguous ignores size-1 dims and the offset") {
    REQUIRE(st::Layout{{2, 1, 3}, {3, 99, 1}, 7}.is_contiguous());
    REQUIRE(st::Layout{{1, 1}, {-5, 0}, 3}.is_contiguous());
    REQUIRE_FALSE(st::Layout{{2, 3}, {1, 2}, 0}.is_contiguous());
    REQUIRE_FALSE(st::Layout{{2, 3}, {4, 1}, 0}.is_contiguous());
    REQUIRE_FALSE(st::Layout{{3}, {-1}, 2}.is_contiguous());
    REQUIRE_FALSE(st::Layout{{3}, {0}, 0}.is_contiguous());
  }
  SECTION("transpose with negative axes") {
    const st::Layout x = st::Layout::contiguous({2, 3, 4});
    check(x.transpose(-1, 0), {4, 3, 2}, {1, 4, 12}, 0, false);
    check(x.transpose(1, 1), {2, 3, 4}, {12, 4, 1}, 0, true);
    REQUIRE_THROWS_AS(x.transpose(0, 3), st::IndexError);
  }
  SECTION("select") {
    const st::Layout x = st::Layout::contiguous({2, 3, 4});
    check(x.select(1, 2), {2, 4}, {12, 1}, 8, false);
    check(x.select(1, -1), {2, 4}, {12, 1}, 8, false);
    check(x.select(-1, -4), {2, 3}, {12, 4}, 0, false);
    check(x.select(0, 1), {3, 4}, {4, 1}, 12, true);
    REQUIRE_THROWS_AS(x.select(1, 3), st::IndexError);
    REQUIRE_THROWS_AS(x.select(1, -4), st::IndexError);
    REQUIRE_THROWS_WITH(x.select(1, 3), Catch::Contains("select") && Catch::Contains("3"));
    REQUIRE_THROWS_AS(x.select(3, 0), st::IndexError);
  }
}

TEST_CASE("Layout::slice matches Python slicing", "[core]") {
  SECTION("the brute-force reference agrees with Python on known cases") {
    // Printed by CPython 3: list(range(*slice(a, b, c).indices(n))).
    const auto none = std::nullopt;
    REQUIRE(python_positions(5, none, none, -1) == std::vector<int64_t>{4, 3, 2, 1, 0});
    REQUIRE(python_positions(5, -2, none, -2) == std::vector<int64_t>{3, 1});
    REQUIRE(python_positions(5, 10, -10, -3) == std::vector<int64_t>{4, 1});
    REQUIRE(python_positions(5, 1, 100, 2) == std::vector<int64_t>{1, 3});
    REQUIRE(python_positions(5, none, none, 2) == std::vector<int64_t>{0, 2, 4});
    REQUIRE(python_positions(5, -100, 3, 1) == std::vector<int64_t>{0, 1, 2});
    REQUIRE(python_positions(5, 3, 1, -1) == std::vector<int64_t>{3, 2});
    REQUIRE(python_positions(5, -1, -6, -1) == std::vector<int64_t>{4, 3, 2, 1, 0});
    REQUIRE(python_positions(5, 4, -7, -2) == std::vector<int64_t>{4, 2, 0});
    REQUIRE(python_positions(0, none, none, -1).empty());
    REQUIRE(python_positions(6, 2, 2, 1).empty());
    REQUIRE(python_positions(6, -3, none, 1) == std::vector<int64_t>{3, 4, 5});
    REQUIRE(python_positions(6, none, -4, -2) == std::vector<int64_t>{5, 3});
    REQUIRE(python_positions(1, none, none, -5) == std::vector<int64_t>{0});
  }

  SECTION("every start/stop/step on a middle axis, plain and flipped") {
    std::vector<std::optional<int64_t>> bounds = {std::nullopt, std::numeric_limits<int64_t>::min(),
                                                  std::numeric_limits<int64_t>::max()};
    for (int64_t b = -8; b <= 8; ++b) bounds.push_back(b);
    const std::vector<int64_t> steps = {-4, -3, -2, -1, 1, 2, 3, 4};
    int64_t checked = 0, mismatches = 0;
    for (int64_t n = 0; n <= 6; ++n) {
      for (bool flipped : {false, true}) {
        st::Layout base = st::Layout::contiguous({2, n, 3});
        if (flipped) base = base.flip(1);
        const auto base_addr = addresses(base);
        for (const auto& start : bounds) {
          for (const auto& stop : bounds) {
            for (int64_t step : steps) {
              const auto pos = python_positions(n, start, stop, step);
              const st::Layout v = base.slice(1, start, stop, step);
              // Expected: element (a, j, c) of the view is element (a, pos[j], c) of base.
              std::vector<int64_t> expect;
              for (int64_t a = 0; a < 2; ++a) {
                for (int64_t p : pos) {
                  for (int64_t c = 0; c < 3; ++c) expect.push_back(base_addr[(a * n + p) * 3 + c]);
                }
              }
              const bool ok = dims_of(v.shape) == Dims{2, static_cast<int64_t>(pos.size()), 3} &&
                              v.strides[0] == base.strides[0] && v.strides[2] == base.strides[2] &&
                              addresses(v) == expect;
              if (!ok && mismatches++ < 5) {
                UNSCOPED_INFO("n=" << n << " flipped=" << flipped
                                   << " start=" << (start ? std::to_string(*start) : "None")
                                   << " stop=" << (stop ? std::to_string(*stop) : "None")
                                   << " step=" << step << " got shape " << v.shape);
              }
              ++checked;
            }
          }
        }
      }
    }
    REQUIRE(checked == 7 * 2 * 20 * 20 * 8);
    REQUIRE(mismatches == 0);
  }

  SECTION("a slice of a slice") {
    const st::Layout x = st::Layout::contiguous({10});
    const st::Layout v = x.slice(0, 8, 1, -2).slice(0, 1, std::nullopt, 2);  // [8,6,4,2] -> [6,2]
    REQUIRE(addresses(v) == std::vector<int64_t>{6, 2});
  }

  SECTION("huge steps") {
    // Python: list(range(*slice(0, 5, 2**63 - 1).indices(5))) == [0], and with
    // step -(2**63 - 1) or -2**63 from the end: [4].
    const st::Layout x = st::Layout::contiguous({5});
    const int64_t max = std::numeric_limits<int64_t>::max();
    const st::Layout a = x.slice(0, 0, 5, max);
    CHECK(dims_of(a.shape) == Dims{1});
    CHECK(addresses(a) == std::vector<int64_t>{0});
    const st::Layout b = x.slice(0, std::nullopt, std::nullopt, -max);
    CHECK(dims_of(b.shape) == Dims{1});
    CHECK(addresses(b) == std::vector<int64_t>{4});
  }

  SECTION("step 0 -> ValueError; bad axis -> IndexError") {
    const st::Layout x = st::Layout::contiguous({4, 5});
    REQUIRE_THROWS_AS(x.slice(1, 0, 5, 0), st::ValueError);
    REQUIRE_THROWS_WITH(x.slice(1, 0, 5, 0), Catch::Contains("slice") && Catch::Contains("step"));
    REQUIRE_THROWS_AS(x.slice(2, 0, 1), st::IndexError);
    REQUIRE_THROWS_AS(x.slice(-3, 0, 1), st::IndexError);
  }
}

TEST_CASE("Layout::flip", "[core]") {
  const st::Layout x = st::Layout::contiguous({2, 3, 4});
  SECTION("last axis") {
    const st::Layout f = x.flip(2);
    check(f, {2, 3, 4}, {12, 4, -1}, 3, false);
    REQUIRE(addresses(f)[0] == 3);
    REQUIRE(addresses(f)[3] == 0);
  }
  SECTION("first axis, negative index") { check(x.flip(-3), {2, 3, 4}, {-12, 4, 1}, 12, false); }
  SECTION("every element maps to the mirrored one") {
    const st::Layout f = x.flip(1);
    const auto fa = addresses(f), xa = addresses(x);
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t c = 0; c < 4; ++c) {
          REQUIRE(fa[(a * 3 + b) * 4 + c] == xa[(a * 3 + (2 - b)) * 4 + c]);
        }
      }
    }
  }
  SECTION("twice is the identity") {
    const st::Layout ff = x.flip(1).flip(1);
    check(ff, {2, 3, 4}, {12, 4, 1}, 0, true);
  }
  SECTION("empty axis") {
    const st::Layout e = st::Layout::contiguous({0, 3}).flip(0);
    REQUIRE(dims_of(e.shape) == Dims{0, 3});
    REQUIRE(addresses(e).empty());
  }
  SECTION("bad axis") { REQUIRE_THROWS_AS(x.flip(3), st::IndexError); }
}

TEST_CASE("Layout::squeeze and unsqueeze", "[core]") {
  SECTION("squeeze") {
    const st::Layout x = st::Layout::contiguous({2, 1, 3});
    check(x.squeeze(1), {2, 3}, {3, 1}, 0, true);
    check(x.squeeze(-2), {2, 3}, {3, 1}, 0, true);
    REQUIRE(addresses(x.squeeze(1)) == addresses(x));
    REQUIRE_THROWS_AS(x.squeeze(0), st::ShapeError);
    REQUIRE_THROWS_WITH(x.squeeze(2), Catch::Contains("squeeze") && Catch::Contains("[2, 1, 3]"));
    REQUIRE_THROWS_AS(x.squeeze(3), st::IndexError);
    check(st::Layout::contiguous({1}).squeeze(0), {}, {}, 0, true);
  }
  SECTION("unsqueeze at every position, on a non-contiguous layout") {
    // (3, 4, 5) permuted and sliced, so strides are unusual.
    const st::Layout x = st::Layout::contiguous({3, 4, 5}).permute({2, 0, 1}).slice(2, 3, 0, -2);
    const auto xa = addresses(x);
    for (int64_t axis = -4; axis <= 3; ++axis) {
      const int64_t at = axis < 0 ? axis + 4 : axis;
      Dims expect = dims_of(x.shape);
      expect.insert(expect.begin() + at, 1);
      const st::Layout u = x.unsqueeze(axis);
      INFO("axis " << axis);
      REQUIRE(dims_of(u.shape) == expect);
      REQUIRE(u.strides.size() == 4);
      REQUIRE(addresses(u) == xa);
      REQUIRE(dims_of(u.squeeze(at).shape) == dims_of(x.shape));
    }
    REQUIRE_THROWS_AS(x.unsqueeze(4), st::IndexError);
    REQUIRE_THROWS_AS(x.unsqueeze(-5), st::IndexError);
  }
  SECTION("unsqueeze keeps contiguity") {
    const st::Layout x = st::Layout::contiguous({2, 3});
    for (int64_t axis : {0, 1, 2, -1, -3}) REQUIRE(x.unsqueeze(axis).is_contiguous());
    check(st::Layout::contiguous({}).unsqueeze(0), {1}, {1}, 0, true);
  }
}

TEST_CASE("Layout::permute", "[core]") {
  const st::Layout x = st::Layout::contiguous({2, 3, 4});
  SECTION("reorders shape and strides") {
    check(x.permute({2, 0, 1}), {4, 2, 3}, {1, 12, 4}, 0, false);
    check(x.permute({-1, -2, -3}), {4, 3, 2}, {1, 4, 12}, 0, false);
    check(x.permute({0, 1, 2}), {2, 3, 4}, {12, 4, 1}, 0, true);
  }
  SECTION("element (i,j,k) of permute({2,0,1}) is element (j,k,i) of x") {
    const auto pa = addresses(x.permute({2, 0, 1})), xa = addresses(x);
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        for (int64_t k = 0; k < 3; ++k) REQUIRE(pa[(i * 2 + j) * 3 + k] == xa[(j * 3 + k) * 4 + i]);
      }
    }
  }
  SECTION("rank 12, reversed") {
    const st::Layout big = st::Layout::contiguous(st::Shape(std::size_t{12}, int64_t{2}));
    st::Shape rev;
    for (int64_t i = 11; i >= 0; --i) rev.push_back(i);
    const st::Layout p = big.permute(rev);
    for (int64_t i = 0; i < 12; ++i) REQUIRE(p.strides[i] == (int64_t{1} << i));
  }
  SECTION("errors") {
    REQUIRE_THROWS_AS(x.permute({0, 1}), st::ShapeError);
    REQUIRE_THROWS_AS(x.permute({0, 1, 2, 3}), st::ShapeError);
    REQUIRE_THROWS_AS(x.permute({0, 1, 1}), st::ShapeError);
    REQUIRE_THROWS_AS(x.permute({0, 1, -3}), st::ShapeError);  // -3 is axis 0 again
    REQUIRE_THROWS_WITH(x.permute({0, 1}),
                        Catch::Contains("permute") && Catch::Contains("[2, 3, 4]"));
    REQUIRE_THROWS_WITH(x.permute({2, 2, 0}),
                        Catch::Contains("permute") && Catch::Contains("[2, 2, 0]"));
    REQUIRE_THROWS_AS(x.permute({0, 1, 3}), st::IndexError);
  }
}

TEST_CASE("Layout::expand", "[core]") {
  SECTION("size-1 dims and new leading dims get stride 0") {
    const st::Layout x = st::Layout::contiguous({3, 1});
    check(x.expand({2, 3, 4}), {2, 3, 4}, {0, 1, 0}, 0, false);
    check(x.expand({3, 1}), {3, 1}, {1, 1}, 0, true);
    const auto ea = addresses(x.expand({2, 3, 4}));
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t c = 0; c < 4; ++c) REQUIRE(ea[(a * 3 + b) * 4 + c] == b);
      }
    }
  }
  SECTION("keeps the offset and existing strides") {
    const st::Layout x = st::Layout::contiguous({4, 6}).slice(1, 1, 2).transpose(0, 1);  // (1,4)
    check(x, {1, 4}, {1, 6}, 1, false);
    check(x.expand({5, 4}), {5, 4}, {0, 6}, 1, false);
  }
  SECTION("to a zero size") {
    check(st::Layout::contiguous({1, 3}).expand({0, 3}), {0, 3}, {0, 1}, 0, true);
  }
  SECTION("errors -> ShapeError naming both shapes") {
    const st::Layout x = st::Layout::contiguous({2, 3});
    REQUIRE_THROWS_AS(x.expand({3}), st::ShapeError);
    REQUIRE_THROWS_AS(x.expand({4, 3}), st::ShapeError);
    REQUIRE_THROWS_AS(x.expand({2, 6}), st::ShapeError);
    REQUIRE_THROWS_AS(x.expand({5, 3, 3}), st::ShapeError);
    REQUIRE_THROWS_WITH(x.expand({4, 3}), Catch::Contains("expand") && Catch::Contains("[2, 3]") &&
                                              Catch::Contains("[4, 3]"));
  }
}

TEST_CASE("Layout::reshape_view", "[core]") {
  // Every returned view must address the same storage positions, in the same
  // row-major order, as the original.
  auto view_ok = [](const st::Layout& from, const Dims& to) {
    const auto v = from.reshape_view(st::Shape(to));
    INFO("from " << from.shape << " strides " << from.strides << " to " << st::Shape(to));
    REQUIRE(v.has_value());
    REQUIRE(dims_of(v->shape) == to);
    REQUIRE(v->strides.size() == to.size());
    REQUIRE(addresses(*v) == addresses(from));
    return *v;
  };
  auto no_view = [](const st::Layout& from, const Dims& to) {
    INFO("from " << from.shape << " strides " << from.strides << " to " << st::Shape(to));
    REQUIRE_FALSE(from.reshape_view(st::Shape(to)).has_value());
  };
  const st::Layout x = st::Layout::contiguous({2, 3, 4});

  SECTION("contiguous: merge and split") {
    for (const Dims& to : std::vector<Dims>{{24},
                                            {6, 4},
                                            {2, 12},
                                            {4, 6},
                                            {3, 8},
                                            {2, 3, 2, 2},
                                            {2, 3, 4},
                                            {1, 2, 1, 3, 4, 1},
                                            {24, 1},
                                            {1, 24},
                                            {2, 2, 2, 3}}) {
      const st::Layout v = view_ok(x, to);
      REQUIRE(v.is_contiguous());
    }
  }
  SECTION("contiguous with an offset") {
    const st::Layout off = st::Layout::contiguous({3, 2, 3, 4}).select(0, 2);
    REQUIRE(off.offset == 48);
    REQUIRE(view_ok(off, {6, 4}).offset == 48);
  }
  SECTION("size-1 dims inserted and removed") {
    const st::Layout odd{{2, 1, 3}, {3, 77, 1}, 0};  // size-1 dim with an arbitrary stride
    view_ok(odd, {6});
    view_ok(odd, {2, 3});
    view_ok(odd, {1, 2, 3, 1});
    const st::Layout t = x.transpose(1, 2);  // (2,4,3) strides (12,1,4)
    view_ok(t, {2, 1, 4, 3});
    view_ok(t, {1, 2, 4, 1, 3});
    view_ok(st::Layout::contiguous({}), {1, 1});
    view_ok(st::Layout::contiguous({1, 1, 1}), {});
  }
  SECTION("non-contiguous but splittable") {
    const st::Layout p = x.permute({1, 0, 2});  // (3,2,4) strides (4,12,1)
    view_ok(p, {3, 2, 2, 2});
    view_ok(p, {3, 2, 4, 1});
    no_view(p, {6, 4});
    no_view(p, {3, 8});
    const st::Layout t = x.transpose(1, 2);  // (2,4,3) strides (12,1,4)
    view_ok(t, {2, 2, 2, 3});
  }
  SECTION("sliced but inner-contiguous, split on the outer dim") {
    const st::Layout s = st::Layout::contiguous({8, 5}).slice(1, 0, 4);  // (8,4) strides (5,1)
    REQUIRE_FALSE(s.is_contiguous());
    view_ok(s, {2, 4, 4});
    view_ok(s, {4, 2, 4});
    view_ok(s, {8, 2, 2});
    view_ok(s, {2, 2, 2, 2, 2});
    no_view(s, {32});
    no_view(s, {4, 8});
    // Same with an offset and a step on the outer dim: (4,4) strides (10,1) offset 6.
    const st::Layout s2 =
        st::Layout::contiguous({8, 5}).slice(0, 1, std::nullopt, 2).slice(1, 1, 5);
    REQUIRE(s2.offset == 6);
    view_ok(s2, {2, 2, 4});
    view_ok(s2, {2, 2, 2, 2});
    no_view(s2, {16});
  }
  SECTION("flipped") {
    const st::Layout f2 = st::Layout::contiguous({2, 3}).flip(0).flip(1);  // strides (-3,-1)
    const st::Layout v = view_ok(f2, {6});
    REQUIRE(v.strides[0] == -1);
    REQUIRE(v.offset == 5);
    view_ok(f2, {3, 2});
    const st::Layout f1 = st::Layout::contiguous({2, 3}).flip(1);
    no_view(f1, {6});
    view_ok(f1, {2, 3, 1});
  }
  SECTION("broadcast") {
    const st::Layout b = st::Layout::contiguous({1, 4}).expand({3, 4});  // strides (0,1)
    view_ok(b, {3, 2, 2});
    view_ok(b, {3, 1, 4});
    no_view(b, {12});
    const st::Layout z = st::Layout::contiguous({1}).expand({6});  // all stride 0
    view_ok(z, {2, 3});
  }
  SECTION("transposed then flattened -> nullopt") {
    no_view(st::Layout::contiguous({3, 4}).transpose(0, 1), {12});
    no_view(x.transpose(0, 2), {24});
    no_view(x.transpose(1, 2), {2, 12});
  }
  SECTION("zero elements") {
    view_ok(st::Layout::contiguous({0, 3}), {3, 0});
    view_ok(st::Layout::contiguous({2, 0}).transpose(0, 1), {0});
  }
  SECTION("rank 12 to rank 9 and back") {
    const Dims d12 = {2, 1, 3, 2, 1, 2, 2, 1, 2, 3, 1, 2};  // 576 elements
    const st::Layout big = st::Layout::contiguous(st::Shape(d12));
    const st::Layout v = view_ok(big, {2, 3, 2, 2, 2, 2, 3, 1, 2});
    view_ok(v, d12);
    // Permuted rank 9 (all 2s, reversed): no merge is possible.
    const st::Layout all2 = st::Layout::contiguous(st::Shape(std::size_t{9}, int64_t{2}))
                                .permute({8, 7, 6, 5, 4, 3, 2, 1, 0});
    no_view(all2, {512});
    view_ok(all2, {2, 2, 2, 2, 2, 2, 2, 2, 2, 1});
  }
  SECTION("wrong element count -> ShapeError") {
    REQUIRE_THROWS_AS(x.reshape_view({5, 5}), st::ShapeError);
    REQUIRE_THROWS_WITH(x.reshape_view({5, 5}),
                        Catch::Contains("[2, 3, 4]") && Catch::Contains("[5, 5]"));
  }
  SECTION("random layouts: a returned view always matches") {
    std::mt19937_64 rng(20240611);
    int views = 0;
    for (int trial = 0; trial < 300; ++trial) {
      // A random (2..3)-dim contiguous base, permuted and perhaps sliced / flipped.
      const Dims base = {int64_t(1 + rng() % 4), int64_t(1 + rng() % 4), int64_t(1 + rng() % 4)};
      st::Layout l = st::Layout::contiguous(st::Shape(base));
      if (rng() % 2) l = l.transpose(int64_t(rng() % 3), int64_t(rng() % 3));
      if (rng() % 3 == 0) l = l.flip(int64_t(rng() % 3));
      if (rng() % 3 == 0) {
        const int64_t ax = int64_t(rng() % 3);
        l = l.slice(ax, 0, std::max<int64_t>(1, l.shape[ax] - 1));
      }
      // Random target: factor the element count into up to four dims.
      int64_t rest = l.numel();
      Dims to;
      for (int k = 0; k < 3; ++k) {
        std::vector<int64_t> divisors;
        for (int64_t d = 1; d <= rest; ++d) {
          if (rest % d == 0) divisors.push_back(d);
        }
        const int64_t d = divisors[rng() % divisors.size()];
        to.push_back(d);
        rest /= d;
      }
      to.push_back(rest);
      const auto v = l.reshape_view(st::Shape(to));
      if (v) {
        ++views;
        INFO("from " << l.shape << " strides " << l.strides << " to " << st::Shape(to));
        REQUIRE(dims_of(v->shape) == to);
        REQUIRE(addresses(*v) == addresses(l));
      } else {
        // Contiguous inputs must always reshape as views.
        REQUIRE_FALSE(l.is_contiguous());
      }
    }
    REQUIRE(views > 100);
  }
}

TEST_CASE("infer_reshape", "[core]") {
  const st::Shape from{2, 3, 4};
  SECTION("-1 is inferred") {
    REQUIRE(st::infer_reshape({-1, 4}, 24, from, "reshape") == st::Shape{6, 4});
    REQUIRE(st::infer_reshape({2, -1, 2}, 24, from, "reshape") == st::Shape{2, 6, 2});
    REQUIRE(st::infer_reshape({-1}, 24, from, "reshape") == st::Shape{24});
    REQUIRE(st::infer_reshape({1, -1, 1}, 24, from, "reshape") == st::Shape{1, 24, 1});
    REQUIRE(st::infer_reshape({-1, 3}, 0, st::Shape{0, 3}, "reshape") == st::Shape{0, 3});
  }
  SECTION("no -1") {
    REQUIRE(st::infer_reshape({4, 6}, 24, from, "reshape") == st::Shape{4, 6});
    REQUIRE(st::infer_reshape({}, 1, st::Shape{1, 1}, "reshape") == st::Shape{});
  }
  SECTION("two -1 -> ShapeError") {
    REQUIRE_THROWS_AS(st::infer_reshape({-1, -1}, 24, from, "reshape"), st::ShapeError);
    REQUIRE_THROWS_WITH(st::infer_reshape({-1, 2, -1}, 24, from, "view"),
                        Catch::Contains("view") && Catch::Contains("[-1, 2, -1]"));
  }
  SECTION("wrong count -> ShapeError naming both shapes") {
    REQUIRE_THROWS_AS(st::infer_reshape({4, 2}, 24, from, "reshape"), st::ShapeError);
    REQUIRE_THROWS_WITH(
        st::infer_reshape({4, 2}, 24, from, "reshape"),
        Catch::Contains("reshape") && Catch::Contains("[2, 3, 4]") && Catch::Contains("[4, 2]"));
    REQUIRE_THROWS_AS(st::infer_reshape({5, -1}, 24, from, "reshape"), st::ShapeError);
    REQUIRE_THROWS_WITH(st::infer_reshape({5, -1}, 24, from, "reshape"),
                        Catch::Contains("[2, 3, 4]") && Catch::Contains("[5, -1]"));
    // -1 next to a zero dim is ambiguous.
    REQUIRE_THROWS_AS(st::infer_reshape({0, -1}, 0, st::Shape{0, 3}, "reshape"), st::ShapeError);
  }
  SECTION("other negative dims -> ShapeError") {
    REQUIRE_THROWS_AS(st::infer_reshape({-2, 12}, 24, from, "reshape"), st::ShapeError);
  }
}

TEST_CASE("Layout::span", "[core]") {
  SECTION("table") {
    const st::Layout x = st::Layout::contiguous({2, 3, 4});
    REQUIRE(x.span() == std::pair<int64_t, int64_t>{0, 24});
    REQUIRE(x.slice(1, 1, 3).span() == std::pair<int64_t, int64_t>{4, 24});
    REQUIRE(x.flip(2).span() == std::pair<int64_t, int64_t>{0, 24});
    REQUIRE(st::Layout::contiguous({1, 4}).expand({3, 4}).span() ==
            std::pair<int64_t, int64_t>{0, 4});
    REQUIRE(x.slice(0, 1, 1).span() == std::pair<int64_t, int64_t>{x.offset, x.offset});
    REQUIRE(st::Layout{{}, {}, 9}.span() == std::pair<int64_t, int64_t>{9, 10});
  }
  SECTION("random views: min and one past max of the brute-force positions") {
    std::mt19937_64 rng(77);
    for (int trial = 0; trial < 200; ++trial) {
      const st::Layout l = random_view(rng, 4, 3, [&](const st::Layout& v, int64_t ax) {
        return v.slice(ax, int64_t(rng() % 3) - 1, std::nullopt, (rng() % 2) ? 2 : -1);
      });
      const auto a = addresses(l);
      if (a.empty()) continue;
      const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
      INFO("shape " << l.shape << " strides " << l.strides << " offset " << l.offset);
      REQUIRE(l.span() == std::pair<int64_t, int64_t>{*lo, *hi + 1});
    }
  }
}

TEST_CASE("Layout::span: reaches past int64 -> ValueError naming the op", "[core]") {
  const int64_t big = int64_t{1} << 61, max = std::numeric_limits<int64_t>::max();
  using Catch::Contains;
  SECTION("the issue's case: [2, 2, 2, 2] with strides 2^61 reaches 4 * 2^61 = 2^63") {
    const st::Layout l{{2, 2, 2, 2}, {big, big, big, big}, 0};
    REQUIRE_THROWS_AS(l.span("view"), st::ValueError);
    REQUIRE_THROWS_WITH(l.span("view"), Contains("view") && Contains("[2, 2, 2, 2]") &&
                                            Contains("2305843009213693952"));
    // Three of the four axes still fit: the highest offset is 3 * 2^61.
    const st::Layout three{{2, 2, 2}, {big, big, big}, 0};
    REQUIRE(three.span() == std::pair<int64_t, int64_t>{0, 3 * big + 1});
  }
  SECTION("negative strides reaching below INT64_MIN") {
    // Four steps of -2^61 reach exactly INT64_MIN, which fits; one more does not.
    const st::Layout four{{2, 2, 2, 2}, {-big, -big, -big, -big}, 0};
    REQUIRE(four.span() == std::pair<int64_t, int64_t>{std::numeric_limits<int64_t>::min(), 1});
    const st::Layout l{{2, 2, 2, 2}, {-big, -big, -big, -big}, -1};
    REQUIRE_THROWS_AS(l.span(), st::ValueError);
    REQUIRE_THROWS_WITH(l.span(), Contains("layout"));  // the default op name
  }
  SECTION("one product (size - 1) * stride overflowing") {
    REQUIRE_THROWS_AS((st::Layout{{3}, {max / 2 + 1}, 0}.span()), st::ValueError);
    REQUIRE_THROWS_AS((st::Layout{{max}, {2}, 0}.span()), st::ValueError);
    REQUIRE_THROWS_AS((st::Layout{{max}, {-2}, 0}.span()), st::ValueError);
  }
  SECTION("the offset pushing the end past INT64_MAX") {
    REQUIRE_THROWS_AS((st::Layout{{2}, {1}, max - 1}.span()), st::ValueError);
    REQUIRE_THROWS_AS((st::Layout{{}, {}, max}.span()), st::ValueError);  // one past max
    REQUIRE(st::Layout{{}, {}, max - 1}.span() == std::pair<int64_t, int64_t>{max - 1, max});
    REQUIRE_THROWS_AS((st::Layout{{2}, {-1}, std::numeric_limits<int64_t>::min()}.span()),
                      st::ValueError);
  }
  SECTION("an element count overflowing, or a negative dim") {
    REQUIRE_THROWS_AS((st::Layout{{big, 8}, {0, 0}, 0}.span("view")), st::ValueError);
    REQUIRE_THROWS_WITH((st::Layout{{big, 8}, {0, 0}, 0}.span("view")),
                        Contains("view") && Contains("overflow"));
    REQUIRE_THROWS_AS((st::Layout{{2, -1}, {1, 1}, 0}.span()), st::ValueError);
  }
  SECTION("empty layouts touch nothing, whatever their strides") {
    REQUIRE(st::Layout{{0, 2}, {max, max}, 5}.span() == std::pair<int64_t, int64_t>{5, 5});
  }
}

TEST_CASE("Layout views of extreme but valid layouts never overflow", "[core]") {
  // Strides whose reach fits, but whose product with one more element would
  // not: the views below used to multiply past int64 (undefined behaviour).
  const int64_t big = int64_t{1} << 62;
  const st::Layout l{{2}, {big}, 0};
  REQUIRE(l.span() == std::pair<int64_t, int64_t>{0, big + 1});
  SECTION("unsqueeze in front of the wide axis") {
    const st::Layout u = l.unsqueeze(0);
    REQUIRE(u.shape == st::Shape{1, 2});
    REQUIRE(u.strides[1] == big);
    REQUIRE(u.span() == l.span());
    REQUIRE(addresses(u) == addresses(l));
  }
  SECTION("reshape_view to [1, 2] and [2, 1]") {
    for (const st::Shape& s : {st::Shape{1, 2}, st::Shape{2, 1}, st::Shape{1, 2, 1}}) {
      INFO("shape " << s);
      const auto v = l.reshape_view(s);
      REQUIRE(v.has_value());
      REQUIRE(v->span() == l.span());
      REQUIRE(addresses(*v) == addresses(l));
    }
  }
  SECTION("reshape_view of a wide inner axis cannot merge: no view, no overflow") {
    const st::Layout w{{2, 2}, {1, big}, 0};
    REQUIRE(w.span() == std::pair<int64_t, int64_t>{0, big + 2});
    REQUIRE_FALSE(w.reshape_view({4}).has_value());
  }
  SECTION("slices with the most extreme steps keep one element") {
    const int64_t max = std::numeric_limits<int64_t>::max();
    const int64_t min = std::numeric_limits<int64_t>::min();
    const st::Layout x{{5}, {big / 4}, 3};
    for (int64_t step : {max, max - 1, min, min + 1}) {
      INFO("step " << step);
      const st::Layout s = x.slice(0, std::nullopt, std::nullopt, step);
      REQUIRE(s.shape == st::Shape{1});
      REQUIRE(addresses(s) == std::vector<int64_t>{step > 0 ? 3 : 3 + 4 * (big / 4)});
    }
    // A user-built layout whose stride times the step overflows.
    REQUIRE_THROWS_AS((st::Layout{{8}, {big}, 0}.slice(0, 0, 8, 2)), st::ValueError);
    REQUIRE_THROWS_WITH((st::Layout{{8}, {big}, 0}.slice(0, 0, 8, 2)),
                        Catch::Contains("slice") && Catch::Contains("overflow"));
  }
}

TEST_CASE("Layout::is_contiguous agrees with brute force", "[core]") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const st::Layout l = random_view(rng, 3, 2, [&](const st::Layout& v, int64_t ax) {
      return v.slice(ax, int64_t(rng() % 2), std::nullopt);
    });
    if (l.numel() == 0) continue;  // empty layouts: see the next test case
    INFO("shape " << l.shape << " strides " << l.strides);
    REQUIRE(l.is_contiguous() == dense_run(addresses(l)));
  }
}

TEST_CASE("Layout::is_contiguous: an empty layout is contiguous whatever its strides", "[core]") {
  // Like PyTorch (a tensor with no elements is contiguous), and like the
  // implementation's own early exit on a zero dim, whichever axis the zero is on.
  const st::Layout a = st::Layout::contiguous({3, 2}).transpose(0, 1).slice(1, 3, std::nullopt);
  check(a, {2, 0}, {1, 2}, 0, true);
  const st::Layout b = st::Layout::contiguous({3, 2}).transpose(0, 1).slice(0, 2, std::nullopt);
  REQUIRE(dims_of(b.shape) == Dims{0, 3});
  REQUIRE(dims_of(b.strides) == Dims{1, 2});
  REQUIRE(b.is_contiguous());
  REQUIRE(st::Layout{{0, 3}, {1, 2}, 0}.is_contiguous());
  REQUIRE(st::Layout{{4, 0, 5}, {1, 7, 3}, 0}.is_contiguous());
}
