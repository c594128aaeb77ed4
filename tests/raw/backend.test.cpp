// SPDX-License-Identifier: MIT
// raw/backend: the allocation and copy helpers a backend uses instead of the
// front end (detail::backend_empty, detail::backend_contiguous).
#include <catch2/catch.hpp>
#include <random>

#include "raw/backend.hpp"
#include "support/naive.hpp"

namespace st = strata;

TEST_CASE("backend helpers: scratch tensors and dense copies without the front end", "[raw]") {
  st::Backend& be = st::backend_for(st::testing::test_device());
  SECTION("backend_empty") {
    const st::RawTensor t = st::detail::backend_empty(be, {3, 4}, st::f64);
    CHECK(t.shape() == st::Shape{3, 4});
    CHECK(t.dtype() == st::f64);
    CHECK(t.is_contiguous());
    CHECK(t.storage()->bytes() >= 3 * 4 * sizeof(double));
    CHECK(st::detail::backend_empty(be, {0, 5}, st::i32).numel() == 0);
    CHECK_THROWS_AS(st::detail::backend_empty(be, {int64_t{1} << 62, 8}, st::f32), st::ValueError);
    // 2^61 elements fit in int64; their 2^64 bytes do not fit in size_t.
    CHECK_THROWS_WITH(st::detail::backend_empty(be, {int64_t{1} << 61}, st::f64),
                      Catch::Matchers::Contains("byte count of shape [2305843009213693952]"));
  }
  SECTION("backend_contiguous") {
    std::mt19937_64 rng(1729);
    for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
      for (st::DType dtype : {st::f32, st::i64, st::bool_}) {
        INFO(st::testing::layout_name(kind) << " " << dtype_name(dtype));
        const st::RawTensor x = st::testing::random_tensor({3, 2, 5}, dtype, kind, rng);
        const st::RawTensor d = st::detail::backend_contiguous(be, x);
        CHECK(d.is_contiguous());
        CHECK(d.shape() == x.shape());
        CHECK(d.dtype() == x.dtype());
        CHECK(st::testing::values(d) == st::testing::values(x));
        // A contiguous tensor is returned as it is, not copied.
        CHECK((d.storage() == x.storage()) == x.is_contiguous());
      }
    }
  }
}
