// SPDX-License-Identifier: MIT
// Tests for core/device.hpp: equality, and how a Device is written (to_string
// and operator<<), alone and inside an error message next to a Shape and a DType;
// the per-thread default device and its DefaultDevice guard.
#include "core/device.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/shape.hpp"

namespace st = strata;

TEST_CASE("Device", "[core]") {
  SECTION("kinds, indices and equality") {
    STATIC_REQUIRE(st::Device().is_cpu());
    STATIC_REQUIRE(st::Device::cuda(2).index() == 2);
    STATIC_REQUIRE(st::Device::cuda().is_cuda());
    STATIC_REQUIRE(st::Device::cpu() == st::Device());
    STATIC_REQUIRE(st::Device::cuda(0) != st::Device::cuda(1));
    STATIC_REQUIRE(st::Device::cuda(0) != st::Device::cpu());
  }
  SECTION("to_string and operator<<") {
    CHECK(st::to_string(st::Device::cpu()) == "cpu");
    CHECK(st::to_string(st::Device::cuda(0)) == "cuda:0");
    CHECK(st::to_string(st::Device::cuda(13)) == "cuda:13");
    std::ostringstream os;
    os << st::Device::cpu() << ' ' << st::Device::cuda(1);
    CHECK(os.str() == "cpu cuda:1");
  }
  SECTION("in an error message, with a Shape and a DType") {
    CHECK_THROWS_WITH(st::detail::fail<st::DeviceError>("matmul", "operands on ", st::Device::cpu(),
                                                        " and ", st::Device::cuda(1), ", shape ",
                                                        st::Shape{2, 3}, ", dtype ", st::f32),
                      "matmul: operands on cpu and cuda:1, shape [2, 3], dtype f32");
    CHECK_THROWS_AS(st::detail::fail<st::DeviceError>("op", st::Device::cuda(0)), st::DeviceError);
  }
}

TEST_CASE("DefaultDevice: a scoped, per-thread default device", "[core][threads]") {
  // The runner (tests/main.cpp) may itself hold a guard (STRATA_TEST_DEVICE): compare with it.
  const st::Device before = st::default_device();
  SECTION("the CPU unless a guard says otherwise") {
    st::Device fresh = st::Device::cuda(9);
    std::thread([&] { fresh = st::default_device(); }).join();
    CHECK(fresh == st::Device::cpu());
  }
  SECTION("guards nest and each restores the default it found") {
    {
      const st::DefaultDevice outer(st::Device::cuda(1));
      CHECK(st::default_device() == st::Device::cuda(1));
      {
        const st::DefaultDevice inner(st::Device::cuda(3));
        CHECK(st::default_device() == st::Device::cuda(3));
        {
          const st::DefaultDevice cpu(st::Device::cpu());
          CHECK(st::default_device() == st::Device::cpu());
        }
        CHECK(st::default_device() == st::Device::cuda(3));
      }
      CHECK(st::default_device() == st::Device::cuda(1));
    }
    CHECK(st::default_device() == before);
  }
  SECTION("restored when an exception leaves the scope") {
    try {
      const st::DefaultDevice on(st::Device::cuda(2));
      throw std::runtime_error("leaving");
    } catch (const std::runtime_error&) {
    }
    CHECK(st::default_device() == before);
  }
  SECTION("per thread: another thread still sees the CPU, and sets its own") {
    const st::DefaultDevice on(st::Device::cuda(5));
    st::Device seen = st::Device::cuda(9), set = st::Device::cuda(9);
    std::thread t([&] {
      seen = st::default_device();
      const st::DefaultDevice mine(st::Device::cuda(7));
      set = st::default_device();
    });
    t.join();
    CHECK(seen == st::Device::cpu());
    CHECK(set == st::Device::cuda(7));
    CHECK(st::default_device() == st::Device::cuda(5));  // untouched by the other thread
  }
}
