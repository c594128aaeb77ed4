// SPDX-License-Identifier: MIT
// Tests for diff/tensor.hpp: the factories and accessors of DESIGN's exact
// spelling. Expected values are written out by hand or computed by loops here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <strata.hpp>
#include <thread>
#include <vector>

#include "support/device.hpp"

namespace st = strata;

TEST_CASE("copy_to writes a tensor's elements into a buffer of the caller's", "[diff]") {
  // A transposed view, converted to f32 on the way; the same values as to_vector.
  const st::Tensor a =
      st::transpose(st::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}), 0, 1);
  std::vector<double> d(6, -1.0);
  a.copy_to(std::span<double>(d));
  CHECK(d == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(d == a.to_vector<double>());
  std::vector<float> f(6);
  a.copy_to(std::span<float>(f));
  CHECK(f == std::vector<float>{1, 4, 2, 5, 3, 6});
  // Into part of a larger buffer, as a sparse layout fills its value list piece by piece.
  std::vector<int64_t> big(8, 7);
  st::from_vector(std::vector<int64_t>{-3, 9}).copy_to(std::span<int64_t>(big).subspan(3, 2));
  CHECK(big == std::vector<int64_t>{7, 7, 7, -3, 9, 7, 7, 7});
  bool mask[3] = {false, true, false};
  st::from_vector(std::vector<bool>{true, false, true}).copy_to(std::span<bool>(mask));
  CHECK((mask[0] && !mask[1] && mask[2]));
  // Sizes that differ, and an undefined tensor.
  std::vector<double> small(5);
  CHECK_THROWS_AS(a.copy_to(std::span<double>(small)), st::ValueError);
  CHECK_THROWS_WITH(a.copy_to(std::span<double>(small)), Catch::Contains("copy_to") &&
                                                             Catch::Contains("[3, 2]") &&
                                                             Catch::Contains("holds 5"));
  CHECK_THROWS_AS(st::Tensor().copy_to(std::span<double>(d)), st::Error);
}

TEST_CASE("Tensor factories", "[diff]") {
  SECTION("from_vector keeps values, shape and dtype") {
    st::Tensor a = st::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
    REQUIRE(a.dtype() == st::f64);
    REQUIRE(a.shape() == st::Shape{2, 3});
    REQUIRE(a.ndim() == 2);
    REQUIRE(a.numel() == 6);
    REQUIRE(a.device() == st::testing::test_device());
    REQUIRE(a.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
    std::vector<int64_t> dims(a.shape().begin(), a.shape().end());
    REQUIRE(dims == std::vector<int64_t>{2, 3});

    st::Tensor b = st::from_vector(std::vector<float>{1.5f, -2, 3});
    REQUIRE(b.dtype() == st::f32);
    REQUIRE(b.shape() == st::Shape{3});
    REQUIRE(b.to_vector<float>() == std::vector<float>{1.5f, -2, 3});

    st::Tensor i = st::from_vector(std::vector<int64_t>{2, 0}, {2});
    REQUIRE(i.dtype() == st::i64);
    REQUIRE(i.to_vector<int64_t>() == std::vector<int64_t>{2, 0});

    st::Tensor m = st::from_vector(std::vector<bool>{true, false, true}, {3, 1});
    REQUIRE(m.dtype() == st::bool_);
    REQUIRE(m.to_vector<bool>() == std::vector<bool>{true, false, true});
    REQUIRE(m.to_vector<int32_t>() == std::vector<int32_t>{1, 0, 1});
  }
  SECTION("zeros, ones, full") {
    st::Tensor z = st::zeros({2, 3});
    REQUIRE(z.dtype() == st::f32);
    REQUIRE(z.to_vector<float>() == std::vector<float>(6, 0.0f));
    REQUIRE(st::zeros({2, 3}, st::f64).dtype() == st::f64);
    st::Tensor o = st::ones({2, 3}, st::f64);
    REQUIRE(o.to_vector<double>() == std::vector<double>(6, 1.0));
    st::Tensor f = st::full({2}, 1.5, st::f64);
    REQUIRE(f.to_vector<double>() == std::vector<double>{1.5, 1.5});
    REQUIRE(st::full({}, 7, st::i32).item<int32_t>() == 7);
  }
  SECTION("arange") {
    st::Tensor r = st::arange(0, 10);
    REQUIRE(r.dtype() == st::i64);
    std::vector<int64_t> expected;
    for (int64_t v = 0; v < 10; ++v) expected.push_back(v);
    REQUIRE(r.to_vector<int64_t>() == expected);
    st::Tensor g = st::arange(0, 1, 0.25, st::f32);
    REQUIRE(g.to_vector<float>() == std::vector<float>{0, 0.25f, 0.5f, 0.75f});
    // numpy.arange(stop): from 0, with or without a dtype.
    REQUIRE(st::arange(3).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2});
    st::Tensor d = st::arange(4, st::f64);
    REQUIRE(d.dtype() == st::f64);
    REQUIRE(d.to_vector<double>() == std::vector<double>{0, 1, 2, 3});
    REQUIRE(st::arange(0).numel() == 0);
  }
  SECTION("eye") {
    st::Tensor e = st::eye(3, st::f64);
    REQUIRE(e.shape() == st::Shape{3, 3});
    REQUIRE(e.to_vector<double>() == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    REQUIRE(st::eye(0).numel() == 0);
  }
  SECTION("linspace") {
    st::Tensor l = st::linspace(0.0, 1.0, 5, st::f64);
    REQUIRE(l.to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75, 1.0});
    const auto v = st::linspace(-2.0, 3.0, 7, st::f64).to_vector<double>();
    REQUIRE(v.size() == 7);
    for (int i = 0; i < 7; ++i) REQUIRE(v[std::size_t(i)] == Approx(-2.0 + 5.0 * i / 6.0));
    REQUIRE(v.back() == 3.0);
    REQUIRE(st::linspace(2.0, 5.0, 1).to_vector<float>() == std::vector<float>{2.0f});
    REQUIRE(st::linspace(2.0, 5.0, 0).numel() == 0);
  }
  SECTION("randn and rand are seeded") {
    st::Tensor n = st::randn({3, 4}, /*seed=*/42, st::f64);
    REQUIRE(n.shape() == st::Shape{3, 4});
    REQUIRE(n.dtype() == st::f64);
    REQUIRE(n.to_vector<double>() == st::randn({3, 4}, 42, st::f64).to_vector<double>());
    REQUIRE(n.to_vector<double>() != st::randn({3, 4}, 43, st::f64).to_vector<double>());
    const auto u = st::rand({10000}, 7).to_vector<float>();
    double mean = 0;
    for (float x : u) {
      REQUIRE(x >= 0.0f);
      REQUIRE(x < 1.0f);
      mean += x / 10000.0;
    }
    REQUIRE(mean == Approx(0.5).margin(0.02));
  }
}

TEST_CASE("Tensor accessors and conversions", "[diff]") {
  st::Tensor a = st::from_vector(std::vector<double>{1.75, -2.5, 3, 4}, {2, 2});
  SECTION("item") {
    REQUIRE(st::from_vector(std::vector<double>{2.5}).item<double>() == 2.5);
    REQUIRE(st::full({1, 1}, 3, st::i64).item<int64_t>() == 3);
    REQUIRE(st::full({}, 1, st::bool_).item<bool>());
    REQUIRE_THROWS_AS(a.item<double>(), st::ValueError);
    REQUIRE_THROWS_WITH(a.item<double>(),
                        Catch::Contains("[2, 2]") && Catch::Contains("4 elements"));
  }
  SECTION("to(dtype) converts, truncating toward zero for integers") {
    st::Tensor i = a.to(st::i32);
    REQUIRE(i.dtype() == st::i32);
    REQUIRE(i.to_vector<int32_t>() == std::vector<int32_t>{1, -2, 3, 4});
    REQUIRE(a.to(st::f64).raw().storage() == a.raw().storage());  // already f64: no copy
    REQUIRE(a.to_vector<float>() == std::vector<float>{1.75f, -2.5f, 3, 4});
  }
  SECTION("to(device)") {
    REQUIRE(a.to(st::testing::test_device()).raw().storage() == a.raw().storage());
    REQUIRE_THROWS_AS(a.to(st::Device::cuda(st::cuda_device_count())), st::DeviceError);
  }
  SECTION("printing") {
    std::ostringstream os;
    os << a;
    REQUIRE(os.str() ==
            "tensor([[ 1.7500, -2.5000],\n        [ 3.0000,  4.0000]], shape=[2, 2], "
            "dtype=f64" +
                st::testing::device_suffix() + ")");
  }
  SECTION("bad input") {
    REQUIRE_THROWS_AS(st::from_vector(std::vector<float>{1, 2, 3}, {2, 2}), st::ShapeError);
    REQUIRE_THROWS_WITH(st::from_vector(std::vector<float>{1, 2, 3}, {2, 2}),
                        Catch::Contains("from_vector") && Catch::Contains("[2, 2]"));
    REQUIRE_THROWS_AS(st::zeros({-1}), st::ValueError);
    REQUIRE_THROWS_AS(st::linspace(0.0, 1.0, -2), st::ValueError);
    REQUIRE_THROWS_AS(st::eye(-1), st::ValueError);
    REQUIRE_THROWS_AS(st::randn({2}, 1, st::i64), st::DTypeError);
    st::Tensor undefined;
    REQUIRE_FALSE(undefined.defined());
    REQUIRE_THROWS_AS(undefined.to_vector<float>(), st::ValueError);
    REQUIRE_THROWS_AS(undefined.device(), st::ValueError);
  }
}

TEST_CASE("Tensor creation: counts that overflow name the op", "[diff]") {
  using Catch::Contains;
  const int64_t max = std::numeric_limits<int64_t>::max(), e40 = int64_t{1} << 40;
  SECTION("linspace: more points than memory or size_t holds") {
    // Used to reach std::vector's length_error / bad_alloc (foreign types).
    REQUIRE_THROWS_AS(st::linspace(0.0, 1.0, max), st::ValueError);
    REQUIRE_THROWS_WITH(st::linspace(0.0, 1.0, max), Contains("linspace") && Contains("overflow"));
    REQUIRE_THROWS_AS(st::linspace(0.0, 1.0, int64_t{1} << 60), st::ValueError);
    REQUIRE_THROWS_WITH(st::linspace(0.0, 1.0, int64_t{1} << 60), Contains("linspace"));
    // Still exact for ordinary counts.
    REQUIRE(st::linspace(1.0, 3.0, 3, st::f64).to_vector<double>() ==
            std::vector<double>{1.0, 2.0, 3.0});
  }
  SECTION("eye: n * n overflowing int64") {
    REQUIRE_THROWS_AS(st::eye(int64_t{1} << 32), st::ValueError);
    REQUIRE_THROWS_WITH(st::eye(int64_t{1} << 32), Contains("eye") && Contains("overflow"));
    REQUIRE_THROWS_AS(st::eye(max), st::ValueError);
  }
  SECTION("zeros, ones, full, rand, randn") {
    REQUIRE_THROWS_WITH(st::zeros({e40, e40}), Contains("full") && Contains("overflow"));
    REQUIRE_THROWS_WITH(st::ones({e40, e40}, st::f64), Contains("full") && Contains("overflow"));
    REQUIRE_THROWS_WITH(st::rand({e40, e40}, 1), Contains("uniform") && Contains("overflow"));
    REQUIRE_THROWS_WITH(st::randn({e40, e40}, 1), Contains("normal") && Contains("overflow"));
  }
  SECTION("arange") {
    REQUIRE_THROWS_AS(st::arange(0, 1e19), st::ValueError);
    REQUIRE_THROWS_WITH(st::arange(0, 1e19), Contains("arange"));
  }
  SECTION("from_vector with a shape whose count overflows") {
    REQUIRE_THROWS_AS(st::from_vector(std::vector<float>{1}, {e40, e40}), st::ValueError);
    REQUIRE_THROWS_WITH(st::from_vector(std::vector<float>{1}, {e40, e40}),
                        Contains("from_vector") && Contains("overflow"));
  }
  SECTION("reshape, expand and slicing through Tensor") {
    const st::Tensor x = st::arange(0, 6, 1, st::f64);
    REQUIRE_THROWS_WITH(x.reshape({-1, e40, e40}), Contains("reshape") && Contains("overflow"));
    const st::Tensor one = st::ones({1, 1});
    REQUIRE_THROWS_WITH(one.expand({e40, e40}), Contains("expand") && Contains("overflow"));
    // Steps at the int64 limits pick one element, exactly.
    REQUIRE(x.ix(st::slice(st::none, st::none, max)).to_vector<double>() == std::vector<double>{0});
    REQUIRE(x.ix(st::slice(st::none, st::none, std::numeric_limits<int64_t>::min()))
                .to_vector<double>() == std::vector<double>{5});
  }
}

TEST_CASE("creation without a device uses st::default_device()", "[diff][threads]") {
  // A CUDA device this machine does not have: creating a tensor on it must fail,
  // which shows the factory asked for it.
  const st::Device missing = st::Device::cuda(st::cuda_device_count());
  SECTION("no guard: the device under test (the runner's guard), else the CPU") {
    CHECK(st::zeros({2}).device() == st::testing::test_device());
    st::Device fresh = st::Device::cuda(9);
    std::thread([&] { fresh = st::zeros({2}).device(); }).join();
    CHECK(fresh == st::Device::cpu());
  }
  SECTION("under a guard, every factory asks for the guard's device") {
    const st::DefaultDevice on(missing);
    CHECK_THROWS_AS(st::zeros({2}), st::DeviceError);
    CHECK_THROWS_AS(st::ones({2}), st::DeviceError);
    CHECK_THROWS_AS(st::full({2}, 1.5), st::DeviceError);
    CHECK_THROWS_AS(st::arange(0, 3), st::DeviceError);
    CHECK_THROWS_AS(st::linspace(0, 1, 3), st::DeviceError);
    CHECK_THROWS_AS(st::eye(2), st::DeviceError);
    CHECK_THROWS_AS(st::randn({2}, 1), st::DeviceError);
    CHECK_THROWS_AS(st::rand({2}, 1), st::DeviceError);
    CHECK_THROWS_AS(st::from_vector(std::vector<float>{1, 2}), st::DeviceError);
    CHECK_THROWS_AS(st::raw::empty({2}, st::f32), st::DeviceError);
    CHECK_THROWS_AS(st::raw::full({2}, 0.0, st::f32), st::DeviceError);
    // An explicit device wins over the default.
    CHECK(st::zeros({2}, st::f32, st::Device::cpu()).device() == st::Device::cpu());
  }
  SECTION("ops on a tensor stay on its device whatever the default") {
    const st::Tensor x = st::ones({2}, st::f64, st::Device::cpu());
    const st::DefaultDevice on(missing);
    CHECK((x + 1.0).device() == st::Device::cpu());
    CHECK((2.0 * x).device() == st::Device::cpu());
    CHECK(st::where(x > 0.5, x, 0.0).device() == st::Device::cpu());
    CHECK(st::sum(x).device() == st::Device::cpu());
  }
  SECTION("the guard is gone at the end of its scope") {
    { const st::DefaultDevice on(missing); }
    CHECK(st::zeros({2}).device() == st::testing::test_device());
  }
}
