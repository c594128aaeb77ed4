// SPDX-License-Identifier: MIT
// raw::index_select (gather) and raw::index_add (scatter-add) against naive
// loops over multi-indices, on every layout of the input, source and index.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/naive.hpp"
#include "support/reduce_ref.hpp"

namespace st = strata;

namespace {

using st::testing::get;
using st::testing::get_int;

/// Shape of x with axis replaced by the index's dims.
st::Shape replaced(const st::Shape& x, int64_t axis, const st::Shape& idx) {
  st::Shape s;
  for (int64_t d = 0; d < axis; ++d) s.push_back(x[std::size_t(d)]);
  for (int64_t d : idx) s.push_back(d);
  for (int64_t d = axis + 1; d < x.ndim(); ++d) s.push_back(x[std::size_t(d)]);
  return s;
}

/// For an index into [P..., idx dims..., Q...]: the matching index into x [P..., A, Q...].
std::vector<int64_t> source_position(const std::vector<int64_t>& out_idx, int64_t axis,
                                     const st::RawTensor& idx, int64_t size) {
  const std::size_t a = std::size_t(axis), r = std::size_t(idx.ndim());
  const std::vector<int64_t> j(out_idx.begin() + std::ptrdiff_t(a),
                               out_idx.begin() + std::ptrdiff_t(a + r));
  int64_t v = get_int(idx, j);
  if (v < 0) v += size;
  std::vector<int64_t> x_idx(out_idx.begin(), out_idx.begin() + std::ptrdiff_t(a));
  x_idx.push_back(v);
  x_idx.insert(x_idx.end(), out_idx.begin() + std::ptrdiff_t(a + r), out_idx.end());
  return x_idx;
}

/// A random index tensor of `shape` with entries in [-size, size), laid out
/// contiguously or (layout = 1) reversed-permuted or (layout = 2) flipped.
st::RawTensor random_index(const st::Shape& shape, st::DType dtype, int64_t size, int layout,
                           std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> pick(-size, size - 1);
  st::Shape base = shape;
  if (layout == 1) std::reverse(base.begin(), base.end());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double(pick(rng)));
  st::RawTensor t = st::testing::make(base, dtype, v);
  if (layout == 1) {
    st::Shape perm;
    for (int64_t d = shape.ndim(); d-- > 0;) perm.push_back(d);
    t = t.permute(perm);
  } else if (layout == 2) {
    for (int64_t d = 0; d < shape.ndim(); ++d) t = t.flip(d);
  }
  return t;
}

/// Compares index_select(x, axis, idx) with a naive gather; "" when they agree.
std::string check_select(const st::RawTensor& x, int64_t axis, const st::RawTensor& idx) {
  std::ostringstream os;
  os << "index_select " << dtype_name(x.dtype()) << " " << x.shape() << " strides " << x.strides()
     << " axis " << axis << " idx " << dtype_name(idx.dtype()) << " " << idx.shape() << " strides "
     << idx.strides() << ": ";
  const st::RawTensor out = st::raw::index_select(x, axis, idx);
  const int64_t a = axis < 0 ? axis + x.ndim() : axis;
  const st::Shape want_shape = replaced(x.shape(), a, idx.shape());
  if (out.shape() != want_shape || out.dtype() != x.dtype()) {
    os << "shape " << out.shape() << " dtype " << dtype_name(out.dtype()) << ", expected "
       << want_shape;
    return os.str();
  }
  std::string bad;
  st::testing::for_each_index(want_shape, [&](const std::vector<int64_t>& o) {
    if (!bad.empty()) return;
    const auto xi = source_position(o, a, idx, x.shape()[std::size_t(a)]);
    if (get_int(out, o) != get_int(x, xi) || get(out, o) != get(x, xi)) {
      os << "element " << st::Shape(o) << " is " << get(out, o) << ", expected x" << st::Shape(xi)
         << " = " << get(x, xi);
      bad = os.str();
    }
  });
  return bad;
}

/// Compares index_add(x, axis, idx, src) with a naive scatter-add done in the
/// element type, x first and then src in row-major order (the order in which
/// repeated indices accumulate); "" when they agree exactly.
std::string check_add(const st::RawTensor& x, int64_t axis, const st::RawTensor& idx,
                      const st::RawTensor& src) {
  std::ostringstream os;
  os << "index_add " << dtype_name(x.dtype()) << " " << x.shape() << " strides " << x.strides()
     << " axis " << axis << " idx " << idx.shape() << " strides " << idx.strides()
     << " src strides " << src.strides() << ": ";
  const std::vector<double> x_before = st::testing::values(x);
  const st::RawTensor out = st::raw::index_add(x, axis, idx, src);
  if (out.shape() != x.shape() || out.dtype() != x.dtype()) {
    os << "shape " << out.shape() << " dtype " << dtype_name(out.dtype());
    return os.str();
  }
  const int64_t a = axis < 0 ? axis + x.ndim() : axis;
  const st::Strides dense = st::contiguous_strides(x.shape());
  std::vector<double> want = x_before;
  std::vector<int64_t> want_int;
  for (double v : x_before) want_int.push_back(int64_t(v));
  st::testing::for_each_index(src.shape(), [&](const std::vector<int64_t>& s) {
    const auto xi = source_position(s, a, idx, x.shape()[std::size_t(a)]);
    std::size_t flat = 0;
    for (std::size_t d = 0; d < xi.size(); ++d) flat += std::size_t(xi[d] * dense[d]);
    switch (x.dtype()) {
      case st::DType::f32:
        want[flat] = double(float(want[flat]) + float(get(src, s)));
        break;
      case st::DType::f64:
        want[flat] += get(src, s);
        break;
      default:
        want_int[flat] += get_int(src, s);
        break;  // small test values: no overflow
    }
  });
  std::string bad;
  std::size_t i = 0;
  st::testing::for_each_index(x.shape(), [&](const std::vector<int64_t>& o) {
    if (bad.empty()) {
      const bool ok =
          st::is_floating(x.dtype()) ? get(out, o) == want[i] : get_int(out, o) == want_int[i];
      if (!ok) {
        os.precision(17);
        os << "element " << st::Shape(o) << " is " << get(out, o) << ", expected "
           << (st::is_floating(x.dtype()) ? want[i] : double(want_int[i]));
        bad = os.str();
      }
    }
    ++i;
  });
  if (bad.empty() && st::testing::values(x) != x_before) bad = os.str() + "the input changed";
  return bad;
}

const st::Shape kIndexShapes[] = {{}, {5}, {2, 3}, {0}};
constexpr st::DType kAll[] = {st::f32, st::f64, st::i32, st::i64, st::bool_};
constexpr st::DType kNumeric[] = {st::f32, st::f64, st::i32, st::i64};

}  // namespace

TEST_CASE("index_select and index_add: every axis, layout and index shape", "[raw]") {
  std::mt19937_64 rng(31337);
  const st::Shape shapes[] = {{4, 5, 6}, {3, 1, 4}};
  SECTION("index_select") {
    for (const st::Shape& shape : shapes) {
      for (int64_t axis = 0; axis < 3; ++axis) {
        const int64_t size = shape[std::size_t(axis)];
        for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
          for (st::DType dtype : kAll) {
            const st::RawTensor x = st::testing::random_tensor(shape, dtype, kind, rng);
            for (const st::Shape& is : kIndexShapes) {
              for (st::DType idt : {st::i32, st::i64}) {
                const st::RawTensor idx =
                    random_index(is, idt, size, int(axis + int(idt == st::i64)) % 3, rng);
                INFO("layout " << st::testing::layout_name(kind));
                CHECK(check_select(x, axis, idx) == "");
                CHECK(check_select(x, axis - 3, idx) == "");  // negative axis
              }
            }
          }
        }
      }
    }
  }
  SECTION("index_add") {
    for (const st::Shape& shape : shapes) {
      for (int64_t axis = 0; axis < 3; ++axis) {
        const int64_t size = shape[std::size_t(axis)];
        for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
          for (st::DType dtype : kNumeric) {
            const st::RawTensor x = st::testing::random_tensor(shape, dtype, kind, rng);
            for (const st::Shape& is : kIndexShapes) {
              for (st::DType idt : {st::i32, st::i64}) {
                const st::RawTensor idx =
                    random_index(is, idt, size, int(axis + int(idt == st::i32)) % 3, rng);
                const st::Shape src_shape = replaced(shape, axis, is);
                for (st::testing::LayoutKind sk : {st::testing::LayoutKind::contiguous, kind}) {
                  const st::RawTensor src = st::testing::random_tensor(src_shape, dtype, sk, rng);
                  INFO("layout " << st::testing::layout_name(kind) << ", source "
                                 << st::testing::layout_name(sk));
                  CHECK(check_add(x, axis, idx, src) == "");
                  CHECK(check_add(x, axis - 3, idx, src) == "");
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("index_select and index_add: small cases by hand", "[raw]") {
  // x = [[0, 1, 2], [10, 11, 12], [20, 21, 22], [30, 31, 32]]
  const st::RawTensor x =
      st::testing::make({4, 3}, st::f64, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  SECTION("index_select") {
    const st::RawTensor i = st::testing::make({3}, st::i64, {2, -1, 0});
    CHECK(st::testing::values(st::raw::index_select(x, 0, i)) ==
          std::vector<double>{20, 21, 22, 30, 31, 32, 0, 1, 2});
    CHECK(st::testing::values(st::raw::index_select(x, 1, i)) ==
          std::vector<double>{2, 2, 0, 12, 12, 10, 22, 22, 20, 32, 32, 30});
    // A scalar index removes the axis.
    const st::RawTensor s = st::raw::index_select(x, -1, st::testing::make({}, st::i32, {-2}));
    CHECK(s.shape() == st::Shape{4});
    CHECK(st::testing::values(s) == std::vector<double>{1, 11, 21, 31});
    // A [2, 2] index on axis 0 gives [2, 2, 3].
    const st::RawTensor m =
        st::raw::index_select(x, 0, st::testing::make({2, 2}, st::i32, {3, 3, -4, 1}));
    CHECK(m.shape() == st::Shape{2, 2, 3});
    CHECK(st::testing::values(m) ==
          std::vector<double>{30, 31, 32, 30, 31, 32, 0, 1, 2, 10, 11, 12});
    // Rank 1 with a scalar index gives rank 0.
    const st::RawTensor r0 = st::raw::index_select(st::testing::make({3}, st::i64, {7, 8, 9}), 0,
                                                   st::testing::make({}, st::i64, {1}));
    CHECK(r0.shape() == st::Shape{});
    CHECK(st::testing::get_int(r0, {}) == 8);
  }
  SECTION("index_add") {
    // Repeated indices accumulate: three contributions to row 1.
    const st::RawTensor idx = st::testing::make({4}, st::i64, {1, 1, 1, 0});
    const st::RawTensor src =
        st::testing::make({4, 3}, st::f64, {1, 2, 3, 10, 20, 30, 100, 200, 300, 5, 5, 5});
    const st::RawTensor y = st::raw::index_add(x, 0, idx, src);
    CHECK(st::testing::values(y) ==
          std::vector<double>{5, 6, 7, 121, 233, 345, 20, 21, 22, 30, 31, 32});
    // The same with negative indices (-3 is row 1) and i32 values.
    const st::RawTensor xi =
        st::testing::make({4, 3}, st::i32, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
    const st::RawTensor si =
        st::testing::make({4, 3}, st::i32, {1, 2, 3, 10, 20, 30, 100, 200, 300, 5, 5, 5});
    const st::RawTensor yi =
        st::raw::index_add(xi, 0, st::testing::make({4}, st::i32, {-3, 1, -3, -4}), si);
    CHECK(yi.dtype() == st::i32);
    CHECK(st::testing::values(yi) ==
          std::vector<double>{5, 6, 7, 121, 233, 345, 20, 21, 22, 30, 31, 32});
    // Along axis 1 with a scalar index: src has the axis removed.
    const st::RawTensor y1 = st::raw::index_add(x, 1, st::testing::make({}, st::i64, {2}),
                                                st::testing::make({4}, st::f64, {1, 1, 1, 1}));
    CHECK(st::testing::values(y1) ==
          std::vector<double>{0, 1, 3, 10, 11, 13, 20, 21, 23, 30, 31, 33});
    // x itself is unchanged.
    CHECK(st::testing::values(x) ==
          std::vector<double>{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  }
}

TEST_CASE("index_select and index_add: size-0 dims, rank 9 and rank 12", "[raw]") {
  std::mt19937_64 rng(404);
  SECTION("index_select") {
    // Empty other axes with a non-empty index.
    const st::RawTensor e = st::raw::index_select(st::raw::empty({0, 3}, st::f32), 1,
                                                  st::testing::make({2}, st::i64, {0, 2}));
    CHECK(e.shape() == st::Shape{0, 2});
    const st::RawTensor e2 = st::raw::index_select(
        st::raw::empty({3, 0}, st::i32), 0, st::testing::make({2, 2}, st::i32, {0, 2, 1, -1}));
    CHECK(e2.shape() == st::Shape{2, 2, 0});
    // An empty index on an empty axis.
    const st::RawTensor e3 =
        st::raw::index_select(st::raw::empty({2, 0}, st::f64), 1, st::raw::empty({0}, st::i64));
    CHECK(e3.shape() == st::Shape{2, 0});
    // Rank 9 and rank 12 inputs on a middle axis.
    for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
      const st::RawTensor x9 =
          st::testing::random_tensor_lean({2, 1, 3, 2, 3, 1, 2, 1, 2}, st::f64, kind, rng);
      CHECK(check_select(x9, 4, random_index({2, 2}, st::i64, 3, 1, rng)) == "");
      CHECK(check_select(x9, -1, random_index({3}, st::i32, 2, 0, rng)) == "");
      const st::RawTensor x12 =
          st::testing::random_tensor_lean({2, 1, 2, 1, 2, 3, 1, 2, 1, 2, 1, 2}, st::i64, kind, rng);
      CHECK(check_select(x12, 5, random_index({4}, st::i64, 3, 2, rng)) == "");
      CHECK(check_select(x12, 0, random_index({}, st::i32, 2, 0, rng)) == "");
    }
  }
  SECTION("index_add") {
    const st::RawTensor e = st::raw::index_add(st::raw::empty({0, 3}, st::f32), 1,
                                               st::testing::make({2}, st::i64, {0, 2}),
                                               st::raw::empty({0, 2}, st::f32));
    CHECK(e.shape() == st::Shape{0, 3});
    const st::RawTensor e2 = st::raw::index_add(st::raw::empty({3, 0}, st::i64), 0,
                                                st::testing::make({3}, st::i32, {1, 1, -1}),
                                                st::raw::empty({3, 0}, st::i64));
    CHECK(e2.shape() == st::Shape{3, 0});
    // An empty index adds nothing.
    const st::RawTensor x =
        st::testing::random_tensor_lean({3, 4}, st::f32, st::testing::LayoutKind::flipped, rng);
    const st::RawTensor same =
        st::raw::index_add(x, 0, st::raw::empty({0}, st::i64), st::raw::empty({0, 4}, st::f32));
    CHECK(st::testing::values(same) == st::testing::values(x));
    for (st::testing::LayoutKind kind : st::testing::kAllLayouts) {
      const st::Shape s9{2, 1, 3, 2, 3, 1, 2, 1, 2};
      const st::RawTensor x9 = st::testing::random_tensor_lean(s9, st::f64, kind, rng);
      const st::RawTensor i9 = random_index({2, 2}, st::i64, 3, 1, rng);
      CHECK(check_add(x9, 4, i9,
                      st::testing::random_tensor_lean(replaced(s9, 4, {2, 2}), st::f64, kind,
                                                      rng)) == "");
      const st::Shape s12{2, 1, 2, 1, 2, 3, 1, 2, 1, 2, 1, 2};
      const st::RawTensor x12 = st::testing::random_tensor_lean(s12, st::i64, kind, rng);
      const st::RawTensor i12 = random_index({5}, st::i32, 3, 2, rng);
      CHECK(check_add(x12, 5, i12,
                      st::testing::random_tensor_lean(replaced(s12, 5, {5}), st::i64, kind, rng)) ==
            "");
    }
  }
}

TEST_CASE("index_select and index_add: large enough to run in parallel", "[raw]") {
  std::mt19937_64 rng(65536);
  SECTION("index_select") {
    // Many indices into short rows: split over the indices.
    const st::RawTensor x =
        st::testing::random_tensor({1000, 3}, st::f32, st::testing::LayoutKind::flipped, rng);
    CHECK(check_select(x, 0, random_index({50000}, st::i64, 1000, 0, rng)) == "");
    CHECK(check_select(x.transpose(0, 1), 1, random_index({250, 200}, st::i32, 1000, 1, rng)) ==
          "");
  }
  SECTION("index_add") {
    // Long rows, few (repeated) indices: split over the rows, indices in order.
    const st::RawTensor x =
        st::testing::random_tensor({5, 70000}, st::f32, st::testing::LayoutKind::contiguous, rng);
    const st::RawTensor idx = st::testing::make({7}, st::i64, {1, 4, 1, -4, 0, 1, 4});
    const st::RawTensor src =
        st::testing::random_tensor({7, 70000}, st::f32, st::testing::LayoutKind::permuted, rng);
    CHECK(check_add(x, 0, idx, src) == "");
    const st::RawTensor xi =
        st::testing::random_tensor({70000, 5}, st::i32, st::testing::LayoutKind::sliced, rng);
    const st::RawTensor si =
        st::testing::random_tensor({70000, 7}, st::i32, st::testing::LayoutKind::flipped, rng);
    CHECK(check_add(xi, 1, idx, si) == "");
  }
}

TEST_CASE("index_select and index_add: whole-row fast paths", "[raw]") {
  // Rows of a contiguous table gathered and scattered by many repeated
  // indices: the memcpy gather and the row-partitioned scatter, whose sums
  // must match the sequential (index order) f32 sums exactly, for any number
  // of threads.
  std::mt19937_64 rng(4096);
  const st::RawTensor x =
      st::testing::random_tensor({3000, 64}, st::f32, st::testing::LayoutKind::contiguous, rng);
  const st::RawTensor idx = random_index({40000}, st::i64, 3000, 0, rng);
  CHECK(check_select(x, 0, idx) == "");
  CHECK(check_select(x, 0, random_index({200, 100}, st::i32, 3000, 0, rng)) == "");
  const st::RawTensor src =
      st::testing::random_tensor({40000, 64}, st::f32, st::testing::LayoutKind::contiguous, rng);
  CHECK(check_add(x, 0, idx, src) == "");
  const st::RawTensor xi =
      st::testing::random_tensor({3000, 5}, st::i64, st::testing::LayoutKind::contiguous, rng);
  const st::RawTensor si =
      st::testing::random_tensor({40000, 5}, st::i64, st::testing::LayoutKind::contiguous, rng);
  CHECK(check_add(xi, 0, idx, si) == "");
  // The same bits with one thread and with two.
  st::set_num_threads(1);
  const std::vector<double> one = st::testing::values(st::raw::index_add(x, 0, idx, src));
  st::set_num_threads(2);
  const std::vector<double> two = st::testing::values(st::raw::index_add(x, 0, idx, src));
  CHECK(one == two);
  // A broadcast scalar base (the zero of a backward pass, here 2.5) is filled.
  const st::RawTensor base = st::raw::full({}, 2.5, st::f64).expand({3000, 64});
  const st::RawTensor src64 =
      st::testing::random_tensor({40000, 64}, st::f64, st::testing::LayoutKind::sliced, rng);
  CHECK(check_add(base, 0, idx, src64) == "");
  const st::RawTensor ibase = st::raw::full({}, 3, st::i64).expand({3000, 5});
  CHECK(check_add(ibase, 0, idx, si) == "");
}

TEST_CASE("index_select and index_add: i64 values and extreme indices", "[raw]") {
  const int64_t big = (int64_t{1} << 62) + 1;  // not representable in a double
  const std::vector<int64_t> xv{big, -big, 3};
  const st::RawTensor x = st::raw::from_host(xv.data(), {3}, st::i64);
  SECTION("index_select") {
    const st::RawTensor y =
        st::raw::index_select(x, 0, st::testing::make({3}, st::i32, {1, 0, -3}));
    CHECK(st::testing::get_int(y, {0}) == -big);
    CHECK(st::testing::get_int(y, {1}) == big);
    CHECK(st::testing::get_int(y, {2}) == big);
    // Indices at the ends of the int64 and int32 ranges are out of range, not wrapped.
    const std::vector<int64_t> ext{std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max()};
    for (const int64_t v : ext) {
      const st::RawTensor idx = st::raw::from_host(&v, {1}, st::i64);
      CHECK_THROWS_AS(st::raw::index_select(x, 0, idx), st::IndexError);
      CHECK_THROWS_WITH(st::raw::index_select(x, 0, idx), Catch::Contains(std::to_string(v)));
    }
    const int32_t lo = std::numeric_limits<int32_t>::min();
    CHECK_THROWS_WITH(st::raw::index_select(x, 0, st::raw::from_host(&lo, {}, st::i32)),
                      Catch::Contains(std::to_string(lo)) && Catch::Contains("size 3"));
  }
  SECTION("index_add") {
    const std::vector<int64_t> sv{1, 1, 1};
    const st::RawTensor y = st::raw::index_add(x, 0, st::testing::make({3}, st::i64, {0, -1, 0}),
                                               st::raw::from_host(sv.data(), {3}, st::i64));
    CHECK(st::testing::get_int(y, {0}) == big + 2);
    CHECK(st::testing::get_int(y, {1}) == -big);
    CHECK(st::testing::get_int(y, {2}) == 4);
    const int64_t v = std::numeric_limits<int64_t>::min();
    CHECK_THROWS_AS(st::raw::index_add(x, 0, st::raw::from_host(&v, {1}, st::i64),
                                       st::raw::from_host(sv.data(), {1}, st::i64)),
                    st::IndexError);
  }
}

TEST_CASE("index_select and index_add: bad indices", "[raw]") {
  const st::RawTensor x = st::raw::full({4, 6}, 1.0, st::f32);
  SECTION("index_select") {
    // Out of range, as a scalar and inside the index tensor; the message has the value, the axis
    // and its size.
    for (const st::RawTensor& idx :
         {st::testing::make({}, st::i64, {9}), st::testing::make({4}, st::i32, {0, 2, 9, 1})}) {
      CHECK_THROWS_AS(st::raw::index_select(x, 1, idx), st::IndexError);
      CHECK_THROWS_WITH(st::raw::index_select(x, 1, idx),
                        Catch::Contains("index_select") && Catch::Contains("9") &&
                            Catch::Contains("axis 1") && Catch::Contains("size 6"));
    }
    const st::RawTensor neg = st::testing::make({2, 2}, st::i64, {0, -1, -5, 3});
    CHECK_THROWS_AS(st::raw::index_select(x, 0, neg), st::IndexError);
    CHECK_THROWS_WITH(st::raw::index_select(x, 0, neg), Catch::Contains("-5") &&
                                                            Catch::Contains("axis 0") &&
                                                            Catch::Contains("size 4"));
    CHECK_THROWS_WITH(
        st::raw::index_select(x, -2, st::testing::make({1}, st::i64, {4})),
        Catch::Contains("4") && Catch::Contains("axis 0") && Catch::Contains("size 4"));
    // Even when the result would be empty.
    CHECK_THROWS_AS(st::raw::index_select(st::raw::empty({0, 3}, st::f32), 1,
                                          st::testing::make({1}, st::i64, {3})),
                    st::IndexError);
    CHECK_THROWS_AS(st::raw::index_select(st::raw::empty({3, 0}, st::f32), 1,
                                          st::testing::make({1}, st::i64, {0})),
                    st::IndexError);
    // A float index tensor, an axis out of range, a rank-0 input.
    CHECK_THROWS_AS(st::raw::index_select(x, 0, st::testing::make({2}, st::f32, {0, 1})),
                    st::DTypeError);
    CHECK_THROWS_AS(st::raw::index_select(x, 0, st::testing::make({2}, st::f64, {0, 1})),
                    st::DTypeError);
    CHECK_THROWS_AS(st::raw::index_select(x, 0, st::testing::make({2}, st::bool_, {0, 1})),
                    st::DTypeError);
    CHECK_THROWS_AS(st::raw::index_select(x, 2, st::testing::make({1}, st::i64, {0})),
                    st::IndexError);
    CHECK_THROWS_AS(st::raw::index_select(x, -3, st::testing::make({1}, st::i64, {0})),
                    st::IndexError);
    CHECK_THROWS_AS(st::raw::index_select(st::testing::make({}, st::f32, {1}), 0,
                                          st::testing::make({}, st::i64, {0})),
                    st::IndexError);
  }
  SECTION("index_add") {
    const st::RawTensor src2 = st::raw::full({4, 2}, 1.0, st::f32);
    const st::RawTensor bad_idx = st::testing::make({2}, st::i64, {3, -7});
    CHECK_THROWS_AS(st::raw::index_add(x, 1, bad_idx, src2), st::IndexError);
    CHECK_THROWS_WITH(st::raw::index_add(x, 1, bad_idx, src2),
                      Catch::Contains("index_add") && Catch::Contains("-7") &&
                          Catch::Contains("axis 1") && Catch::Contains("size 6"));
    CHECK_THROWS_WITH(
        st::raw::index_add(x, 1, st::testing::make({}, st::i32, {6}),
                           st::raw::full({4}, 1.0, st::f32)),
        Catch::Contains("6") && Catch::Contains("axis 1") && Catch::Contains("size 6"));
    // Float index, wrongly shaped source, mismatched or unsupported dtypes.
    CHECK_THROWS_AS(st::raw::index_add(x, 1, st::testing::make({2}, st::f32, {0, 1}), src2),
                    st::DTypeError);
    CHECK_THROWS_AS(st::raw::index_add(x, 1, st::testing::make({2}, st::i64, {0, 1}),
                                       st::raw::full({4, 3}, 1.0, st::f32)),
                    st::ShapeError);
    CHECK_THROWS_AS(st::raw::index_add(x, 1, st::testing::make({2}, st::i64, {0, 1}),
                                       st::raw::full({2, 4}, 1.0, st::f32)),
                    st::ShapeError);
    CHECK_THROWS_WITH(st::raw::index_add(x, 0, st::testing::make({2, 2}, st::i64, {0, 1, 2, 3}),
                                         st::raw::full({4, 6}, 1.0, st::f32)),
                      Catch::Contains("[4, 6]") && Catch::Contains("[2, 2, 6]"));
    CHECK_THROWS_AS(st::raw::index_add(x, 1, st::testing::make({2}, st::i64, {0, 1}),
                                       st::raw::full({4, 2}, 1.0, st::f64)),
                    st::DTypeError);
    const st::RawTensor b = st::raw::full({2, 2}, 1.0, st::bool_);
    CHECK_THROWS_AS(st::raw::index_add(b, 0, st::testing::make({1}, st::i64, {0}),
                                       st::raw::full({1, 2}, 1.0, st::bool_)),
                    st::DTypeError);
    CHECK_THROWS_AS(st::raw::index_add(x, 2, st::testing::make({1}, st::i64, {0}), src2),
                    st::IndexError);
  }
}

TEST_CASE("index_add: strided source and strided negative indices against a double loop", "[raw]") {
  // The front end hands the backend a contiguous source and normalised
  // positions; the result must not depend on how either arrived.
  std::mt19937_64 rng(8675309);
  const int64_t rows = 5, size = 6, J = 8;
  std::uniform_int_distribution<int64_t> pick(-size, size - 1);
  std::vector<double> iv(std::size_t(2 * J));
  for (double& v : iv) v = double(pick(rng));
  // idx below takes iv[2J - 1], iv[2J - 3], ...: its first entries are a
  // duplicate -1 and the lowest index.
  iv[2 * J - 1] = -1, iv[2 * J - 3] = -1, iv[2 * J - 5] = double(-size);
  for (st::DType idt : {st::i32, st::i64}) {
    // Every other entry of a reversed [2J] tensor: stride -2.
    const st::RawTensor idx = st::testing::make({2 * J}, idt, iv).flip(0).slice(0, 0, 2 * J, 2);
    REQUIRE(idx.strides() == st::Strides{-2});
    for (st::DType dtype : {st::f32, st::f64}) {
      const st::RawTensor x =
          st::testing::random_tensor({rows, size}, dtype, st::testing::LayoutKind::flipped, rng);
      // src [rows, J] as the transpose of a contiguous [J, rows].
      const st::RawTensor src =
          st::testing::random_tensor({J, rows}, dtype, st::testing::LayoutKind::contiguous, rng)
              .transpose(0, 1);
      REQUIRE(!src.is_contiguous());
      std::vector<double> want(std::size_t(rows * size));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < size; ++c) want[std::size_t(r * size + c)] = get(x, {r, c});
      }
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < J; ++j) {
          int64_t p = get_int(idx, {j});
          if (p < 0) p += size;
          double& w = want[std::size_t(r * size + p)];
          w = dtype == st::f32 ? double(float(w) + float(get(src, {r, j}))) : w + get(src, {r, j});
        }
      }
      INFO(dtype_name(idt) << " indices, " << dtype_name(dtype) << " values");
      CHECK(st::testing::values(st::raw::index_add(x, 1, idx, src)) == want);
      CHECK(check_add(x, -1, idx, src) == "");
    }
  }
}
