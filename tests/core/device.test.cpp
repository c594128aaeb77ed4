// SPDX-License-Identifier: MIT
// Tests for core/device.hpp: equality, and how a Device is written (to_string
// and operator<<), alone and inside an error message next to a Shape and a DType.
#include "core/device.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

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
