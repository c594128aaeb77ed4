// SPDX-License-Identifier: MIT
// Tests for core/strided.hpp: iteration plans (dim merging) and block walks,
// checked against offsets computed here from row-major multi-indices.
#include "core/strided.hpp"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/layout.hpp"

namespace st = strata;

namespace {

// Storage offset of row-major element `linear` of layout l, by unravelling the index.
int64_t brute_offset(const st::Layout& l, int64_t linear) {
  int64_t off = l.offset;
  for (std::size_t d = l.shape.size(); d-- > 0;) {
    off += (linear % l.shape[d]) * l.strides[d];
    linear /= l.shape[d];
  }
  return off;
}

// Offsets per operand for elements [lo, hi), as handed out by for_each_block.
template <std::size_t N>
std::array<std::vector<int64_t>, N> walk(const st::detail::StridedPlan<N>& p, int64_t lo,
                                         int64_t hi, int64_t* blocks = nullptr) {
  std::array<std::vector<int64_t>, N> out;
  st::detail::for_each_block(
      p, lo, hi,
      [&](const std::array<int64_t, N>& off, int64_t n, const std::array<int64_t, N>& inner) {
        REQUIRE(n > 0);
        if (blocks) ++*blocks;
        for (std::size_t k = 0; k < N; ++k) {
          for (int64_t j = 0; j < n; ++j) out[k].push_back(off[k] + j * inner[k]);
        }
      });
  return out;
}

std::vector<int64_t> walk1(const st::Layout& l, int64_t lo, int64_t hi) {
  const auto p = st::detail::make_plan<1>(l.shape, {&l});
  return walk(p, lo, hi)[0];
}

std::vector<int64_t> brute(const st::Layout& l, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t i = lo; i < hi; ++i) out.push_back(brute_offset(l, i));
  return out;
}

std::vector<int64_t> to_vec(const st::Shape& s) { return {s.begin(), s.end()}; }

// A random layout of the given shape built from view ops on a bigger
// contiguous buffer: a permutation, a stepped slice per axis, random flips,
// and broadcasting of some axes.
st::Layout random_layout(const st::Shape& shape, std::mt19937_64& rng) {
  const std::size_t r = shape.size();
  // Which axes are broadcast (built from size 1 and expanded).
  std::vector<bool> bcast(r);
  for (std::size_t i = 0; i < r; ++i) bcast[i] = rng() % 5 == 0;
  // Sizes before slicing: each axis enlarged by a step and some slack.
  std::vector<int64_t> steps(r), big(r);
  for (std::size_t i = 0; i < r; ++i) {
    steps[i] = bcast[i] ? 1 : int64_t(1 + rng() % 2);
    big[i] = bcast[i] ? 1 : shape[i] * steps[i] + int64_t(rng() % 2);
  }
  // Lay the big buffer out in a random axis order, then permute back.
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  st::Shape permuted_big;
  for (std::size_t i = 0; i < r; ++i) permuted_big.push_back(big[perm[i]]);
  st::Layout l = st::Layout::contiguous(permuted_big);
  st::Shape inverse(r);
  for (std::size_t i = 0; i < r; ++i) inverse[perm[i]] = int64_t(i);
  l = l.permute(inverse);
  // Now l has shape `big`; cut each axis down to shape[i] elements.
  for (std::size_t i = 0; i < r; ++i) {
    if (bcast[i]) continue;
    const int64_t extra = big[i] - shape[i] * steps[i];  // 0 or 1 slack element
    const int64_t start = extra > 0 && rng() % 2 ? 1 : 0;
    if (rng() % 2) {
      l = l.slice(int64_t(i), start, start + shape[i] * steps[i], steps[i]);
    } else {  // the same positions walked backwards
      l = l.slice(int64_t(i), start + (shape[i] - 1) * steps[i],
                  start == 0 ? std::nullopt : std::optional<int64_t>(start - 1), -steps[i]);
    }
    if (rng() % 4 == 0) l = l.flip(int64_t(i));
  }
  if (std::find(bcast.begin(), bcast.end(), true) != bcast.end()) l = l.expand(shape);
  REQUIRE(to_vec(l.shape) == to_vec(shape));
  return l;
}

st::Shape random_shape(std::mt19937_64& rng) {
  const std::size_t r = rng() % 6;  // rank 0..5
  st::Shape s;
  for (std::size_t i = 0; i < r; ++i) s.push_back(int64_t(1 + rng() % 4));
  return s;
}

}  // namespace

TEST_CASE("make_plan merges dims", "[core]") {
  SECTION("contiguous rank 12 collapses to one dim") {
    const st::Shape shape{2, 1, 3, 2, 1, 2, 2, 1, 2, 3, 1, 2};
    const st::Layout l = st::Layout::contiguous(shape);
    const auto p = st::detail::make_plan<1>(shape, {&l});
    REQUIRE(to_vec(p.shape) == std::vector<int64_t>{576});
    REQUIRE(to_vec(p.strides[0]) == std::vector<int64_t>{1});
    REQUIRE(p.numel == 576);
    REQUIRE(walk1(l, 0, 576) == brute(l, 0, 576));
  }
  SECTION("a rank-9 all-2 shape permuted in reverse does not merge") {
    const st::Layout l = st::Layout::contiguous(st::Shape(std::size_t{9}, int64_t{2}))
                             .permute({8, 7, 6, 5, 4, 3, 2, 1, 0});
    const auto p = st::detail::make_plan<1>(l.shape, {&l});
    REQUIRE(to_vec(p.shape) == std::vector<int64_t>(9, 2));
    REQUIRE(to_vec(p.strides[0]) == std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256});
    REQUIRE(walk1(l, 0, 512) == brute(l, 0, 512));
    // Merging needs every operand: paired with a contiguous operand, still nine dims.
    const st::Layout c = st::Layout::contiguous(l.shape);
    const auto p2 = st::detail::make_plan<2>(l.shape, {&c, &l});
    REQUIRE(p2.shape.size() == 9);
  }
  SECTION("two operands merge only where both allow it") {
    // a: contiguous (2,3,4); b: rows of a wider (2,5,4) buffer, strides (20,4,1).
    const st::Layout a = st::Layout::contiguous({2, 3, 4});
    const st::Layout b = st::Layout::contiguous({2, 5, 4}).slice(1, 0, 3);
    const auto p = st::detail::make_plan<2>(a.shape, {&a, &b});
    REQUIRE(to_vec(p.shape) == std::vector<int64_t>{2, 12});
    REQUIRE(to_vec(p.strides[0]) == std::vector<int64_t>{12, 1});
    REQUIRE(to_vec(p.strides[1]) == std::vector<int64_t>{20, 1});
    // With b's first two dims transposed instead, (4,8,1), nothing merges.
    const st::Layout t = st::Layout::contiguous({3, 2, 4}).transpose(0, 1);
    const auto pt = st::detail::make_plan<2>(a.shape, {&a, &t});
    REQUIRE(to_vec(pt.shape) == std::vector<int64_t>{2, 3, 4});
    REQUIRE(to_vec(pt.strides[1]) == std::vector<int64_t>{4, 8, 1});
  }
  SECTION("size-1 dims are dropped") {
    const st::Layout l{{1, 3, 1, 4, 1}, {99, 4, -7, 1, 5}, 2};
    const auto p = st::detail::make_plan<1>(l.shape, {&l});
    REQUIRE(to_vec(p.shape) == std::vector<int64_t>{12});
    REQUIRE(to_vec(p.strides[0]) == std::vector<int64_t>{1});
    REQUIRE(p.offsets[0] == 2);
    const st::Layout t = st::Layout::contiguous({3, 1, 4}).transpose(0, 2);  // (4,1,3) (1,4,4)
    const auto pt = st::detail::make_plan<1>(t.shape, {&t});
    REQUIRE(to_vec(pt.shape) == std::vector<int64_t>{4, 3});
    REQUIRE(to_vec(pt.strides[0]) == std::vector<int64_t>{1, 4});
  }
  SECTION("flipped and broadcast dims merge when their strides line up") {
    const st::Layout f = st::Layout::contiguous({3, 4}).flip(0).flip(1);  // (-4,-1) offset 11
    const auto pf = st::detail::make_plan<1>(f.shape, {&f});
    REQUIRE(to_vec(pf.shape) == std::vector<int64_t>{12});
    REQUIRE(to_vec(pf.strides[0]) == std::vector<int64_t>{-1});
    REQUIRE(walk1(f, 0, 12) == std::vector<int64_t>{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
    const st::Layout b = st::Layout::contiguous({1}).expand({3, 4});  // (0,0)
    const auto pb = st::detail::make_plan<1>(b.shape, {&b});
    REQUIRE(to_vec(pb.shape) == std::vector<int64_t>{12});
    REQUIRE(to_vec(pb.strides[0]) == std::vector<int64_t>{0});
  }
  SECTION("rank 0 gives one element") {
    const st::Layout l{{}, {}, 5};
    const auto p = st::detail::make_plan<1>(l.shape, {&l});
    REQUIRE(p.numel == 1);
    int64_t blocks = 0;
    const auto w = walk(p, 0, 1, &blocks);
    REQUIRE(blocks == 1);
    REQUIRE(w[0] == std::vector<int64_t>{5});
    // All-size-1 shapes behave the same.
    const st::Layout ones{{1, 1, 1}, {3, 3, 3}, 4};
    const auto p1 = st::detail::make_plan<1>(ones.shape, {&ones});
    REQUIRE(p1.numel == 1);
    REQUIRE(walk(p1, 0, 1)[0] == std::vector<int64_t>{4});
  }
  SECTION("empty ranges call nothing") {
    const st::Layout l = st::Layout::contiguous({3, 4});
    const auto p = st::detail::make_plan<1>(l.shape, {&l});
    int64_t blocks = 0;
    walk(p, 5, 5, &blocks);
    walk(p, 7, 3, &blocks);
    REQUIRE(blocks == 0);
  }
}

TEST_CASE("for_each_block: the reference layouts", "[core]") {
  const st::Layout x = st::Layout::contiguous({2, 3, 4});
  SECTION("transpose(1,2) visits the listed sequence") {
    const std::vector<int64_t> expect = {0,  4,  8,  1,  5,  9,  2,  6,  10, 3,  7,  11,
                                         12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23};
    REQUIRE(walk1(x.transpose(1, 2), 0, 24) == expect);
  }
  SECTION("narrow(2,1,2): blocks of 2 starting at 1, 5, 9, 13, 17, 21") {
    const st::Layout v = x.slice(2, 1, 3);
    std::vector<int64_t> starts;
    const auto p = st::detail::make_plan<1>(v.shape, {&v});
    st::detail::for_each_block(
        p, 0, 12,
        [&](const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>& inner) {
          REQUIRE(n == 2);
          REQUIRE(inner[0] == 1);
          starts.push_back(off[0]);
        });
    REQUIRE(starts == std::vector<int64_t>{1, 5, 9, 13, 17, 21});
  }
  SECTION("narrow(1,1,2): two blocks of 8 at 4 and 16") {
    const st::Layout v = x.slice(1, 1, 3);
    std::vector<int64_t> starts;
    const auto p = st::detail::make_plan<1>(v.shape, {&v});
    st::detail::for_each_block(
        p, 0, 16, [&](const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>&) {
          REQUIRE(n == 8);
          starts.push_back(off[0]);
        });
    REQUIRE(starts == std::vector<int64_t>{4, 16});
  }
}

TEST_CASE("for_each_block matches brute-force offsets on random layouts", "[core]") {
  std::mt19937_64 rng(0x5eed);
  SECTION("one operand") {
    for (int trial = 0; trial < 400; ++trial) {
      const st::Shape shape = random_shape(rng);
      const st::Layout l = random_layout(shape, rng);
      const int64_t n = l.numel();
      const auto p = st::detail::make_plan<1>(shape, {&l});
      REQUIRE(p.numel == n);
      for (int r = 0; r < 4; ++r) {
        int64_t lo = int64_t(rng() % uint64_t(n + 1)), hi = int64_t(rng() % uint64_t(n + 1));
        if (lo > hi) std::swap(lo, hi);
        if (r == 0) lo = 0, hi = n;
        INFO("shape " << l.shape << " strides " << l.strides << " offset " << l.offset << " range ["
                      << lo << ", " << hi << ")");
        REQUIRE(walk(p, lo, hi)[0] == brute(l, lo, hi));
      }
    }
  }
  SECTION("two operands") {
    for (int trial = 0; trial < 400; ++trial) {
      const st::Shape shape = random_shape(rng);
      const st::Layout a = random_layout(shape, rng);
      const st::Layout b = random_layout(shape, rng);
      const int64_t n = a.numel();
      const auto p = st::detail::make_plan<2>(shape, {&a, &b});
      for (int r = 0; r < 4; ++r) {
        int64_t lo = int64_t(rng() % uint64_t(n + 1)), hi = int64_t(rng() % uint64_t(n + 1));
        if (lo > hi) std::swap(lo, hi);
        if (r == 0) lo = 0, hi = n;
        INFO("a strides " << a.strides << " offset " << a.offset << "; b strides " << b.strides
                          << " offset " << b.offset << "; shape " << shape << " range [" << lo
                          << ", " << hi << ")");
        const auto w = walk(p, lo, hi);
        REQUIRE(w[0] == brute(a, lo, hi));
        REQUIRE(w[1] == brute(b, lo, hi));
      }
    }
  }
  SECTION("rank 9 to 12 permuted") {
    for (int trial = 0; trial < 30; ++trial) {
      st::Shape shape;
      const std::size_t r = 9 + rng() % 4;
      for (std::size_t i = 0; i < r; ++i) shape.push_back(int64_t(1 + rng() % 2));
      const st::Layout a = random_layout(shape, rng);
      const st::Layout b = random_layout(shape, rng);
      const int64_t n = a.numel();
      const auto p = st::detail::make_plan<2>(shape, {&a, &b});
      int64_t lo = int64_t(rng() % uint64_t(n + 1)), hi = int64_t(rng() % uint64_t(n + 1));
      if (lo > hi) std::swap(lo, hi);
      const auto w = walk(p, lo, hi);
      REQUIRE(w[0] == brute(a, lo, hi));
      REQUIRE(w[1] == brute(b, lo, hi));
    }
  }
}
