// SPDX-License-Identifier: MIT
// Creation primitives (empty, full, from_host, arange, uniform, normal) and
// the host/device transfers (to_host, to_device on the CPU), against plain
// loops and reads straight from storage.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "support/elementwise_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
using st::DType;
using st::RawTensor;
using st::Shape;
using tt::dname;
using tt::kAllDTypes;
using tt::kInf;
using tt::kNaN;
using tt::numel_of;
using Idx = std::vector<int64_t>;

namespace {

constexpr DType kFloatDTypes[] = {st::f32, st::f64};

/// numpy.arange by its defining loop: start + i * step while below (above) stop.
std::vector<double> arange_loop(double start, double stop, double step) {
  std::vector<double> out;
  for (int64_t i = 0;; ++i) {
    const double x = start + double(i) * step;
    if (step > 0 ? x >= stop : x <= stop) break;
    out.push_back(x);
  }
  return out;
}

/// Sample moments of a tensor's elements.
struct Moments {
  double mean = 0, var = 0, skew = 0, kurt = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  const double n = double(v.size());
  for (double x : v) m.mean += x / n;
  for (double x : v) {
    const double d = x - m.mean;
    m.var += d * d / n;
    m.skew += d * d * d / n;
    m.kurt += d * d * d * d / n;
  }
  m.skew /= std::pow(m.var, 1.5);
  m.kurt /= m.var * m.var;
  return m;
}

template <class T>
void check_from_host_roundtrip(const Shape& s, std::mt19937_64& rng) {
  const DType t = st::dtype_v<T>;
  const auto vals = tt::random_values(numel_of(s), t, rng);
  // std::vector<bool> has no data(): use a plain array of bool.
  std::unique_ptr<T[]> host(new T[std::size_t(std::max<int64_t>(numel_of(s), 1))]);
  for (std::size_t i = 0; i < vals.size(); ++i) host[i] = T(vals[i]);
  const RawTensor x = st::raw::from_host(host.get(), s, t);
  INFO("from_host " << dname(t) << " shape " << s);
  CHECK(x.shape() == s);
  CHECK(x.dtype() == t);
  CHECK(x.is_contiguous());
  CHECK(tt::values(x) == vals);
  // The tensor owns a copy: changing the host buffer afterwards changes nothing.
  for (std::size_t i = 0; i < vals.size(); ++i) host[i] = T(!vals[i]);
  CHECK(tt::values(x) == vals);
  // And back.
  std::unique_ptr<T[]> back(new T[std::size_t(std::max<int64_t>(numel_of(s), 1))]);
  st::raw::to_host(x, back.get());
  bool same = true;
  for (std::size_t i = 0; i < vals.size(); ++i) same = same && double(back[i]) == vals[i];
  CHECK(same);
}

}  // namespace

TEST_CASE("empty", "[raw]") {
  SECTION("empty: shape, dtype, row-major layout, usable memory") {
    for (DType t : kAllDTypes) {
      for (const Shape& s : tt::sweep_shapes(21)) {
        const RawTensor x = st::raw::empty(s, t);
        INFO("empty " << dname(t) << " shape " << s);
        REQUIRE(x.defined());
        CHECK(x.shape() == s);
        CHECK(x.ndim() == s.ndim());
        CHECK(x.numel() == numel_of(s));
        CHECK(x.dtype() == t);
        CHECK(x.device() == tt::test_device());
        CHECK(x.offset() == 0);
        CHECK(x.strides() == st::contiguous_strides(s));
        CHECK(x.is_contiguous());
        CHECK(x.version() == 0);
        CHECK(x.storage()->bytes() >= std::size_t(x.numel()) * st::dtype_size(t));
        // Every element is writable and readable (AddressSanitizer guards the bounds).
        tt::edit_storage(x, [](double, int64_t p) { return double(p % 2); });
        CHECK(tt::values(x).size() == std::size_t(x.numel()));
      }
    }
  }
  SECTION("empty: two tensors never share storage") {
    const RawTensor a = st::raw::empty({4}, st::f32), b = st::raw::empty({4}, st::f32);
    CHECK(a.storage() != b.storage());
    CHECK(a.storage()->data() != b.storage()->data());
  }
  SECTION("empty: rank 0 has one element, size 0 none") {
    CHECK(st::raw::empty({}, st::f64).numel() == 1);
    CHECK(st::raw::empty({3, 0, 5}, st::f64).numel() == 0);
    CHECK(st::raw::empty({1 << 20, 0}, st::f64).numel() == 0);
  }
}

TEST_CASE("full", "[raw]") {
  const double fill_values[] = {0.0, 1.0, -2.5, 2.75, 1e10, -1e10, 0.25, kNaN, kInf, -kInf};
  for (DType t : kAllDTypes) {
    DYNAMIC_SECTION("full " << dname(t)) {
      for (double v : fill_values) {
        for (const Shape& s :
             {Shape{}, Shape{0}, Shape{3, 5}, Shape{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}}) {
          const RawTensor x = st::raw::full(s, v, t);
          INFO("full " << dname(t) << " value " << v << " shape " << s);
          CHECK(x.is_contiguous());
          CHECK(tt::first_mismatch(x, s, t, [&](const Idx&) { return tt::convert_ref(v, t); }) ==
                "");
        }
      }
    }
  }
  SECTION("full: integer extremes are exact") {
    const RawTensor x = st::raw::full({2}, 4611686018427387904.0, st::i64);  // 2^62
    CHECK(tt::get_int(x, {1}) == int64_t{1} << 62);
    CHECK(tt::get_int(st::raw::full({1}, 3e9, st::i32), {0}) == INT32_MAX);
    CHECK(tt::get_int(st::raw::full({1}, -3e9, st::i32), {0}) == INT32_MIN);
    CHECK(tt::get_int(st::raw::full({1}, 1e19, st::i64), {0}) == INT64_MAX);
  }
}

TEST_CASE("from_host and to_host", "[raw]") {
  std::mt19937_64 rng(31);
  const Shape shapes[] = {{}, {0}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 1, 3, 1, 2, 1, 1, 2, 1, 1, 2}};
  SECTION("from_host: every dtype round-trips") {
    for (const Shape& s : shapes) {
      check_from_host_roundtrip<bool>(s, rng);
      check_from_host_roundtrip<int32_t>(s, rng);
      check_from_host_roundtrip<int64_t>(s, rng);
      check_from_host_roundtrip<float>(s, rng);
      check_from_host_roundtrip<double>(s, rng);
    }
  }
  SECTION("from_host: null data is fine for zero elements") {
    CHECK(st::raw::from_host(nullptr, {0, 3}, st::f32).numel() == 0);
  }
  SECTION("from_host: exact 64-bit integers") {
    const int64_t v[] = {INT64_MIN, INT64_MAX, (int64_t{1} << 53) + 1};
    const RawTensor x = st::raw::from_host(v, {3}, st::i64);
    CHECK(tt::get_int(x, {0}) == INT64_MIN);
    CHECK(tt::get_int(x, {1}) == INT64_MAX);
    CHECK(tt::get_int(x, {2}) == (int64_t{1} << 53) + 1);
  }
  SECTION("to_host: any layout comes out row-major") {
    for (DType t : kAllDTypes) {
      for (const Shape& s : tt::sweep_shapes(32, 4)) {
        for (const auto& v : tt::layout_variants(s)) {
          const RawTensor x = v.make(s, t, rng);
          std::vector<unsigned char> host(std::size_t(x.numel()) * st::dtype_size(t) + 1, 0xAB);
          st::raw::to_host(x, host.data());
          INFO("to_host " << dname(t) << " shape " << s << " layout " << v.name);
          std::vector<double> got;
          for (int64_t i = 0; i < x.numel(); ++i) {
            const unsigned char* p = host.data() + std::size_t(i) * st::dtype_size(t);
            switch (t) {
              case DType::b8:
                got.push_back(*p ? 1 : 0);
                break;
              case DType::i32: {
                int32_t e;
                std::memcpy(&e, p, 4);
                got.push_back(e);
                break;
              }
              case DType::i64: {
                int64_t e;
                std::memcpy(&e, p, 8);
                got.push_back(double(e));
                break;
              }
              case DType::f32: {
                float e;
                std::memcpy(&e, p, 4);
                got.push_back(e);
                break;
              }
              case DType::f64: {
                double e;
                std::memcpy(&e, p, 8);
                got.push_back(e);
                break;
              }
            }
          }
          CHECK(got == tt::values(x));
          CHECK(host.back() == 0xAB);  // nothing written past the end
        }
      }
    }
  }
  SECTION("to_host: zero elements writes nothing, null destination allowed") {
    const RawTensor x = st::raw::empty({0, 2}, st::f32);
    st::raw::to_host(x, nullptr);
    SUCCEED();
  }
}

TEST_CASE("to_device onto the device a tensor is on", "[raw]") {
  std::mt19937_64 rng(33);
  for (tt::LayoutKind k : tt::kAllLayouts) {
    const RawTensor x = tt::random_tensor({3, 4}, st::f32, k, rng);
    const RawTensor y = st::raw::to_device(x, tt::test_device());
    INFO("to_device layout " << tt::layout_name(k));
    CHECK(y.device() == tt::test_device());
    CHECK(y.storage() == x.storage());  // already there: x itself
    CHECK(y.layout().strides == x.layout().strides);
    CHECK(y.offset() == x.offset());
    CHECK(tt::values(y) == tt::values(x));
  }
}

TEST_CASE("arange", "[raw]") {
  struct Case {
    double start, stop, step;
  };
  const Case cases[] = {
      {0, 10, 1},   {0, 10, 3},    {10, 0, -1},  {5, -3, -2},     {0, 1, 0.1},  {0, 0.3, 0.1},
      {-1, 1, 0.2}, {0, -1, -0.1}, {1, 0, -0.3}, {0.5, 2.6, 0.7}, {0, 1, 0.25}, {-2.5, 2.5, 0.5},
      {5, 0, 1},    {0, 0, 1},     {0, 5, -1},   {3, 3, -1},      {0, 1, 2},    {-7, -6, 0.125},
  };
  SECTION("arange: matches the loop for float dtypes") {
    for (DType t : kFloatDTypes) {
      for (const Case& c : cases) {
        const auto want = arange_loop(c.start, c.stop, c.step);
        const RawTensor x = st::raw::arange(c.start, c.stop, c.step, t);
        INFO("arange(" << c.start << ", " << c.stop << ", " << c.step << ") " << dname(t));
        CHECK(x.ndim() == 1);
        CHECK(tt::first_mismatch(x, {int64_t(want.size())}, t,
                                 [&](const Idx& i) { return want[std::size_t(i[0])]; }) == "");
      }
    }
  }
  SECTION("arange: integer dtypes with integer steps") {
    for (DType t : {st::i32, st::i64}) {
      for (const Case& c : cases) {
        if (c.step != std::trunc(c.step) || c.start != std::trunc(c.start)) continue;
        const auto want = arange_loop(c.start, c.stop, c.step);
        const RawTensor x = st::raw::arange(c.start, c.stop, c.step, t);
        INFO("arange(" << c.start << ", " << c.stop << ", " << c.step << ") " << dname(t));
        CHECK(tt::first_mismatch(x, {int64_t(want.size())}, t,
                                 [&](const Idx& i) { return want[std::size_t(i[0])]; }) == "");
      }
    }
  }
  SECTION("arange: no element reaches stop") {
    // "start, start + step, ... below stop": the documented contract, for
    // fractional steps where (stop - start) / step rounds up past an integer.
    const Case tricky[] = {
        {1, 1.3, 0.1}, {0, 0.7, 0.1}, {0.1, 0.7, 0.2}, {-1.3, -1, 0.1}, {1.3, 1, -0.1}};
    for (const Case& c : tricky) {
      const auto want = arange_loop(c.start, c.stop, c.step);
      const RawTensor x = st::raw::arange(c.start, c.stop, c.step, st::f64);
      INFO("arange(" << c.start << ", " << c.stop << ", " << c.step << ")");
      CHECK(x.numel() == int64_t(want.size()));
      for (double v : tt::values(x)) CHECK((c.step > 0 ? v < c.stop : v > c.stop));
    }
  }
  SECTION("arange: long ranges are exact in i64") {
    const RawTensor x = st::raw::arange(-50000, 50000, 1, st::i64);  // parallel path
    REQUIRE(x.numel() == 100000);
    bool ok = true;
    for (int64_t i = 0; i < x.numel(); ++i) ok = ok && tt::get_int(x, {i}) == i - 50000;
    CHECK(ok);
  }
}

TEST_CASE("uniform", "[raw][threads]") {
  SECTION("uniform: values in [0, 1) with plausible moments") {
    for (DType t : kFloatDTypes) {
      const RawTensor x = st::raw::uniform({200, 500}, 1234, t);
      CHECK(x.shape() == Shape{200, 500});
      CHECK(x.dtype() == t);
      const auto v = tt::values(x);
      bool in_range = true;
      for (double e : v) in_range = in_range && e >= 0 && e < 1;
      CHECK(in_range);
      const Moments m = moments(v);
      CHECK(m.mean == Approx(0.5).margin(0.01));
      CHECK(m.var == Approx(1.0 / 12).margin(0.003));
      CHECK(m.skew == Approx(0).margin(0.03));
      // Ten equal bins each hold about a tenth.
      std::vector<int> bins(10, 0);
      for (double e : v) ++bins[std::size_t(e * 10)];
      for (int b : bins) CHECK(double(b) / double(v.size()) == Approx(0.1).margin(0.005));
    }
  }
  SECTION("uniform: same seed, same values; another seed, other values") {
    const auto a = tt::values(st::raw::uniform({1000}, 7, st::f64));
    CHECK(a == tt::values(st::raw::uniform({1000}, 7, st::f64)));
    const auto b = tt::values(st::raw::uniform({1000}, 8, st::f64));
    int equal = 0;
    for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
    CHECK(equal < 5);
    // Neighbouring elements are not one stream shifted by one.
    int shifted = 0;
    for (std::size_t i = 0; i + 1 < a.size(); ++i) shifted += a[i + 1] == b[i];
    CHECK(shifted < 5);
  }
  SECTION("uniform: f32 and f64 streams agree to f32 rounding") {
    const auto a = tt::values(st::raw::uniform({5000}, 99, st::f32));
    const auto b = tt::values(st::raw::uniform({5000}, 99, st::f64));
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
    CHECK(worst <= 6e-8);
  }
  SECTION("uniform: element i depends only on (seed, i), not on shape or threads") {
    const auto flat = tt::values(st::raw::uniform({70000}, 5, st::f64));  // parallel path
    const auto small = tt::values(st::raw::uniform({100}, 5, st::f64));
    CHECK(std::equal(small.begin(), small.end(), flat.begin()));
    CHECK(tt::values(st::raw::uniform({350, 200}, 5, st::f64)) == flat);
    const int threads = st::num_threads();
    st::set_num_threads(1);
    const auto serial = tt::values(st::raw::uniform({70000}, 5, st::f64));
    st::set_num_threads(threads);
    CHECK(serial == flat);
  }
  SECTION("uniform: rank 0 and size 0") {
    const RawTensor s = st::raw::uniform({}, 3, st::f32);
    CHECK(s.numel() == 1);
    CHECK(tt::get(s, {}) >= 0);
    CHECK(tt::get(s, {}) < 1);
    CHECK(st::raw::uniform({4, 0}, 3, st::f32).numel() == 0);
  }
}

TEST_CASE("normal", "[raw][threads]") {
  SECTION("normal: plausible moments") {
    for (DType t : kFloatDTypes) {
      const auto v = tt::values(st::raw::normal({100000}, 2024, t));
      bool finite = true;
      for (double e : v) finite = finite && std::isfinite(e);
      CHECK(finite);
      const Moments m = moments(v);
      CHECK(m.mean == Approx(0).margin(0.015));
      CHECK(m.var == Approx(1).margin(0.03));
      CHECK(m.skew == Approx(0).margin(0.05));
      CHECK(m.kurt == Approx(3).margin(0.1));
      int within = 0;
      for (double e : v) within += std::fabs(e) < 1;
      CHECK(double(within) / double(v.size()) == Approx(0.6827).margin(0.01));
    }
  }
  SECTION("normal: same seed, same values; f32 and f64 agree to f32 rounding") {
    const auto a = tt::values(st::raw::normal({3000}, 11, st::f64));
    CHECK(a == tt::values(st::raw::normal({3000}, 11, st::f64)));
    CHECK(a != tt::values(st::raw::normal({3000}, 12, st::f64)));
    const auto f = tt::values(st::raw::normal({3000}, 11, st::f32));
    bool agree = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
      agree = agree && std::fabs(f[i] - a[i]) <= 1e-7 * std::max(1.0, std::fabs(a[i]));
    }
    CHECK(agree);
  }
  SECTION("normal: independent of shape and thread count") {
    const auto flat = tt::values(st::raw::normal({70000}, 6, st::f32));
    CHECK(tt::values(st::raw::normal({7, 10000}, 6, st::f32)) == flat);
    const int threads = st::num_threads();
    st::set_num_threads(1);
    const auto serial = tt::values(st::raw::normal({70000}, 6, st::f32));
    st::set_num_threads(threads);
    CHECK(serial == flat);
  }
  SECTION("normal and uniform: rank 12") {
    const Shape s = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
    CHECK(st::raw::normal(s, 1, st::f64).shape() == s);
    CHECK(tt::values(st::raw::uniform(s, 1, st::f64)) ==
          tt::values(st::raw::uniform({64}, 1, st::f64)));
  }
}
