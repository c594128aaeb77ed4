// SPDX-License-Identifier: MIT
// Movement primitives (contiguous, reshape, pad, concat, cast), the RawTensor
// views, and the in-place writes fill_/copy_/binary_ with version counters.
// Every answer is checked by reading storage through layouts (naive.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/elementwise_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
using st::BinaryOp;
using st::DType;
using st::Layout;
using st::RawTensor;
using st::Shape;
using tt::dname;
using tt::kAllDTypes;
using tt::kInf;
using tt::kNaN;
using tt::numel_of;
using Idx = std::vector<int64_t>;

namespace {

/// Every element of t's storage, by storage position.
std::vector<double> storage_values(const RawTensor& t) {
  const int64_t n = tt::storage_elems(t);
  return tt::values(t.view(Layout{{n}, {1}, 0}));
}

/// Python's slice(start, stop, step).indices(n), as the list of positions.
std::vector<int64_t> py_slice(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                              int64_t step) {
  const int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
  auto fix = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < lower) x = lower;
    } else if (x > upper) {
      x = upper;
    }
    return x;
  };
  const int64_t b = fix(start, step > 0 ? lower : upper);
  const int64_t e = fix(stop, step > 0 ? upper : lower);
  std::vector<int64_t> out;
  for (int64_t i = b; step > 0 ? i < e : i > e; i += step) out.push_back(i);
  return out;
}

/// A contiguous f64 tensor 0, 1, 2, ... of shape s.
RawTensor iota(const Shape& s, DType t = st::f64) {
  std::vector<double> v(std::size_t(numel_of(s)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  return tt::make(s, t, v);
}

/// y holds x's elements in row-major order under shape `target`.
std::string reshape_mismatch(const RawTensor& y, const RawTensor& x, const Shape& target) {
  const std::vector<double> xv = tt::values(x);
  return tt::first_mismatch(y, target, x.dtype(), [&](const Idx& i) {
    int64_t flat = 0;
    for (std::size_t d = 0; d < i.size(); ++d) flat = flat * target[d] + i[d];
    return xv[std::size_t(flat)];
  });
}

}  // namespace

TEST_CASE("contiguous", "[raw]") {
  std::mt19937_64 rng(41);
  SECTION("contiguous: values kept, row-major result, no copy when already contiguous") {
    for (DType t : {st::bool_, st::i32, st::f64}) {
      for (const Shape& s : tt::sweep_shapes(42)) {
        for (const auto& v : tt::layout_variants(s)) {
          const RawTensor x = v.make(s, t, rng);
          const RawTensor y = st::raw::contiguous(x);
          INFO("contiguous " << dname(t) << " shape " << s << " layout " << v.name);
          CHECK(y.is_contiguous());
          CHECK(tt::first_mismatch(y, s, t, [&](const Idx& i) { return tt::get(x, i); }) == "");
          if (x.is_contiguous()) {
            CHECK(y.storage() == x.storage());
            CHECK(y.offset() == x.offset());
          } else {
            CHECK(y.storage() != x.storage());
          }
        }
      }
    }
  }
  SECTION("contiguous: a permutation of size-1 dims is already contiguous") {
    const RawTensor x = iota({1, 5, 1});
    const RawTensor y = st::raw::contiguous(x.permute({2, 1, 0}));
    CHECK(y.storage() == x.storage());
    CHECK(tt::values(y) == tt::values(x));
  }
}

TEST_CASE("reshape", "[raw]") {
  SECTION("reshape: a view of a contiguous tensor") {
    const RawTensor x = iota({2, 3, 4});
    for (const Shape& target : {Shape{6, 4}, Shape{24}, Shape{4, -1}, Shape{2, 1, 3, 1, 4},
                                Shape{1, 1, 1, 1, 1, 1, 1, 1, 1, 24, 1, 1}, Shape{-1}}) {
      const RawTensor y = st::raw::reshape(x, target);
      Shape resolved = target;
      for (auto& d : resolved) {
        if (d == -1) d = 24 / (numel_of(target) == 0 ? 1 : -numel_of(target));
      }
      INFO("reshape [2, 3, 4] to " << target);
      CHECK(y.storage() == x.storage());
      CHECK(reshape_mismatch(y, x, resolved) == "");
    }
  }
  SECTION("reshape: scalars and size-0 tensors") {
    const RawTensor one = iota({1, 1});
    const RawTensor s = st::raw::reshape(one, {});
    CHECK(s.ndim() == 0);
    CHECK(s.storage() == one.storage());
    CHECK(tt::get(s, {}) == 0);
    CHECK(st::raw::reshape(s, {1, 1, 1}).shape() == Shape{1, 1, 1});
    const RawTensor z = st::raw::empty({0, 3}, st::f32);
    CHECK(st::raw::reshape(z, {3, 0}).shape() == Shape{3, 0});
    CHECK(st::raw::reshape(z, {0}).shape() == Shape{0});
    CHECK(st::raw::reshape(z, {2, -1, 5}).shape() == Shape{2, 0, 5});
  }
  SECTION("reshape: an offset view stays a view") {
    std::mt19937_64 rng(43);
    const RawTensor x = tt::random_tensor({3, 4}, st::f32, tt::LayoutKind::offset, rng);
    const RawTensor y = st::raw::reshape(x, {2, 6});
    CHECK(y.storage() == x.storage());
    CHECK(reshape_mismatch(y, x, {2, 6}) == "");
  }
  SECTION("reshape: strided views that allow a view") {
    const RawTensor base = iota({4, 6});
    // Every other row: rows stay dense, so splitting a row is a view.
    const RawTensor rows = base.slice(0, 0, 4, 2);
    const RawTensor y1 = st::raw::reshape(rows, {2, 2, 3});
    CHECK(y1.storage() == base.storage());
    CHECK(reshape_mismatch(y1, rows, {2, 2, 3}) == "");
    // A transposed matrix: splitting its (strided) first axis is a view.
    const RawTensor tr = base.transpose(0, 1);  // [6, 4], strides [1, 6]
    const RawTensor y2 = st::raw::reshape(tr, {2, 3, 4});
    CHECK(y2.storage() == base.storage());
    CHECK(reshape_mismatch(y2, tr, {2, 3, 4}) == "");
    // A broadcast: splitting or extending the zero-stride axis is a view.
    const RawTensor bc = iota({1, 3}).expand({4, 3});
    const RawTensor y3 = st::raw::reshape(bc, {2, 2, 3, 1});
    CHECK(y3.storage() == bc.storage());
    CHECK(reshape_mismatch(y3, bc, {2, 2, 3, 1}) == "");
    // A flipped vector: splitting it is a view with negative strides.
    const RawTensor fl = iota({6}).flip(0);
    const RawTensor y4 = st::raw::reshape(fl, {2, 3});
    CHECK(y4.storage() == fl.storage());
    CHECK(reshape_mismatch(y4, fl, {2, 3}) == "");
    // Every other column of a [4, 6] matrix is one stride-2 run: flattening is a view.
    const RawTensor cols = base.slice(1, 0, 6, 2);  // [4, 3], strides [6, 2]
    for (const Shape& target : {Shape{12}, Shape{3, 4}, Shape{2, 6}}) {
      const RawTensor y5 = st::raw::reshape(cols, target);
      INFO("reshape every other column to " << target);
      CHECK(y5.storage() == base.storage());
      CHECK(reshape_mismatch(y5, cols, target) == "");
    }
  }
  SECTION("reshape: a copy when the strides do not allow a view") {
    const RawTensor base = iota({4, 6});
    const RawTensor rows = base.slice(0, 0, 4, 2);          // rows 0 and 2: not one run
    const RawTensor tr = base.transpose(0, 1);              // column-major order
    const RawTensor bc = iota({1, 3}).expand({4, 3});       // repeated rows
    const RawTensor fl = iota({2, 3}).flip(1);              // reversed rows
    const RawTensor cols = iota({4, 5}).slice(1, 0, 5, 2);  // [4, 3], strides [5, 2]
    struct Case {
      const char* name;
      RawTensor x;
      Shape target;
    };
    for (const Case& c :
         {Case{"rows", rows, {12}}, Case{"transposed", tr, {24}}, Case{"transposed", tr, {4, 6}},
          Case{"broadcast", bc, {12}}, Case{"flipped", fl, {6}}, Case{"columns", cols, {12}},
          Case{"columns", cols, {3, 4}}}) {
      const RawTensor y = st::raw::reshape(c.x, c.target);
      INFO("reshape " << c.name << " " << c.x.shape() << " to " << c.target);
      CHECK(y.storage() != c.x.storage());
      CHECK(y.is_contiguous());
      CHECK(reshape_mismatch(y, c.x, c.target) == "");
    }
  }
  SECTION("reshape: random layouts and targets keep row-major order") {
    std::mt19937_64 rng(44);
    for (const Shape& s : tt::sweep_shapes(45)) {
      const int64_t n = numel_of(s);
      Shape reversed(std::make_reverse_iterator(s.end()), std::make_reverse_iterator(s.begin()));
      Shape padded = s;
      padded.insert(0, 1);
      padded.push_back(1);
      for (const Shape& target : {Shape{n}, Shape{-1}, reversed, padded}) {
        for (const auto& v : tt::layout_variants(s)) {
          const RawTensor x = v.make(s, st::f32, rng);
          const RawTensor y = st::raw::reshape(x, target);
          const Shape resolved = target == Shape{-1} ? Shape{n} : target;
          INFO("reshape " << s << " (" << v.name << ") to " << target);
          CHECK(reshape_mismatch(y, x, resolved) == "");
          if (x.is_contiguous()) CHECK(y.storage() == x.storage());
        }
      }
    }
  }
  SECTION("reshape: rank 12 to rank 9 and back") {
    const Shape s12 = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
    const RawTensor x = iota(s12).permute({11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
    const Shape s9 = {2, 2, 2, 1, 1, 2, 2, 2, 1};
    const RawTensor y = st::raw::reshape(x, s9);
    CHECK(reshape_mismatch(y, x, s9) == "");
    CHECK(reshape_mismatch(st::raw::reshape(y, s12), x, s12) == "");
  }
}

TEST_CASE("pad", "[raw]") {
  std::mt19937_64 rng(51);
  SECTION("pad: every dtype and layout, some axes unpadded") {
    std::uniform_int_distribution<int64_t> amount(0, 2);
    for (DType t : kAllDTypes) {
      const double value = t == st::bool_ ? 1.0 : st::is_integral(t) ? 7.0 : -1.5;
      for (const Shape& s : tt::sweep_shapes(52, 4)) {
        if (s.ndim() > 9) continue;  // rank 12 of twos padded is large; rank 9 covers it
        for (const auto& v : tt::layout_variants(s)) {
          const RawTensor x = v.make(s, t, rng);
          std::vector<std::pair<int64_t, int64_t>> pads;
          Shape out_shape = s;
          for (std::size_t d = 0; d < s.size(); ++d) {
            pads.push_back(d % 3 == 1 ? std::pair<int64_t, int64_t>{0, 0}
                                      : std::pair<int64_t, int64_t>{amount(rng), amount(rng)});
            out_shape[d] += pads.back().first + pads.back().second;
          }
          const RawTensor y = st::raw::pad(x, pads, value);
          INFO("pad " << dname(t) << " shape " << s << " layout " << v.name);
          CHECK(tt::first_mismatch(y, out_shape, t, [&](const Idx& i) {
                  Idx j(i.size());
                  for (std::size_t d = 0; d < i.size(); ++d) {
                    j[d] = i[d] - pads[d].first;
                    if (j[d] < 0 || j[d] >= s[d]) return tt::convert_ref(value, t);
                  }
                  return tt::get(x, j);
                }) == "");
        }
      }
    }
  }
  SECTION("pad: default value is zero; rank 0; empty axes") {
    const RawTensor x = iota({2, 2});
    CHECK(tt::values(st::raw::pad(x, {{1, 0}, {0, 1}})) ==
          std::vector<double>{0, 0, 0, 0, 1, 0, 2, 3, 0});
    const RawTensor s = st::raw::pad(iota({}), {});
    CHECK(s.ndim() == 0);
    CHECK(tt::get(s, {}) == 0);
    const RawTensor e = st::raw::pad(st::raw::empty({0, 2}, st::f32), {{1, 1}, {0, 0}}, 4.0);
    CHECK(e.shape() == Shape{2, 2});
    CHECK(tt::values(e) == std::vector<double>{4, 4, 4, 4});
    CHECK(tt::values(st::raw::pad(x, {{0, 0}, {0, 0}})) == tt::values(x));
  }
  SECTION("pad: NaN and infinite fill values") {
    const auto v = tt::values(st::raw::pad(iota({1}), {{1, 1}}, kNaN));
    CHECK(std::isnan(v[0]));
    CHECK(v[1] == 0);
    CHECK(std::isnan(v[2]));
    CHECK(tt::values(st::raw::pad(iota({1}), {{0, 1}}, -kInf)) == std::vector<double>{0, -kInf});
  }
}

TEST_CASE("concat", "[raw]") {
  std::mt19937_64 rng(61);
  SECTION("concat: 3-D along each axis, differing sizes, mixed layouts") {
    for (DType t : kAllDTypes) {
      for (int64_t axis = -3; axis < 3; ++axis) {
        const int64_t ax = axis < 0 ? axis + 3 : axis;
        const Shape base = {2, 3, 4};
        const int64_t sizes[] = {3, 0, 1, 2};
        std::vector<RawTensor> parts;
        std::vector<std::string> kinds;
        for (std::size_t p = 0; p < 4; ++p) {
          Shape s = base;
          s[std::size_t(ax)] = sizes[p];
          const tt::LayoutKind k = tt::kAllLayouts[(std::size_t(ax) + p * 2) % 6];
          parts.push_back(tt::random_tensor(s, t, k, rng));
          kinds.push_back(tt::layout_name(k));
        }
        Shape out_shape = base;
        out_shape[std::size_t(ax)] = 6;
        const RawTensor y = st::raw::concat(parts, axis);
        INFO("concat " << dname(t) << " axis " << axis << " layouts " << kinds[0] << ", "
                       << kinds[1] << ", " << kinds[2] << ", " << kinds[3]);
        CHECK(tt::first_mismatch(y, out_shape, t, [&](const Idx& i) {
                Idx j = i;
                std::size_t p = 0;
                while (j[std::size_t(ax)] >= sizes[p]) j[std::size_t(ax)] -= sizes[p++];
                return tt::get(parts[p], j);
              }) == "");
      }
    }
  }
  SECTION("concat: one tensor, rank 1, rank 12") {
    const RawTensor a = iota({3});
    CHECK(tt::values(st::raw::concat({a}, 0)) == tt::values(a));
    CHECK(tt::values(st::raw::concat({a, a.flip(0)}, 0)) == std::vector<double>{0, 1, 2, 2, 1, 0});
    const Shape s12 = {1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 2};
    const RawTensor b = iota(s12), c = iota(s12).flip(11);
    const RawTensor y = st::raw::concat({b, c}, 11);
    Shape out = s12;
    out[11] = 4;
    CHECK(tt::first_mismatch(y, out, st::f64, [&](const Idx& i) {
            Idx j = i;
            if (j[11] < 2) return tt::get(b, j);
            j[11] -= 2;
            return tt::get(c, j);
          }) == "");
  }
  SECTION("concat: all parts empty along the axis") {
    const RawTensor e = st::raw::empty({2, 0}, st::i32);
    CHECK(st::raw::concat({e, e}, 1).shape() == Shape{2, 0});
  }
}

TEST_CASE("cast", "[raw]") {
  std::mt19937_64 rng(71);
  SECTION("cast: every dtype pair on every layout") {
    for (DType from : kAllDTypes) {
      for (DType to : kAllDTypes) {
        for (const Shape& s : {Shape{}, Shape{0, 2}, Shape{3, 4}, Shape{2, 1, 3},
                               Shape{1, 2, 1, 2, 1, 2, 1, 2, 1}}) {
          for (const auto& v : tt::layout_variants(s)) {
            const RawTensor x = v.make(s, from, rng);
            const RawTensor y = st::raw::cast(x, to);
            INFO("cast " << dname(from) << " -> " << dname(to) << " shape " << s << " layout "
                         << v.name);
            CHECK(tt::first_mismatch(y, s, to, [&](const Idx& i) {
                    return tt::convert_ref(tt::get(x, i), to);
                  }) == "");
          }
        }
      }
    }
  }
  SECTION("cast: float to int truncates toward zero and saturates, NaN to 0") {
    const std::vector<double> specials = {
        kNaN,         kInf,          -kInf,  2.7,     -2.7,  -0.5,         0.5,
        -0.0,         3e9,           -3e9,   1e19,    -1e19, 2147483647.0, -2147483648.0,
        2147483648.0, -2147483649.0, 9.2e18, -9.3e18, 1e300};
    for (DType from : {st::f32, st::f64}) {
      const RawTensor x = tt::make({int64_t(specials.size())}, from, specials);
      for (DType to : {st::i32, st::i64}) {
        const RawTensor y = st::raw::cast(x, to);
        for (int64_t i = 0; i < x.numel(); ++i) {
          const double src = tt::get(x, {i});
          INFO("cast " << dname(from) << " -> " << dname(to) << " of " << src);
          CHECK(tt::get_int(y, {i}) == tt::convert_int_ref(src, to));
        }
      }
    }
  }
  SECTION("cast: anything to bool is != 0, bool to numbers is 0/1") {
    for (DType from : {st::i32, st::i64, st::f32, st::f64}) {
      const RawTensor x = tt::make({5}, from, {0, -0.0, 0.25, -3, 2});
      CHECK(tt::values(st::raw::cast(x, st::bool_)) ==
            std::vector<double>{0, 0, from == st::i32 || from == st::i64 ? 0.0 : 1.0, 1, 1});
    }
    const RawTensor n = tt::make({2}, st::f64, {kNaN, -kInf});
    CHECK(tt::values(st::raw::cast(n, st::bool_)) == std::vector<double>{1, 1});
    const RawTensor b = tt::make({3}, st::bool_, {1, 0, 1});
    for (DType to : {st::i32, st::i64, st::f32, st::f64}) {
      CHECK(tt::values(st::raw::cast(b, to)) == std::vector<double>{1, 0, 1});
    }
  }
  SECTION("cast: integer to integer and wide integer to float") {
    const RawTensor w = tt::make_int({3}, st::i64, {(int64_t{1} << 32) + 5, -1, INT64_MIN});
    CHECK(tt::values(st::raw::cast(w, st::i32)) == std::vector<double>{5, -1, 0});
    const int64_t big = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
    const RawTensor x = tt::make_int({2}, st::i64, {big, -big});
    CHECK(tt::get(st::raw::cast(x, st::f32), {0}) == double(static_cast<float>(big)));
    CHECK(tt::get(st::raw::cast(x, st::f64), {1}) == double(-big));
    const RawTensor i = tt::make_int({2}, st::i32, {INT32_MIN, INT32_MAX});
    CHECK(tt::get_int(st::raw::cast(i, st::i64), {0}) == INT32_MIN);
    CHECK(tt::get(st::raw::cast(i, st::f32), {1}) == double(static_cast<float>(INT32_MAX)));
  }
  SECTION("cast: f64 to f32 rounds, overflows to infinity") {
    const RawTensor x = tt::make({3}, st::f64, {0.1, 1e300, -1e300});
    const auto v = tt::values(st::raw::cast(x, st::f32));
    CHECK(v[0] == double(0.1f));
    CHECK(v[1] == kInf);
    CHECK(v[2] == -kInf);
  }
}

TEST_CASE("RawTensor views", "[raw]") {
  std::mt19937_64 rng(81);
  const RawTensor x = tt::random_tensor({3, 4, 5}, st::f64, tt::LayoutKind::contiguous, rng);
  auto shares = [&](const RawTensor& v) { return v.storage() == x.storage(); };
  SECTION("permute") {
    for (const Shape& p : {Shape{2, 0, 1}, Shape{1, 2, 0}, Shape{-1, 0, 1}, Shape{0, 1, 2}}) {
      const RawTensor y = x.permute(p);
      INFO("permute " << p);
      CHECK(shares(y));
      CHECK(tt::first_mismatch(
                y,
                {x.shape()[(p[0] + 3) % 3], x.shape()[(p[1] + 3) % 3], x.shape()[(p[2] + 3) % 3]},
                st::f64, [&](const Idx& i) {
                  Idx j(3);
                  for (int k = 0; k < 3; ++k) j[std::size_t((p[k] + 3) % 3)] = i[std::size_t(k)];
                  return tt::get(x, j);
                }) == "");
    }
  }
  SECTION("transpose") {
    const RawTensor y = x.transpose(0, -1);
    CHECK(shares(y));
    CHECK(tt::first_mismatch(y, {5, 4, 3}, st::f64, [&](const Idx& i) {
            return tt::get(x, {i[2], i[1], i[0]});
          }) == "");
  }
  SECTION("expand") {
    const RawTensor col = x.select(2, 1).slice(1, 0, 1);  // [3, 1]
    const RawTensor y = col.expand({2, 3, 6});
    CHECK(shares(y));
    CHECK(y.strides()[0] == 0);
    CHECK(y.strides()[2] == 0);
    CHECK(tt::first_mismatch(y, {2, 3, 6}, st::f64, [&](const Idx& i) {
            return tt::get(x, {i[1], 0, 1});
          }) == "");
  }
  SECTION("slice") {
    const std::optional<int64_t> none;
    const std::optional<int64_t> bounds[] = {none, 0, 1, 3, 4, 7, -1, -2, -4, -9};
    for (int64_t step : {1, 2, 3, -1, -2, -3, 10}) {
      for (auto b : bounds) {
        for (auto e : bounds) {
          const RawTensor y = x.slice(1, b, e, step);
          const auto pos = py_slice(4, b, e, step);
          INFO("slice axis 1 (" << (b ? std::to_string(*b) : "none") << ", "
                                << (e ? std::to_string(*e) : "none") << ", " << step << ")");
          CHECK(shares(y));
          CHECK(tt::first_mismatch(y, {3, int64_t(pos.size()), 5}, st::f64, [&](const Idx& i) {
                  return tt::get(x, {i[0], pos[std::size_t(i[1])], i[2]});
                }) == "");
        }
      }
    }
  }
  SECTION("select") {
    for (int64_t k : {0, 2, -1, -4}) {
      const RawTensor y = x.select(1, k);
      CHECK(shares(y));
      CHECK(tt::first_mismatch(y, {3, 5}, st::f64, [&](const Idx& i) {
              return tt::get(x, {i[0], k < 0 ? k + 4 : k, i[1]});
            }) == "");
    }
    const RawTensor e = x.select(0, 1).select(0, 2).select(0, 3);
    CHECK(e.ndim() == 0);
    CHECK(tt::get(e, {}) == tt::get(x, {1, 2, 3}));
  }
  SECTION("flip") {
    const RawTensor y = x.flip(0).flip(-1);
    CHECK(shares(y));
    CHECK(tt::first_mismatch(y, {3, 4, 5}, st::f64, [&](const Idx& i) {
            return tt::get(x, {2 - i[0], i[1], 4 - i[2]});
          }) == "");
    CHECK(tt::values(y.flip(0).flip(2)) == tt::values(x));
  }
  SECTION("squeeze and unsqueeze") {
    const RawTensor u = x.unsqueeze(1).unsqueeze(-1);  // [3, 1, 4, 5, 1]
    CHECK(u.shape() == Shape{3, 1, 4, 5, 1});
    CHECK(shares(u));
    CHECK(tt::first_mismatch(u, {3, 1, 4, 5, 1}, st::f64, [&](const Idx& i) {
            return tt::get(x, {i[0], i[2], i[3]});
          }) == "");
    CHECK(tt::values(u.squeeze(4).squeeze(1)) == tt::values(x));
  }
  SECTION("view with a custom layout (a diagonal)") {
    const RawTensor m = iota({4, 4});
    const RawTensor d = m.view(Layout{{4}, {5}, 0});
    CHECK(d.storage() == m.storage());
    CHECK(tt::values(d) == std::vector<double>{0, 5, 10, 15});
  }
  SECTION("views compose with ops: a permuted slice of a flipped tensor") {
    const RawTensor y = x.flip(2).slice(2, 1, std::nullopt, 2).permute({2, 0, 1});  // [2, 3, 4]
    CHECK(tt::first_mismatch(st::raw::unary(st::UnaryOp::neg, y), {2, 3, 4}, st::f64,
                             [&](const Idx& i) {
                               return -tt::get(x, {i[1], i[2], 4 - (1 + 2 * i[0])});
                             }) == "");
  }
}

TEST_CASE("fill_", "[raw]") {
  SECTION("fill_: writes through a strided view into its base and bumps the version") {
    for (DType t : kAllDTypes) {
      const RawTensor base = iota({4, 5}, t == st::bool_ ? st::i32 : t);
      const RawTensor b = t == st::bool_ ? st::raw::cast(base, st::bool_) : base;
      const RawTensor view = b.slice(1, 1, std::nullopt, 2).flip(0);  // columns 1 and 3
      const auto before = storage_values(b);
      const uint64_t v0 = b.version();
      st::raw::fill_(view, 2.75);
      INFO("fill_ " << dname(t));
      CHECK(b.version() > v0);
      CHECK(view.version() == b.version());
      const auto after = storage_values(b);
      bool ok = true;
      for (int64_t p = 0; p < 20; ++p) {
        const bool in_view = p % 5 == 1 || p % 5 == 3;
        const double want = in_view ? tt::convert_ref(2.75, t) : before[std::size_t(p)];
        ok = ok && after[std::size_t(p)] == want;
      }
      CHECK(ok);
    }
  }
  SECTION("fill_: one element through select, size-1 zero-stride dims are writable") {
    const RawTensor x = iota({3});
    st::raw::fill_(x.select(0, -1), -4);
    CHECK(tt::values(x) == std::vector<double>{0, 1, -4});
    const RawTensor y = x.view(Layout{{1, 3}, {0, 1}, 0});
    st::raw::fill_(y, 9);
    CHECK(tt::values(x) == std::vector<double>{9, 9, 9});
  }
}

TEST_CASE("copy_", "[raw]") {
  std::mt19937_64 rng(91);
  SECTION("copy_: into a transposed view, casting the source") {
    const RawTensor base = iota({4, 5});
    const RawTensor src = tt::random_tensor({5, 4}, st::f32, tt::LayoutKind::flipped, rng);
    const uint64_t v0 = base.version();
    st::raw::copy_(base.transpose(0, 1), src);
    CHECK(base.version() > v0);
    CHECK(tt::first_mismatch(base, {4, 5}, st::f64, [&](const Idx& i) {
            return tt::get(src, {i[1], i[0]});
          }) == "");
    const RawTensor ints = iota({5, 4}, st::i64);
    st::raw::copy_(ints, tt::make({5, 4}, st::f64, std::vector<double>(20, -2.9)));
    CHECK(tt::values(ints) == std::vector<double>(20, -2));
  }
  SECTION("copy_: from every layout into every layout of a base") {
    for (DType t : {st::i32, st::f64}) {
      for (tt::LayoutKind sk : tt::kAllLayouts) {
        const RawTensor base = tt::random_tensor({5, 7}, t, tt::LayoutKind::contiguous, rng);
        const RawTensor dst = base.slice(0, 3, 0, -1).slice(1, 1, 7, 2).transpose(0, 1);  // [3, 3]
        const RawTensor src = tt::random_tensor({3, 3}, t, sk, rng);
        const auto before = storage_values(base);
        st::raw::copy_(dst, src);
        auto want = before;
        tt::for_each_index({3, 3}, [&](const Idx& i) {
          want[std::size_t(tt::storage_index(dst, i))] = tt::get(src, i);
        });
        INFO("copy_ " << dname(t) << " from " << tt::layout_name(sk));
        CHECK(storage_values(base) == want);
      }
    }
  }
  SECTION("copy_: from an overlapping view of the same storage") {
    const RawTensor x = iota({10});
    st::raw::copy_(x, x.flip(0));
    CHECK(tt::values(x) == std::vector<double>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
    const RawTensor y = iota({10});
    st::raw::copy_(y.slice(0, 1, std::nullopt), y.slice(0, 0, -1));  // shift right
    CHECK(tt::values(y) == std::vector<double>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
    const RawTensor z = iota({10});
    st::raw::copy_(z.slice(0, 0, -1), z.slice(0, 1, std::nullopt));  // shift left
    CHECK(tt::values(z) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 9});
    const RawTensor m = iota({3, 3});
    st::raw::copy_(m, m.transpose(0, 1));
    CHECK(tt::values(m) == std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8});
    // Large enough for the parallel path.
    const RawTensor big = iota({1 << 17});
    st::raw::copy_(big, big.flip(0));
    bool ok = true;
    for (int64_t i = 0; i < (1 << 17); ++i)
      ok = ok && tt::get(big, {i}) == double((1 << 17) - 1 - i);
    CHECK(ok);
  }
  SECTION("copy_: onto itself is a no-op that still counts as a write") {
    const RawTensor x = iota({4});
    const uint64_t v0 = x.version();
    st::raw::copy_(x, x);
    CHECK(tt::values(x) == std::vector<double>{0, 1, 2, 3});
    CHECK(x.version() > v0);
  }
}

TEST_CASE("binary_", "[raw]") {
  std::mt19937_64 rng(101);
  const BinaryOp ops[] = {BinaryOp::add,     BinaryOp::sub,     BinaryOp::mul, BinaryOp::div,
                          BinaryOp::maximum, BinaryOp::minimum, BinaryOp::pow};
  SECTION("binary_: through views, every arithmetic op and dtype, any source layout") {
    for (BinaryOp op : ops) {
      for (DType t : {st::i32, st::i64, st::f32, st::f64}) {
        if (op == BinaryOp::pow && !st::is_floating(t)) continue;
        for (tt::LayoutKind sk : tt::kAllLayouts) {
          const RawTensor base = tt::random_tensor({4, 6}, t, tt::LayoutKind::contiguous, rng);
          const RawTensor dst = base.slice(1, 0, 6, 2).flip(0);  // [4, 3]
          const RawTensor src = tt::random_tensor({4, 3}, t, sk, rng);
          if (op == BinaryOp::div && st::is_integral(t)) tt::replace_zeros(src);
          const auto before = storage_values(base);
          const uint64_t v0 = base.version();
          st::raw::binary_(op, dst, src);
          auto want = before;
          tt::for_each_index({4, 3}, [&](const Idx& i) {
            const auto p = std::size_t(tt::storage_index(dst, i));
            double r = 0;
            const double a = before[p], b = tt::get(src, i);
            switch (op) {
              case BinaryOp::add:
                r = a + b;
                break;
              case BinaryOp::sub:
                r = a - b;
                break;
              case BinaryOp::mul:
                r = a * b;
                break;
              case BinaryOp::div:
                r = st::is_integral(t) ? std::trunc(a / b) : a / b;
                break;
              case BinaryOp::maximum:
                r = std::max(a, b);
                break;
              case BinaryOp::minimum:
                r = std::min(a, b);
                break;
              default:
                r = std::pow(a, b);
                break;
            }
            want[p] = tt::round_to(t, r);
          });
          const auto got = storage_values(base);
          bool ok = got.size() == want.size();
          for (std::size_t p = 0; ok && p < got.size(); ++p) {
            ok = tt::same_value(got[p], want[p], tt::rel_tol(t));
          }
          INFO("binary_ " << st::op_name(op) << " " << dname(t) << " source "
                          << tt::layout_name(sk));
          CHECK(ok);
          CHECK(base.version() > v0);
        }
      }
    }
  }
  SECTION("binary_: source overlapping the destination") {
    const RawTensor x = iota({6});
    st::raw::binary_(BinaryOp::add, x, x);  // exact alias
    CHECK(tt::values(x) == std::vector<double>{0, 2, 4, 6, 8, 10});
    st::raw::binary_(BinaryOp::sub, x, x.flip(0));  // x[i] - x_old[5 - i]
    CHECK(tt::values(x) == std::vector<double>{-10, -6, -2, 2, 6, 10});
    const RawTensor m = iota({3, 3});
    st::raw::binary_(BinaryOp::mul, m, m.transpose(0, 1));
    CHECK(tt::values(m) == std::vector<double>{0, 3, 12, 3, 16, 35, 12, 35, 64});
    const RawTensor y = iota({8});
    st::raw::binary_(BinaryOp::add, y.slice(0, 1, std::nullopt), y.slice(0, 0, -1));
    CHECK(tt::values(y) == std::vector<double>{0, 1, 3, 5, 7, 9, 11, 13});
  }
  SECTION("binary_: logical ops on bool") {
    const RawTensor a = tt::make({4}, st::bool_, {1, 1, 0, 0});
    const RawTensor b = tt::make({4}, st::bool_, {1, 0, 1, 0});
    st::raw::binary_(BinaryOp::logical_or, a, b);
    CHECK(tt::values(a) == std::vector<double>{1, 1, 1, 0});
    st::raw::binary_(BinaryOp::logical_and, a, b);
    CHECK(tt::values(a) == std::vector<double>{1, 0, 1, 0});
  }
}

TEST_CASE("axpby_", "[raw]") {
  std::mt19937_64 rng(103);
  SECTION("axpby_: through views, both float dtypes, any source layout") {
    const double coefficients[][2] = {{1, -0.037}, {0.9, 1}, {-1.75, 0.3}, {0, 2.5}};
    for (DType t : {st::f32, st::f64}) {
      for (tt::LayoutKind sk : tt::kAllLayouts) {
        for (const auto& c : coefficients) {
          const double alpha = c[0], beta = c[1];  // named copies: lambdas capture them
          const RawTensor base = tt::random_tensor({4, 6}, t, tt::LayoutKind::contiguous, rng);
          const RawTensor dst = base.slice(1, 0, 6, 2).flip(0);  // [4, 3]
          const RawTensor src = tt::random_tensor({4, 3}, t, sk, rng);
          const auto before = storage_values(base);
          const uint64_t v0 = base.version();
          st::raw::axpby_(dst, alpha, src, beta);
          // The columns dst skips keep their values; the others are within rounding of
          // the sum's terms (scale), which may cancel.
          auto want = before;
          std::vector<double> scale(before.size(), 0.0);
          tt::for_each_index({4, 3}, [&](const Idx& i) {
            const auto p = std::size_t(tt::storage_index(dst, i));
            want[p] = alpha * before[p] + beta * tt::get(src, i);
            scale[p] = std::abs(alpha * before[p]) + std::abs(beta * tt::get(src, i));
          });
          const auto got = storage_values(base);
          bool ok = got.size() == want.size();
          for (std::size_t p = 0; ok && p < got.size(); ++p) {
            ok = std::abs(got[p] - want[p]) <= 4 * tt::rel_tol(t) * scale[p];
          }
          INFO("axpby_ " << dname(t) << " source " << tt::layout_name(sk) << " alpha " << alpha
                         << " beta " << beta);
          CHECK(ok);
          CHECK(base.version() > v0);
        }
      }
    }
  }
  SECTION("axpby_: f32 rounds each product and the sum, as p + (-lr) g = p - lr g") {
    // The plain ops' results on the same values: the fused pass gives their bits.
    const RawTensor p = tt::random_tensor({300}, st::f32, tt::LayoutKind::contiguous, rng);
    const RawTensor g = tt::random_tensor({300}, st::f32, tt::LayoutKind::permuted, rng);
    const RawTensor lr = st::raw::full({300}, 0.013, st::f32);
    const RawTensor want = st::raw::binary(BinaryOp::sub, p, st::raw::binary(BinaryOp::mul, g, lr));
    st::raw::axpby_(p, 1, g, -0.013);
    CHECK(tt::values(p) == tt::values(want));
  }
  SECTION("axpby_: a source sharing the destination's storage") {
    const RawTensor x = iota({6}, st::f64);
    st::raw::axpby_(x, 2, x, 3);  // exact alias: 5 x
    CHECK(tt::values(x) == std::vector<double>{0, 5, 10, 15, 20, 25});
    st::raw::axpby_(x, 1, x.flip(0), -1);  // x[i] - x_old[5 - i]
    CHECK(tt::values(x) == std::vector<double>{-25, -15, -5, 5, 15, 25});
    const RawTensor m = iota({2, 2}, st::f64);
    st::raw::axpby_(m, 1, m.transpose(0, 1), 1);  // m + m^T
    CHECK(tt::values(m) == std::vector<double>{0, 3, 3, 6});
  }
  SECTION("axpby_: an empty tensor is left as it is") {
    const RawTensor e = st::raw::empty({0, 3}, st::f32);
    st::raw::axpby_(e, 2, e, 1);
    CHECK(e.numel() == 0);
  }
}

TEST_CASE("adam_step_", "[raw]") {
  std::mt19937_64 rng(107);
  // Adam at step 3 (lr 0.01, betas 0.9 / 0.999), plain, with L2 decay, and AdamW's
  // decoupled decay; and Adam at step 1 with a large eps.
  const auto coefficients = [](int t, double l2, double decay, double eps) {
    return st::AdamStepCoefficients{.beta1 = 0.9,
                                    .beta2 = 0.999,
                                    .step = 0.01 / (1 - std::pow(0.9, t)),
                                    .sqrt_bc2 = std::sqrt(1 - std::pow(0.999, t)),
                                    .eps = eps,
                                    .l2 = l2,
                                    .decay = decay};
  };
  const st::AdamStepCoefficients cases[] = {
      coefficients(3, 0, 1, 1e-8), coefficients(3, 0.1, 1, 1e-8),
      coefficients(3, 0, 1 - 0.01 * 0.1, 1e-8), coefficients(1, 0, 1, 0.5)};
  SECTION("adam_step_: p, m and v through views, any gradient layout, both float dtypes") {
    for (DType t : {st::f32, st::f64}) {
      for (tt::LayoutKind gk : tt::kAllLayouts) {
        for (const st::AdamStepCoefficients& c : cases) {
          const RawTensor base = tt::random_tensor({4, 6}, t, tt::LayoutKind::contiguous, rng);
          const RawTensor p = base.slice(1, 0, 6, 2).flip(0);  // [4, 3], every other column
          const RawTensor m = tt::random_tensor({4, 3}, t, tt::LayoutKind::permuted, rng);
          const RawTensor v =
              st::raw::unary(st::UnaryOp::abs, tt::random_tensor({4, 3}, t, tt::LayoutKind::flipped,
                                                                 rng));  // a second moment: >= 0
          const RawTensor g = tt::random_tensor({4, 3}, t, gk, rng);
          const auto before = storage_values(base);
          const auto m0 = tt::values(m), v0 = tt::values(v), g0 = tt::values(g);
          const uint64_t pv = base.version(), mv = m.version(), vv = v.version();
          st::raw::adam_step_(p, m, v, g, c);
          // The update in double, each result within rounding of its terms' sizes.
          auto want_p = before;
          std::vector<double> scale_p(before.size(), 0.0);
          std::vector<double> want_m(12), want_v(12), scale_m(12), scale_v(12);
          std::size_t k = 0;
          tt::for_each_index({4, 3}, [&](const Idx& i) {
            const auto at = std::size_t(tt::storage_index(p, i));
            const double p0 = before[at];
            const double s = g0[k] + c.l2 * p0;
            want_m[k] = c.beta1 * m0[k] + (1 - c.beta1) * s;
            scale_m[k] = std::abs(c.beta1 * m0[k]) + std::abs((1 - c.beta1) * s);
            want_v[k] = c.beta2 * v0[k] + (1 - c.beta2) * s * s;
            scale_v[k] = want_v[k];
            const double d = std::sqrt(want_v[k]) / c.sqrt_bc2 + c.eps;
            want_p[at] = c.decay * p0 - c.step * want_m[k] / d;
            // The update's quotient carries m's error (relative to its terms) and d's.
            scale_p[at] = std::abs(c.decay * p0) + c.step * scale_m[k] / d;
            ++k;
          });
          const auto got_p = storage_values(base);
          const auto got_m = tt::values(m), got_v = tt::values(v);
          const double tol = 8 * tt::rel_tol(t);
          bool ok = got_p.size() == want_p.size();
          for (std::size_t q = 0; ok && q < got_p.size(); ++q) {
            ok = std::abs(got_p[q] - want_p[q]) <= tol * scale_p[q];
          }
          for (std::size_t q = 0; ok && q < 12; ++q) {
            ok = std::abs(got_m[q] - want_m[q]) <= tol * scale_m[q] &&
                 std::abs(got_v[q] - want_v[q]) <= tol * scale_v[q];
          }
          INFO("adam_step_ " << dname(t) << " gradient " << tt::layout_name(gk) << " l2 " << c.l2
                             << " decay " << c.decay << " eps " << c.eps);
          CHECK(ok);
          CHECK(base.version() > pv);
          CHECK(m.version() > mv);
          CHECK(v.version() > vv);
        }
      }
    }
  }
  SECTION("adam_step_: f32 gives the bits of torch.optim.Adam's ops, one at a time") {
    // The same update as a sequence of plain raw ops on f32 tensors (each coefficient
    // rounded to f32, every op rounded once): the fused pass gives their bits.
    using st::raw::binary;
    constexpr int64_t n = 1000;  // more than one vector block, and a remainder
    for (const st::AdamStepCoefficients& c : cases) {
      const RawTensor p = tt::random_tensor({n}, st::f32, tt::LayoutKind::contiguous, rng);
      const RawTensor m = tt::random_tensor({n}, st::f32, tt::LayoutKind::contiguous, rng);
      const RawTensor v = st::raw::unary(
          st::UnaryOp::abs, tt::random_tensor({n}, st::f32, tt::LayoutKind::contiguous, rng));
      const RawTensor g = tt::random_tensor({n}, st::f32, tt::LayoutKind::sliced, rng);
      auto k = [](double x) { return st::raw::full({n}, x, st::f32); };
      RawTensor s = g;
      if (c.l2 != 0) s = binary(BinaryOp::add, g, binary(BinaryOp::mul, k(c.l2), p));
      const RawTensor m1 = binary(BinaryOp::add, binary(BinaryOp::mul, k(c.beta1), m),
                                  binary(BinaryOp::mul, k(1 - c.beta1), s));
      const RawTensor v1 =
          binary(BinaryOp::add, binary(BinaryOp::mul, k(c.beta2), v),
                 binary(BinaryOp::mul, k(1 - c.beta2), binary(BinaryOp::mul, s, s)));
      const RawTensor d = binary(
          BinaryOp::add,
          binary(BinaryOp::div, st::raw::unary(st::UnaryOp::sqrt, v1), k(c.sqrt_bc2)), k(c.eps));
      const RawTensor p1 = binary(BinaryOp::add, binary(BinaryOp::mul, p, k(c.decay)),
                                  binary(BinaryOp::mul, k(-c.step), binary(BinaryOp::div, m1, d)));
      st::raw::adam_step_(p, m, v, g, c);
      INFO("l2 " << c.l2 << " decay " << c.decay << " eps " << c.eps);
      CHECK(tt::values(m) == tt::values(m1));
      CHECK(tt::values(v) == tt::values(v1));
      CHECK(tt::values(p) == tt::values(p1));
    }
  }
  SECTION("adam_step_: an infinite parameter without L2 decay stays infinite") {
    // Only the L2 form reads l2 p: with l2 = 0 an infinite p does not make the step NaN.
    const RawTensor p = tt::make({2}, st::f64, {kInf, -kInf});
    const RawTensor m = st::raw::full({2}, 0.0, st::f64), v = st::raw::full({2}, 0.0, st::f64);
    const RawTensor g = tt::make({2}, st::f64, {0.5, -0.25});
    st::raw::adam_step_(p, m, v, g, cases[0]);
    CHECK(tt::values(p) == std::vector<double>{kInf, -kInf});
    st::raw::adam_step_(p, m, v, g, cases[1]);  // with L2 decay the gradient is infinite
    CHECK(tt::values(m)[0] == kInf);
  }
  SECTION("adam_step_: a gradient sharing the storage of p, m or v") {
    const st::AdamStepCoefficients& c = cases[1];
    auto fresh = [&](const Shape& shape) {
      return st::raw::contiguous(
          tt::random_tensor(shape, st::f64, tt::LayoutKind::contiguous, rng));
    };
    // Each case against the same step with the gradient copied out first.
    auto check_alias = [&](const RawTensor& p, const RawTensor& m, const RawTensor& v,
                           const RawTensor& g) {
      const RawTensor p2 = st::raw::contiguous(p), m2 = st::raw::contiguous(m),
                      v2 = st::raw::contiguous(v), g2 = st::raw::contiguous(g);
      st::raw::adam_step_(p2, m2, v2, g2, c);
      st::raw::adam_step_(p, m, v, g, c);
      CHECK(tt::values(p) == tt::values(p2));
      CHECK(tt::values(m) == tt::values(m2));
      CHECK(tt::values(v) == tt::values(v2));
    };
    auto abs_of = [](const RawTensor& x) { return st::raw::unary(st::UnaryOp::abs, x); };
    const RawTensor p = fresh({6}), m = fresh({6}), v = abs_of(fresh({6}));
    check_alias(p, m, v, p);          // g is p itself
    check_alias(p, m, v, p.flip(0));  // g is p reversed: read before any write
    check_alias(p, m, v, m.flip(0));  // ... m reversed
    check_alias(p, m, v, v);          // g is v itself
    const RawTensor q = fresh({3, 3}), mq = fresh({3, 3}), vq = abs_of(fresh({3, 3}));
    check_alias(q, mq, vq, q.transpose(0, 1));
  }
  SECTION("adam_step_: an empty tensor is left as it is") {
    const RawTensor e = st::raw::empty({0, 3}, st::f32), f = st::raw::empty({0, 3}, st::f32),
                    h = st::raw::empty({0, 3}, st::f32);
    st::raw::adam_step_(e, f, h, e, cases[0]);
    CHECK(e.numel() == 0);
  }
}

TEST_CASE("in-place writes to a broadcast view throw and change nothing", "[raw]") {
  const RawTensor base = iota({1, 3});
  const RawTensor wide = base.expand({4, 3});
  const RawTensor src = iota({4, 3});
  const uint64_t v0 = base.version();
  SECTION("fill_") {
    CHECK_THROWS_AS(st::raw::fill_(wide, 1), st::ValueError);
    CHECK_THROWS_WITH(st::raw::fill_(wide, 1), Catch::Contains("fill_"));
  }
  SECTION("copy_") {
    CHECK_THROWS_AS(st::raw::copy_(wide, src), st::ValueError);
    CHECK_THROWS_WITH(st::raw::copy_(wide, src), Catch::Contains("broadcast"));
  }
  SECTION("binary_") {
    CHECK_THROWS_AS(st::raw::binary_(BinaryOp::add, wide, src), st::ValueError);
    CHECK_THROWS_WITH(st::raw::binary_(BinaryOp::add, wide, src), Catch::Contains("add"));
  }
  CHECK(base.version() == v0);
  CHECK(tt::values(base) == std::vector<double>{0, 1, 2});
}

TEST_CASE("a failed in-place division either leaves the tensor alone or bumps its version",
          "[raw]") {
  // An in-place write that changes elements without bumping the version would
  // let autodiff use an overwritten saved value unnoticed (DESIGN §2, §5).
  const RawTensor x = tt::make({4}, st::i64, {6, 8, 10, 12});
  const RawTensor d = tt::make({4}, st::i64, {2, 2, 0, 2});
  const uint64_t v0 = x.version();
  CHECK_THROWS_AS(st::raw::binary_(BinaryOp::div, x, d), st::ValueError);
  const bool unchanged = tt::values(x) == std::vector<double>{6, 8, 10, 12};
  INFO("after the throw x = " << x << " and version " << x.version() << " (was " << v0 << ")");
  CHECK((unchanged || x.version() > v0));
}
