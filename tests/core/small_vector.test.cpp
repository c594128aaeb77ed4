// SPDX-License-Identifier: MIT
// core/small_vector.hpp: copies and moves keep the elements whether they live
// inline, on the heap, or on a heap the vector has shrunk back below N on;
// compared with std::vector after every step.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "core/small_vector.hpp"

namespace {

using Vec = strata::detail::SmallVec<int64_t, 4>;

std::vector<int64_t> as_std(const Vec& v) { return std::vector<int64_t>(v.begin(), v.end()); }

Vec filled(int64_t n, int64_t base) {
  Vec v;
  for (int64_t i = 0; i < n; ++i) v.push_back(base + 7 * i);
  return v;
}

}  // namespace

TEST_CASE("SmallVec copies and moves inline, heap and shrunk contents", "[core]") {
  for (const int64_t n : {0, 1, 3, 4, 5, 9}) {
    INFO("n = " << n);
    const Vec src = filled(n, 100 + n);
    const std::vector<int64_t> want = as_std(src);
    REQUIRE(int64_t(want.size()) == n);

    Vec copy(src);
    CHECK(as_std(copy) == want);
    copy.push_back(-1);  // the copy is independent of the source
    CHECK(as_std(src) == want);

    Vec moved(std::move(copy));
    std::vector<int64_t> want_moved = want;
    want_moved.push_back(-1);
    CHECK(as_std(moved) == want_moved);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from vector is empty

    // Copy-assignment over every kind of destination.
    for (const int64_t m : {0, 2, 6}) {
      Vec dst = filled(m, -50);
      dst = src;
      CHECK(as_std(dst) == want);
      Vec dst2 = filled(m, -60);
      dst2 = std::move(moved);
      CHECK(as_std(dst2) == want_moved);
      moved = dst2;  // restore for the next round
    }
  }
}

TEST_CASE("SmallVec grown past N and shrunk back copies from its heap", "[core]") {
  Vec v = filled(7, 3);  // on the heap
  v.resize(2);           // still on the heap, size <= N
  CHECK(as_std(v) == std::vector<int64_t>{3, 10});
  const Vec c(v);
  CHECK(as_std(c) == std::vector<int64_t>{3, 10});
  Vec a = filled(3, 1);
  a = v;
  CHECK(as_std(a) == std::vector<int64_t>{3, 10});
  Vec m(std::move(v));
  CHECK(as_std(m) == std::vector<int64_t>{3, 10});
  m.push_back(99);
  m.insert(0, 5);
  m.erase(1);
  CHECK(as_std(m) == std::vector<int64_t>{5, 10, 99});
  Vec self = filled(6, 2);
  const Vec& alias = self;
  self = alias;  // self-assignment keeps the contents
  CHECK(as_std(self) == as_std(filled(6, 2)));
}
