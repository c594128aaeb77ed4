// SPDX-License-Identifier: MIT
// raw::unary, raw::binary and raw::where against naive double-precision loops
// over multi-indices, on every layout kind of tests/support/naive.hpp (and
// negative-step slices), on scalars, size-0/size-1 dims and ranks 9 and 12.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/elementwise_ref.hpp"
#include "support/op_reference.hpp"

namespace st = strata;
namespace tt = strata::testing;
using st::BinaryOp;
using st::DType;
using st::RawTensor;
using st::Shape;
using st::UnaryOp;
using tt::dname;
using tt::kAllDTypes;
using tt::kInf;
using tt::kNaN;
using Idx = std::vector<int64_t>;

namespace {

// --- the reference: what each op means, in double precision -----------------

/// The dtypes an op table row admits (raw/primitives.hpp).
std::vector<DType> row_dtypes(st::DTypeClass cls) {
  std::vector<DType> out;
  for (DType t : kAllDTypes) {
    if (st::admits(cls, t)) out.push_back(t);
  }
  return out;
}

/// Float special values every float op sees besides the random ones.
const std::vector<double> kSpecials = {kNaN, kInf, -kInf, 0.0,   -0.0,   1e-30, -1e-30, 1.0,
                                       -1.0, 0.5,  -0.5,  100.0, -100.0, 1e30,  -1e30,  3.14159};

// --- sweeps ---------------------------------------------------------------------

void check_unary(UnaryOp op) {
  const std::string name(st::op_name(op));
  for (DType t : row_dtypes(st::op_info(op).dtypes)) {
    std::mt19937_64 rng(1000 + 10 * int(op) + int(t));
    for (const Shape& s : tt::sweep_shapes(11)) {
      for (const auto& v : tt::layout_variants(s)) {
        const RawTensor x = v.make(s, t, rng);
        const RawTensor y = st::raw::unary(op, x);
        INFO(name << " " << dname(t) << " shape " << s << " layout " << v.name);
        CHECK(y.storage() != x.storage());
        CHECK(tt::first_mismatch(y, s, t, [&](const Idx& i) {
                return tt::unary_reference(op).value(tt::get(x, i));
              }) == "");
      }
    }
    if (st::is_floating(t)) {
      const RawTensor sp = tt::make({int64_t(kSpecials.size())}, t, kSpecials);
      for (const RawTensor& x : {sp, sp.flip(0), sp.slice(0, 1, std::nullopt, 3)}) {
        INFO(name << " " << dname(t) << " special values, strides " << x.strides());
        CHECK(tt::first_mismatch(st::raw::unary(op, x), x.shape(), t, [&](const Idx& i) {
                return tt::unary_reference(op).value(tt::get(x, i));
              }) == "");
      }
    }
  }
}

/// Makes a and b for op: nonzero integer divisors, float ties (quantised) and NaNs.
void prepare_operands(BinaryOp op, DType t, const RawTensor& a, const RawTensor& b) {
  if (op == BinaryOp::div && st::is_integral(t)) tt::replace_zeros(b);
  if (st::is_floating(t)) {
    if (op != BinaryOp::pow) {
      tt::quantize(a);
      tt::quantize(b);
    }
    tt::sprinkle_nan(a, 11);
    tt::sprinkle_nan(b, 7, 3);
  }
}

void check_binary(BinaryOp op) {
  const std::string name(st::op_name(op));
  for (DType t : row_dtypes(st::op_info(op).dtypes)) {
    std::mt19937_64 rng(2000 + 10 * int(op) + int(t));
    const DType out_t = st::is_comparison(op) ? st::bool_ : t;
    for (const Shape& s : tt::sweep_shapes(12)) {
      const auto vars = tt::layout_variants(s);
      for (std::size_t k = 0; k < vars.size(); ++k) {
        for (std::size_t shift : {std::size_t(0), std::size_t(1)}) {  // same and mixed layouts
          const auto& va = vars[k];
          const auto& vb = vars[(k + shift) % vars.size()];
          const RawTensor a = va.make(s, t, rng);
          const RawTensor b = vb.make(s, t, rng);
          prepare_operands(op, t, a, b);
          const RawTensor y = st::raw::binary(op, a, b);
          INFO(name << " " << dname(t) << " shape " << s << " layouts " << va.name << ", "
                    << vb.name);
          CHECK(y.storage() != a.storage());
          CHECK(tt::first_mismatch(y, s, out_t, [&](const Idx& i) {
                  return tt::binary_ref(op, tt::get(a, i), tt::get(b, i), t);
                }) == "");
        }
      }
    }
  }
}

/// A shape of n dims, all of size 2.
Shape twos(int n) { return Shape(std::size_t(n), 2); }

}  // namespace

TEST_CASE("unary ops match a double-precision reference on every layout", "[raw]") {
  for (const auto& row : st::kUnaryOps) {
    DYNAMIC_SECTION(row.name) { check_unary(row.op); }
  }
}

TEST_CASE("binary ops match a double-precision reference on every layout", "[raw]") {
  for (const auto& row : st::kBinaryOps) {
    DYNAMIC_SECTION(row.name) { check_binary(row.op); }
  }
}

TEST_CASE("the op tables: names, NumPy equivalents and dtype classes", "[raw]") {
  // The enums and names come from one table; spot-check rows against their spelling.
  CHECK(st::op_name(UnaryOp::log1p) == "log1p");
  CHECK(st::op_info(UnaryOp::erf).numpy == "scipy.special.erf");
  CHECK(st::op_name(BinaryOp::logical_or) == "logical_or");
  CHECK(st::op_name(st::ReduceOp::argmin) == "argmin");
  for (const auto& row : st::kUnaryOps) {
    INFO(row.name);
    CHECK(row.numpy.find(row.name) != std::string_view::npos);  // "numpy.<name>" and kin
    for (DType t : kAllDTypes) {
      // The front end accepts exactly the dtypes of the row's class.
      const RawTensor x = st::raw::full({2}, 1.0, t);
      if (st::admits(row.dtypes, t)) {
        CHECK_NOTHROW(st::raw::unary(row.op, x));
      } else {
        CHECK_THROWS_AS(st::raw::unary(row.op, x), st::DTypeError);
      }
    }
  }
}

TEST_CASE("integer division by zero is rejected before any kernel runs", "[raw]") {
  for (DType t : {st::i32, st::i64}) {
    const RawTensor a = tt::make({3}, t, {7, -8, 9});
    const RawTensor b = tt::make({3}, t, {2, 0, -1});
    CHECK_THROWS_WITH(st::raw::binary(BinaryOp::div, a, b),
                      Catch::Contains("div") && Catch::Contains("integer division by zero"));
    // A zero in a broadcast divisor, and none at all.
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::div, a, st::raw::full({1}, 0.0, t).expand({3})),
                    st::ValueError);
    const RawTensor q = st::raw::binary(BinaryOp::div, a, tt::make({3}, t, {2, -3, -1}));
    CHECK(tt::first_mismatch(q, {3}, t, [](const Idx& i) {
            return std::vector<double>{3, 2, -9}[std::size_t(i[0])];
          }) == "");
  }
  // Float division by zero is IEEE: inf, no error.
  CHECK_NOTHROW(st::raw::binary(BinaryOp::div, st::raw::full({2}, 1.0, st::f32),
                                st::raw::full({2}, 0.0, st::f32)));
}

TEST_CASE("where matches a reference on every layout and dtype", "[raw]") {
  for (DType t : kAllDTypes) {
    DYNAMIC_SECTION("where " << dname(t)) {
      std::mt19937_64 rng(3000 + int(t));
      for (const Shape& s : tt::sweep_shapes(13)) {
        const auto vars = tt::layout_variants(s);
        for (std::size_t k = 0; k < vars.size(); ++k) {
          const RawTensor c = vars[k].make(s, st::bool_, rng);
          const RawTensor a = vars[(k + 1) % vars.size()].make(s, t, rng);
          const RawTensor b = vars[(k + 2) % vars.size()].make(s, t, rng);
          tt::sprinkle_nan(a, 5);
          const RawTensor y = st::raw::where(c, a, b);
          INFO("where " << dname(t) << " shape " << s << " cond layout " << vars[k].name);
          CHECK(tt::first_mismatch(y, s, t, [&](const Idx& i) {
                  return tt::get(c, i) != 0 ? tt::get(a, i) : tt::get(b, i);
                }) == "");
        }
      }
    }
  }
}

TEST_CASE("where with a broadcast scalar branch (relu and its derivative)", "[raw]") {
  // where(c, x, s) and where(c, s, x) with s one element expanded (stride 0):
  // the fast path, on sizes below and above the parallel grain.
  for (DType t : {st::f32, st::f64, st::i32, st::i64}) {
    std::mt19937_64 rng(3100 + int(t));
    for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{70001}}) {
      const RawTensor x = tt::random_tensor({n}, t, tt::LayoutKind::contiguous, rng);
      const RawTensor c = tt::random_tensor({n}, st::bool_, tt::LayoutKind::contiguous, rng);
      const RawTensor s = st::raw::full({1}, -2.5, t).expand({n});
      const RawTensor y1 = st::raw::where(c, x, s), y2 = st::raw::where(c, s, x);
      INFO(dname(t) << " n " << n);
      CHECK(tt::first_mismatch(y1, {n}, t, [&](const Idx& i) {
              return tt::get(c, i) != 0 ? tt::get(x, i) : tt::get(s, i);
            }) == "");
      CHECK(tt::first_mismatch(y2, {n}, t, [&](const Idx& i) {
              return tt::get(c, i) != 0 ? tt::get(s, i) : tt::get(x, i);
            }) == "");
    }
  }
}

TEST_CASE("rank-9 permuted and rank-12 contiguous add", "[raw]") {
  std::mt19937_64 rng(42);
  SECTION("rank 9, all dims 2, permutation reversed") {
    const Shape s = twos(9);
    const RawTensor base_a = tt::random_tensor(s, st::f64, tt::LayoutKind::contiguous, rng);
    const RawTensor base_b = tt::random_tensor(s, st::f64, tt::LayoutKind::contiguous, rng);
    const Shape rev = {8, 7, 6, 5, 4, 3, 2, 1, 0};
    const RawTensor a = base_a.permute(rev), b = base_b.permute(rev);
    REQUIRE_FALSE(a.is_contiguous());
    auto reversed = [](const Idx& i) { return Idx(i.rbegin(), i.rend()); };
    // Both permuted, and permuted + contiguous (the permuted base read in order).
    CHECK(tt::first_mismatch(st::raw::binary(BinaryOp::add, a, b), s, st::f64, [&](const Idx& i) {
            return tt::get(base_a, reversed(i)) + tt::get(base_b, reversed(i));
          }) == "");
    CHECK(tt::first_mismatch(st::raw::binary(BinaryOp::add, a, base_b), s, st::f64,
                             [&](const Idx& i) {
                               return tt::get(base_a, reversed(i)) + tt::get(base_b, i);
                             }) == "");
    // The same on i32, where the answer is exact.
    const RawTensor ia = tt::random_tensor(s, st::i32, tt::LayoutKind::contiguous, rng);
    CHECK(tt::first_mismatch(
              st::raw::binary(BinaryOp::add, ia.permute(rev), ia), s, st::i32,
              [&](const Idx& i) { return tt::get(ia, reversed(i)) + tt::get(ia, i); }) == "");
  }
  SECTION("rank 12, contiguous") {
    const Shape s = {2, 1, 3, 2, 1, 2, 2, 1, 2, 3, 1, 2};
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    const auto va = tt::random_values(n, st::f32, rng), vb = tt::random_values(n, st::f32, rng);
    const RawTensor y =
        st::raw::binary(BinaryOp::add, tt::make(s, st::f32, va), tt::make(s, st::f32, vb));
    REQUIRE(y.shape() == s);
    REQUIRE(y.ndim() == 12);
    int64_t flat = 0;
    bool ok = true;
    tt::for_each_index(s, [&](const Idx& i) {
      ok = ok && tt::get(y, i) == double(float(va[std::size_t(flat)] + vb[std::size_t(flat)]));
      ++flat;
    });
    CHECK(ok);
    CHECK(flat == n);
  }
}

TEST_CASE("elementwise ops on large strided tensors (parallel path)", "[raw]") {
  std::mt19937_64 rng(7);
  // 2^17 elements: above the kernels' grain, so several threads take part.
  const RawTensor base = tt::random_tensor({256, 512}, st::f32, tt::LayoutKind::contiguous, rng);
  const RawTensor a = base.transpose(0, 1);  // [512, 256], permuted
  const RawTensor b = tt::random_tensor({512, 256}, st::f32, tt::LayoutKind::flipped, rng);
  SECTION("mul") {
    CHECK(tt::first_mismatch(st::raw::binary(BinaryOp::mul, a, b), {512, 256}, st::f32,
                             [&](const Idx& i) { return tt::get(a, i) * tt::get(b, i); }) == "");
  }
  SECTION("tanh") {
    CHECK(tt::first_mismatch(st::raw::unary(UnaryOp::tanh, a), {512, 256}, st::f32,
                             [&](const Idx& i) { return std::tanh(tt::get(a, i)); }) == "");
  }
  SECTION("where") {
    const RawTensor c = st::raw::binary(BinaryOp::gt, a, b);
    CHECK(tt::first_mismatch(st::raw::where(c, a, b), {512, 256}, st::f32, [&](const Idx& i) {
            return std::max(tt::get(a, i), tt::get(b, i));
          }) == "");
  }
  SECTION("integer division by zero deep inside a parallel kernel throws") {
    const RawTensor n = st::raw::full({1 << 17}, 5, st::i64);
    const RawTensor host = st::raw::full({1 << 17}, 2, st::i64, st::Device::cpu());
    static_cast<int64_t*>(host.storage()->data())[(1 << 17) - 3] = 0;
    const RawTensor d = st::raw::to_device(host, tt::test_device());
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::div, n, d), st::ValueError);
  }
}

TEST_CASE("integer semantics: truncation, wrapping, division by zero", "[raw]") {
  SECTION("div truncates toward zero") {
    for (DType t : {st::i32, st::i64}) {
      const RawTensor a = tt::make({6}, t, {7, -7, 7, -7, 0, 9});
      const RawTensor b = tt::make({6}, t, {2, 2, -2, -2, 3, -4});
      CHECK(tt::values(st::raw::binary(BinaryOp::div, a, b)) ==
            std::vector<double>{3, -3, -3, 3, 0, -2});
    }
  }
  SECTION("div by zero throws ValueError") {
    for (DType t : {st::i32, st::i64}) {
      const RawTensor a = tt::make({3}, t, {1, 2, 3});
      const RawTensor b = tt::make({3}, t, {1, 0, 1});
      CHECK_THROWS_AS(st::raw::binary(BinaryOp::div, a, b), st::ValueError);
      CHECK_THROWS_WITH(st::raw::binary(BinaryOp::div, a, b), Catch::Contains("div"));
      CHECK_THROWS_WITH(st::raw::binary(BinaryOp::div, a, b), Catch::Contains("zero"));
    }
  }
  SECTION("float div by zero is IEEE") {
    const RawTensor a = tt::make({3}, st::f32, {1, -1, 0});
    const RawTensor b = tt::make({3}, st::f32, {0, 0, 0});
    const auto v = tt::values(st::raw::binary(BinaryOp::div, a, b));
    CHECK(v[0] == kInf);
    CHECK(v[1] == -kInf);
    CHECK(std::isnan(v[2]));
  }
  SECTION("add INT32_MAX + 1 wraps to INT32_MIN") {
    const RawTensor a = tt::make_int({2}, st::i32, {INT32_MAX, INT32_MIN});
    const RawTensor b = tt::make_int({2}, st::i32, {1, -1});
    const RawTensor y = st::raw::binary(BinaryOp::add, a, b);
    CHECK(tt::to_cpu(y).data<int32_t>()[0] == INT32_MIN);
    CHECK(tt::to_cpu(y).data<int32_t>()[1] == INT32_MAX);
    const RawTensor z = st::raw::binary(BinaryOp::add, tt::make_int({1}, st::i64, {INT64_MAX}),
                                        tt::make_int({1}, st::i64, {1}));
    CHECK(tt::to_cpu(z).data<int64_t>()[0] == INT64_MIN);
  }
  SECTION("add, sub and mul wrap on full-range values") {
    std::mt19937_64 rng(99);
    for (DType t : {st::i32, st::i64}) {
      const int64_t n = 257;
      std::vector<int64_t> va(n), vb(n);
      for (int64_t i = 0; i < n; ++i) {
        va[std::size_t(i)] = t == st::i32 ? int64_t(int32_t(uint32_t(rng()))) : int64_t(rng());
        vb[std::size_t(i)] = t == st::i32 ? int64_t(int32_t(uint32_t(rng()))) : int64_t(rng());
      }
      const RawTensor a = tt::make_int({n}, t, va), b = tt::make_int({n}, t, vb);
      for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul}) {
        const RawTensor y = st::raw::binary(op, a, b);
        for (int64_t i = 0; i < n; ++i) {
          // Two's-complement reference in unsigned arithmetic (no signed overflow).
          const uint64_t x = uint64_t(va[std::size_t(i)]), z = uint64_t(vb[std::size_t(i)]);
          const uint64_t r = op == BinaryOp::add ? x + z : op == BinaryOp::sub ? x - z : x * z;
          const int64_t want = t == st::i32 ? int64_t(int32_t(uint32_t(r))) : int64_t(r);
          const int64_t got = tt::get_int(y, {i});
          if (got != want) {
            INFO(st::op_name(op) << " " << dname(t) << " " << va[std::size_t(i)] << ", "
                                 << vb[std::size_t(i)]);
            CHECK(got == want);
          }
        }
      }
    }
  }
  SECTION("neg, abs and MIN / -1 wrap; sign of extremes") {
    const RawTensor a = tt::make_int({4}, st::i32, {INT32_MIN, INT32_MAX, -5, 0});
    CHECK(tt::values(st::raw::unary(UnaryOp::neg, a)) ==
          std::vector<double>{INT32_MIN, -double(INT32_MAX), 5, 0});
    CHECK(tt::values(st::raw::unary(UnaryOp::abs, a)) ==
          std::vector<double>{INT32_MIN, INT32_MAX, 5, 0});
    CHECK(tt::values(st::raw::unary(UnaryOp::sign, a)) == std::vector<double>{-1, 1, -1, 0});
    const RawTensor m = tt::make_int({2}, st::i64, {INT64_MIN, INT64_MAX});
    const RawTensor y = st::raw::binary(BinaryOp::div, m, tt::make_int({2}, st::i64, {-1, -1}));
    CHECK(tt::get_int(y, {0}) == INT64_MIN);
    CHECK(tt::get_int(y, {1}) == -INT64_MAX);
  }
  SECTION("comparisons of i64 beyond 2^53 are exact") {
    const int64_t big = (int64_t{1} << 60) + 1;
    const RawTensor a = tt::make_int({2}, st::i64, {big, big});
    const RawTensor b = tt::make_int({2}, st::i64, {big - 1, big});
    CHECK(tt::values(st::raw::binary(BinaryOp::eq, a, b)) == std::vector<double>{0, 1});
    CHECK(tt::values(st::raw::binary(BinaryOp::gt, a, b)) == std::vector<double>{1, 0});
  }
}

TEST_CASE("NaN semantics of float elementwise ops", "[raw]") {
  for (DType t : {st::f32, st::f64}) {
    DYNAMIC_SECTION("maximum and minimum propagate NaN, " << dname(t)) {
      const RawTensor a = tt::make({5}, t, {kNaN, 1, kNaN, -kInf, 2});
      const RawTensor b = tt::make({5}, t, {1, kNaN, kNaN, 2, -3});
      for (BinaryOp op : {BinaryOp::maximum, BinaryOp::minimum}) {
        const auto v = tt::values(st::raw::binary(op, a, b));
        CHECK(std::isnan(v[0]));
        CHECK(std::isnan(v[1]));
        CHECK(std::isnan(v[2]));
        CHECK(v[3] == (op == BinaryOp::maximum ? 2 : -kInf));
        CHECK(v[4] == (op == BinaryOp::maximum ? 2 : -3));
      }
    }
    DYNAMIC_SECTION("sign(NaN) is NaN, " << dname(t)) {
      const auto v =
          tt::values(st::raw::unary(UnaryOp::sign, tt::make({4}, t, {kNaN, -kInf, 0, kInf})));
      CHECK(std::isnan(v[0]));
      CHECK(v[1] == -1);
      CHECK(v[2] == 0);
      CHECK(v[3] == 1);
    }
    DYNAMIC_SECTION("comparisons with NaN, " << dname(t)) {
      const RawTensor a = tt::make({1}, t, {kNaN});
      CHECK(tt::values(st::raw::binary(BinaryOp::eq, a, a)) == std::vector<double>{0});
      CHECK(tt::values(st::raw::binary(BinaryOp::ne, a, a)) == std::vector<double>{1});
      for (BinaryOp op : {BinaryOp::lt, BinaryOp::le, BinaryOp::gt, BinaryOp::ge}) {
        CHECK(tt::values(st::raw::binary(op, a, a)) == std::vector<double>{0});
      }
    }
  }
}

TEST_CASE("elementwise results: dtypes, fresh storage, inputs untouched", "[raw]") {
  std::mt19937_64 rng(5);
  const RawTensor a = tt::random_tensor({3, 4}, st::f64, tt::LayoutKind::permuted, rng);
  const RawTensor b = tt::random_tensor({3, 4}, st::f64, tt::LayoutKind::sliced, rng);
  const auto va = tt::values(a), vb = tt::values(b);
  SECTION("binary") {
    const RawTensor y = st::raw::binary(BinaryOp::add, a, b);
    CHECK(y.dtype() == st::f64);
    CHECK(y.is_contiguous());
    CHECK(st::raw::binary(BinaryOp::lt, a, b).dtype() == st::bool_);
    CHECK(tt::values(a) == va);
    CHECK(tt::values(b) == vb);
  }
  SECTION("unary") {
    const RawTensor y = st::raw::unary(UnaryOp::exp, a);
    CHECK(y.dtype() == st::f64);
    CHECK(y.storage() != a.storage());
    CHECK(tt::values(a) == va);
  }
  SECTION("where") {
    const RawTensor c = st::raw::binary(BinaryOp::lt, a, b);
    const RawTensor y = st::raw::where(c, a, b);
    CHECK(y.dtype() == st::f64);
    CHECK(y.storage() != a.storage());
    CHECK(y.storage() != b.storage());
  }
  SECTION("binary with the same tensor as both operands") {
    CHECK(tt::first_mismatch(st::raw::binary(BinaryOp::sub, a, a), {3, 4}, st::f64,
                             [](const Idx&) { return 0.0; }) == "");
  }
}

TEST_CASE("safe_mul and safe_div with zeros, infinities and NaNs on large operands of any layout",
          "[raw]") {
  // The contiguous same-shape path (vmath's product kernels, threads over blocks, with the
  // finiteness check fused) against the reference, with zeros, infinities and NaNs placed
  // at the start, at block edges and at the end, and with none at all.
  const int64_t n = 3 * (int64_t{1} << 15) + 37;
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> normal(0.0, 3.0);
  for (DType t : {st::f32, st::f64}) {
    for (BinaryOp op : {BinaryOp::safe_mul, BinaryOp::safe_div}) {
      for (bool specials : {false, true}) {
        DYNAMIC_SECTION(st::op_name(op)
                        << ", " << dname(t) << (specials ? ", with specials" : "")) {
          std::vector<double> av(static_cast<std::size_t>(n)), bv(static_cast<std::size_t>(n));
          for (std::size_t i = 0; i < av.size(); ++i) av[i] = normal(rng), bv[i] = normal(rng);
          if (specials) {
            const std::vector<std::pair<double, double>> cases = {
                {0, kInf}, {kInf, 0}, {0, 0}, {1.5, 0}, {kNaN, 2}, {-kInf, -2}, {0, kNaN}};
            const std::vector<int64_t> at = {0,     (int64_t{1} << 15) - 1,     int64_t{1} << 15,
                                             40000, 2 * (int64_t{1} << 15) + 1, n - 2,
                                             n - 1};
            for (std::size_t c = 0; c < cases.size(); ++c) {
              av[std::size_t(at[c])] = cases[c].first, bv[std::size_t(at[c])] = cases[c].second;
            }
          }
          // Count of elements differing from the reference (NaN matching NaN).
          auto wrong = [&](const RawTensor& a, const RawTensor& b) {
            const std::vector<double> got = tt::values(st::raw::binary(op, a, b));
            const std::vector<double> an = tt::values(a), bn = tt::values(b);  // rounded to t
            int64_t count = 0;
            for (std::size_t i = 0; i < got.size(); ++i) {
              double want = tt::binary_ref(op, an[i], bn[i], t);
              if (t == st::f32) want = double(float(want));
              const bool same = std::isnan(want) ? std::isnan(got[i]) : got[i] == want;
              if (!same && count++ < 5) {
                UNSCOPED_INFO("at " << i << ": " << an[i] << ", " << bn[i] << " gave " << got[i]
                                    << ", want " << want);
              }
            }
            return count;
          };
          // Contiguous and same shape: the kernels on whole blocks.
          CHECK(wrong(tt::make({n}, t, av), tt::make({n}, t, bv)) == 0);
          // A transposed view times a row broadcast over it: staged blocks and stride 0.
          const int64_t rows = 97, cols = 1013;
          const RawTensor at =
              tt::make({cols, rows}, t, {av.begin(), av.begin() + rows * cols}).permute({1, 0});
          const RawTensor row =
              tt::make({cols}, t, {bv.end() - cols, bv.end()}).expand({rows, cols});
          CHECK(wrong(at, row) == 0);
          CHECK(wrong(row, at) == 0);
          // Both transposed: one staged, the other read with its wide stride (a plain loop).
          const RawTensor bt =
              tt::make({cols, rows}, t, {bv.begin(), bv.begin() + rows * cols}).permute({1, 0});
          CHECK(wrong(at, bt) == 0);
          // A contiguous matrix and one value per row broadcast along it: stride-0 blocks.
          const RawTensor m = tt::make({rows, cols}, t, {bv.begin(), bv.begin() + rows * cols});
          const RawTensor col =
              tt::make({rows, 1}, t, {av.end() - rows, av.end()}).expand({rows, cols});
          CHECK(wrong(m, col) == 0);
          CHECK(wrong(col, m) == 0);
        }
      }
    }
  }
}
