// SPDX-License-Identifier: MIT
// Bad input to the raw creation, elementwise and movement primitives: each
// throws the right st::Error subclass, and the message names the op and the
// shapes, dtypes or values involved (DESIGN §6, STYLE rule 8).
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "support/elementwise_ref.hpp"
#include "support/message_of.hpp"

namespace st = strata;
namespace tt = strata::testing;
using Catch::Contains;
using st::BinaryOp;
using st::DType;
using st::RawTensor;
using st::Shape;
using st::UnaryOp;
using tt::dname;
using tt::kAllDTypes;
using tt::kInf;
using tt::kNaN;
using tt::message_of;
using tt::raw_zeros;

namespace {

bool unary_supported(UnaryOp op, DType t) {
  switch (op) {
    case UnaryOp::neg:
    case UnaryOp::abs:
    case UnaryOp::sign:
      return t != st::bool_;
    case UnaryOp::logical_not:
      return t == st::bool_;
    default:
      return st::is_floating(t);
  }
}

bool binary_supported(BinaryOp op, DType t) {
  if (st::is_comparison(op)) return true;
  if (op == BinaryOp::logical_and || op == BinaryOp::logical_or) return t == st::bool_;
  if (op == BinaryOp::pow || op == BinaryOp::safe_mul || op == BinaryOp::safe_div) {
    return st::is_floating(t);
  }
  return t != st::bool_;
}

}  // namespace

TEST_CASE("binary: mismatched shapes and dtypes", "[raw]") {
  SECTION("binary: different shapes -> ShapeError naming both shapes") {
    const RawTensor a = raw_zeros({2, 3}), b = raw_zeros({4, 3});
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::add, a, b), st::ShapeError);
    const std::string msg =
        message_of<st::ShapeError>([&] { st::raw::binary(BinaryOp::add, a, b); });
    CHECK_THAT(msg, Contains("add"));
    CHECK_THAT(msg, Contains("[2, 3]"));
    CHECK_THAT(msg, Contains("[4, 3]"));
    // Different ranks, including a scalar, and broadcastable shapes (no broadcasting here).
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::mul, raw_zeros({3}), raw_zeros({1, 3})),
                    st::ShapeError);
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::mul, raw_zeros({}), raw_zeros({1})), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::binary(BinaryOp::lt, raw_zeros({2, 1}), raw_zeros({2, 5})),
                      Contains("lt") && Contains("[2, 1]") && Contains("[2, 5]"));
  }
  SECTION("binary: different dtypes -> DTypeError naming both dtypes") {
    const RawTensor a = raw_zeros({2}, st::f32), b = raw_zeros({2}, st::f64);
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::sub, a, b), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::binary(BinaryOp::sub, a, b),
                      Contains("sub") && Contains("f32") && Contains("f64"));
    CHECK_THROWS_WITH(
        st::raw::binary(BinaryOp::eq, raw_zeros({2}, st::i32), raw_zeros({2}, st::i64)),
        Contains("eq") && Contains("i32") && Contains("i64"));
  }
  SECTION("binary: unsupported dtypes -> DTypeError naming op and dtype") {
    for (const auto& row : st::kBinaryOps) {
      const BinaryOp op = row.op;
      for (DType t : kAllDTypes) {
        if (binary_supported(op, t)) continue;
        const RawTensor a = raw_zeros({3}, t);
        INFO(st::op_name(op) << " on " << st::dtype_name(t));
        CHECK_THROWS_AS(st::raw::binary(op, a, a), st::DTypeError);
        CHECK_THROWS_WITH(st::raw::binary(op, a, a), Contains(std::string(st::op_name(op))) &&
                                                         Contains(std::string(st::dtype_name(t))));
      }
    }
  }
  SECTION("logical_and on f32 -> DTypeError") {
    const RawTensor a = raw_zeros({2}, st::f32);
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::logical_and, a, a), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::binary(BinaryOp::logical_and, a, a),
                      Contains("logical_and") && Contains("f32"));
  }
}

TEST_CASE("unary: unsupported dtypes", "[raw]") {
  SECTION("exp on i64 -> DTypeError") {
    const RawTensor x = raw_zeros({2}, st::i64);
    CHECK_THROWS_AS(st::raw::unary(UnaryOp::exp, x), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::unary(UnaryOp::exp, x), Contains("exp") && Contains("i64"));
  }
  SECTION("every unsupported (op, dtype) pair -> DTypeError naming both") {
    for (const auto& row : st::kUnaryOps) {
      const UnaryOp op = row.op;
      for (DType t : kAllDTypes) {
        if (unary_supported(op, t)) continue;
        const RawTensor x = raw_zeros({3}, t);
        INFO(st::op_name(op) << " on " << st::dtype_name(t));
        CHECK_THROWS_AS(st::raw::unary(op, x), st::DTypeError);
        CHECK_THROWS_WITH(st::raw::unary(op, x), Contains(std::string(st::op_name(op))) &&
                                                     Contains(std::string(st::dtype_name(t))));
      }
    }
  }
}

TEST_CASE("where: bad inputs", "[raw]") {
  const RawTensor c = st::raw::full({2, 2}, 1, st::bool_);
  const RawTensor a = raw_zeros({2, 2}), b = raw_zeros({2, 2});
  SECTION("where: non-bool condition -> DTypeError") {
    const RawTensor fc = raw_zeros({2, 2}, st::f32);
    CHECK_THROWS_AS(st::raw::where(fc, a, b), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::where(fc, a, b), Contains("where") && Contains("f32"));
    CHECK_THROWS_AS(st::raw::where(raw_zeros({2, 2}, st::i64), a, b), st::DTypeError);
  }
  SECTION("where: shapes differ -> ShapeError") {
    CHECK_THROWS_AS(st::raw::where(c, a, raw_zeros({2, 3})), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::where(c, a, raw_zeros({2, 3})),
                      Contains("where") && Contains("[2, 3]"));
    CHECK_THROWS_AS(st::raw::where(st::raw::full({2}, 1, st::bool_), a, b), st::ShapeError);
  }
  SECTION("where: value dtypes differ -> DTypeError") {
    CHECK_THROWS_AS(st::raw::where(c, a, raw_zeros({2, 2}, st::f64)), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::where(c, a, raw_zeros({2, 2}, st::f64)),
                      Contains("where") && Contains("f32") && Contains("f64"));
  }
}

TEST_CASE("creation: bad inputs", "[raw]") {
  SECTION("empty: negative dim -> ValueError") {
    CHECK_THROWS_AS(st::raw::empty({2, -3}, st::f32), st::ValueError);
    CHECK_THROWS_WITH(st::raw::empty({2, -3}, st::f32), Contains("empty") && Contains("-3"));
    CHECK_THROWS_AS(st::raw::full({-1}, 0, st::f32), st::ValueError);
  }
  SECTION("empty: element count overflow -> ValueError") {
    const int64_t big = int64_t{1} << 40;
    CHECK_THROWS_AS(st::raw::empty({big, big}, st::f32), st::ValueError);
    CHECK_THROWS_WITH(st::raw::empty({big, big}, st::f32),
                      Contains("empty") && Contains("overflow"));
    // Element count fits int64 but the byte count does not.
    CHECK_THROWS_AS(st::raw::empty({int64_t{1} << 62}, st::f64), st::ValueError);
    CHECK_THROWS_WITH(st::raw::empty({int64_t{1} << 62}, st::f64), Contains("empty"));
  }
  SECTION("from_host: null data for a non-empty shape -> ValueError") {
    CHECK_THROWS_AS(st::raw::from_host(nullptr, {2}, st::f32), st::ValueError);
    CHECK_THROWS_WITH(st::raw::from_host(nullptr, {2}, st::f32), Contains("from_host"));
  }
  SECTION("arange: zero, NaN or infinite arguments -> ValueError") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(st::raw::arange(0, 10, 0, st::f32), st::ValueError);
    CHECK_THROWS_WITH(st::raw::arange(0, 10, 0, st::f32), Contains("arange"));
    CHECK_THROWS_AS(st::raw::arange(0, 10, nan, st::f32), st::ValueError);
    CHECK_THROWS_AS(st::raw::arange(0, inf, 1, st::f32), st::ValueError);
    CHECK_THROWS_AS(st::raw::arange(nan, 1, 1, st::f64), st::ValueError);
    CHECK_THROWS_AS(st::raw::arange(0, 1e300, 1e-300, st::f64), st::ValueError);
  }
  SECTION("uniform and normal: integer or bool dtype -> DTypeError") {
    for (DType t : {st::i32, st::i64, st::bool_}) {
      CHECK_THROWS_AS(st::raw::uniform({3}, 1, t), st::DTypeError);
      CHECK_THROWS_WITH(st::raw::uniform({3}, 1, t),
                        Contains("uniform") && Contains(std::string(st::dtype_name(t))));
      CHECK_THROWS_AS(st::raw::normal({3}, 1, t), st::DTypeError);
      CHECK_THROWS_WITH(st::raw::normal({3}, 1, t), Contains("normal"));
    }
  }
  SECTION("a CUDA device that does not exist -> DeviceError") {
    // One past the last device: absent on every machine, with or without a GPU.
    const int n = st::cuda_device_count();
    const st::Device missing = st::Device::cuda(n);
    const RawTensor x = raw_zeros({2});
    CHECK_THROWS_AS(st::raw::to_device(x, missing), st::DeviceError);
    CHECK_THROWS_WITH(st::raw::to_device(x, missing),
                      Contains("cuda:" + std::to_string(n)) && Contains("not available"));
    CHECK_THROWS_AS(st::raw::empty({2}, st::f32, missing), st::DeviceError);
    CHECK_THROWS_AS(st::raw::full({2}, 1, st::f32, st::Device::cuda(n + 1)), st::DeviceError);
    if (n == 0) {
      CHECK_THROWS_WITH(st::raw::empty({2}, st::f32, missing),
                        Contains(st::cuda_built() ? "no CUDA device was found"
                                                  : "this build of strata has no CUDA backend"));
    }
  }
}

TEST_CASE("movement: bad inputs", "[raw]") {
  const RawTensor x = raw_zeros({2, 3, 4});
  SECTION("reshape: wrong element count -> ShapeError") {
    CHECK_THROWS_AS(st::raw::reshape(x, {5, 5}), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::reshape(x, {5, 5}),
                      Contains("reshape") && Contains("[2, 3, 4]") && Contains("[5, 5]"));
    CHECK_THROWS_AS(st::raw::reshape(x, {5, -1}), st::ShapeError);
    CHECK_THROWS_AS(st::raw::reshape(x, {-1, -1}), st::ShapeError);
    CHECK_THROWS_AS(st::raw::reshape(x, {-2, -12}), st::ShapeError);
    CHECK_THROWS_AS(st::raw::reshape(x.transpose(0, 2), {7}), st::ShapeError);
  }
  SECTION("pad: wrong number of pairs -> ShapeError") {
    CHECK_THROWS_AS(st::raw::pad(x, {{1, 1}}), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::pad(x, {{1, 1}}), Contains("pad") && Contains("[2, 3, 4]"));
    CHECK_THROWS_AS(st::raw::pad(x, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}), st::ShapeError);
  }
  SECTION("pad: negative padding -> ValueError") {
    CHECK_THROWS_AS(st::raw::pad(x, {{0, 0}, {-1, 0}, {0, 0}}), st::ValueError);
    CHECK_THROWS_WITH(st::raw::pad(x, {{0, 0}, {-1, 0}, {0, 0}}),
                      Contains("pad") && Contains("-1"));
  }
  SECTION("pad: padded size overflowing int64 -> ValueError") {
    const int64_t huge = std::numeric_limits<int64_t>::max();
    CHECK_THROWS_AS(st::raw::pad(raw_zeros({2}), {{huge - 1, 0}}), st::ValueError);
    CHECK_THROWS_AS(st::raw::pad(raw_zeros({2}), {{huge, huge}}), st::ValueError);
  }
  SECTION("concat: mismatched shapes -> ShapeError") {
    CHECK_THROWS_AS(st::raw::concat({x, raw_zeros({2, 4, 4})}, 0), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::concat({x, raw_zeros({2, 4, 4})}, 0),
                      Contains("concat") && Contains("[2, 4, 4]") && Contains("[2, 3, 4]"));
    CHECK_THROWS_AS(st::raw::concat({x, raw_zeros({2, 3})}, 0), st::ShapeError);
  }
  SECTION("concat: empty list -> ValueError") {
    CHECK_THROWS_AS(st::raw::concat({}, 0), st::ValueError);
    CHECK_THROWS_WITH(st::raw::concat({}, 0), Contains("concat"));
  }
  SECTION("concat: bad axis -> IndexError") {
    CHECK_THROWS_AS(st::raw::concat({x, x}, 3), st::IndexError);
    CHECK_THROWS_WITH(st::raw::concat({x, x}, 3), Contains("concat") && Contains("3"));
    CHECK_THROWS_AS(st::raw::concat({x, x}, -4), st::IndexError);
    CHECK_THROWS_AS(st::raw::concat({raw_zeros({})}, 0), st::IndexError);
  }
  SECTION("concat: different dtypes -> DTypeError") {
    CHECK_THROWS_AS(st::raw::concat({x, raw_zeros({2, 3, 4}, st::f64)}, 0), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::concat({x, raw_zeros({2, 3, 4}, st::f64)}, 0),
                      Contains("concat") && Contains("f64"));
  }
  SECTION("views: bad axes, indices and shapes") {
    CHECK_THROWS_AS(x.permute({0, 1}), st::ShapeError);
    CHECK_THROWS_AS(x.permute({0, 0, 1}), st::ShapeError);
    CHECK_THROWS_AS(x.permute({0, 1, 3}), st::IndexError);
    CHECK_THROWS_AS(x.transpose(0, 3), st::IndexError);
    CHECK_THROWS_AS(x.expand({3, 3, 4}), st::ShapeError);
    CHECK_THROWS_AS(x.expand({3, 4}), st::ShapeError);
    CHECK_THROWS_AS(x.slice(1, 0, 2, 0), st::ValueError);
    CHECK_THROWS_AS(x.slice(5, 0, 2), st::IndexError);
    CHECK_THROWS_AS(x.select(1, 3), st::IndexError);
    CHECK_THROWS_WITH(x.select(1, -4), Contains("select") && Contains("-4"));
    CHECK_THROWS_AS(x.flip(-4), st::IndexError);
    CHECK_THROWS_AS(x.squeeze(0), st::ShapeError);
    CHECK_THROWS_AS(x.unsqueeze(5), st::IndexError);
    CHECK_THROWS_AS(x.view(st::Layout{{4, 4}, {4, 1}, 10}), st::ValueError);
    CHECK_THROWS_AS(x.view(st::Layout{{2}, {-1}, 0}), st::ValueError);
    CHECK_THROWS_AS(x.view(st::Layout{{2, 3}, {1}, 0}), st::ShapeError);
  }
}

TEST_CASE("in place: bad inputs", "[raw]") {
  const RawTensor x = raw_zeros({2, 3});
  SECTION("copy_: shapes differ -> ShapeError") {
    CHECK_THROWS_AS(st::raw::copy_(x, raw_zeros({3, 2})), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::copy_(x, raw_zeros({3, 2})),
                      Contains("copy_") && Contains("[2, 3]") && Contains("[3, 2]"));
  }
  SECTION("binary_: dtypes differ, comparison op, bool arithmetic") {
    CHECK_THROWS_AS(st::raw::binary_(BinaryOp::add, x, raw_zeros({2, 3}, st::f64)), st::DTypeError);
    CHECK_THROWS_AS(st::raw::binary_(BinaryOp::lt, x, x), st::ValueError);
    CHECK_THROWS_WITH(st::raw::binary_(BinaryOp::lt, x, x), Contains("lt"));
    const RawTensor b = raw_zeros({2}, st::bool_);
    CHECK_THROWS_AS(st::raw::binary_(BinaryOp::add, b, b), st::DTypeError);
    CHECK_THROWS_AS(
        st::raw::binary_(BinaryOp::div, raw_zeros({2}, st::i32), raw_zeros({2}, st::i32)),
        st::ValueError);
  }
  SECTION("axpby_: integer or mixed dtypes, shapes differ, a broadcast destination") {
    const RawTensor i = raw_zeros({2, 3}, st::i64);
    CHECK_THROWS_AS(st::raw::axpby_(i, 1, i, 1), st::DTypeError);
    CHECK_THROWS_WITH(st::raw::axpby_(i, 1, i, 1), Contains("axpby_") && Contains("i64"));
    CHECK_THROWS_AS(st::raw::axpby_(x, 1, raw_zeros({2, 3}, st::f64), 1), st::DTypeError);
    CHECK_THROWS_AS(st::raw::axpby_(x, 1, raw_zeros({3, 2}), 1), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::axpby_(x, 1, raw_zeros({3, 2}), 1),
                      Contains("axpby_") && Contains("[2, 3]") && Contains("[3, 2]"));
    const RawTensor row = raw_zeros({3});
    CHECK_THROWS_AS(st::raw::axpby_(row.expand({2, 3}), 1, x, 1), st::ValueError);
  }
  SECTION("adam_step_: integer or mixed dtypes, shapes differ, broadcast or shared storage") {
    const st::AdamStepCoefficients c{
        .beta1 = 0.9, .beta2 = 0.999, .step = 0.1, .sqrt_bc2 = 0.5, .eps = 1e-8};
    const RawTensor m = raw_zeros({2, 3}), v = raw_zeros({2, 3}), g = raw_zeros({2, 3});
    const RawTensor i = raw_zeros({2, 3}, st::i64);
    CHECK_THROWS_AS(st::raw::adam_step_(i, raw_zeros({2, 3}, st::i64), raw_zeros({2, 3}, st::i64),
                                        raw_zeros({2, 3}, st::i64), c),
                    st::DTypeError);
    CHECK_THROWS_WITH(st::raw::adam_step_(i, raw_zeros({2, 3}, st::i64), raw_zeros({2, 3}, st::i64),
                                          raw_zeros({2, 3}, st::i64), c),
                      Contains("adam_step_") && Contains("i64"));
    CHECK_THROWS_AS(st::raw::adam_step_(x, m, v, raw_zeros({2, 3}, st::f64), c), st::DTypeError);
    CHECK_THROWS_AS(st::raw::adam_step_(x, raw_zeros({2, 3}, st::f64), v, g, c), st::DTypeError);
    CHECK_THROWS_AS(st::raw::adam_step_(x, m, raw_zeros({3, 2}), g, c), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::adam_step_(x, m, v, raw_zeros({3, 2}), c),
                      Contains("adam_step_") && Contains("[2, 3]") && Contains("[3, 2]"));
    const RawTensor row = raw_zeros({3});
    CHECK_THROWS_AS(st::raw::adam_step_(x, row.expand({2, 3}), v, g, c), st::ValueError);
    CHECK_THROWS_AS(st::raw::adam_step_(x, m, row.expand({2, 3}), g, c), st::ValueError);
    CHECK_THROWS_AS(st::raw::adam_step_(x, x, v, g, c), st::ValueError);
    const RawTensor both = raw_zeros({2, 2, 3});  // m and v as two halves of one buffer
    CHECK_THROWS_AS(st::raw::adam_step_(x, both.select(0, 0), both.select(0, 1), g, c),
                    st::ValueError);
    CHECK_THROWS_WITH(st::raw::adam_step_(x, both.select(0, 0), both.select(0, 1), g, c),
                      Contains("adam_step_") && Contains("separate"));
  }
  SECTION("a rejected in-place op does not bump the version") {
    const uint64_t v0 = x.version();
    CHECK_THROWS(st::raw::copy_(x, raw_zeros({3, 2})));
    CHECK_THROWS(st::raw::binary_(BinaryOp::add, x, raw_zeros({2, 3}, st::f64)));
    CHECK_THROWS(st::raw::axpby_(x, 1, raw_zeros({2, 3}, st::f64), 1));
    const st::AdamStepCoefficients c{
        .beta1 = 0.9, .beta2 = 0.999, .step = 0.1, .sqrt_bc2 = 1, .eps = 1e-8};
    CHECK_THROWS(st::raw::adam_step_(x, raw_zeros({2, 3}), raw_zeros({2, 3}),
                                     raw_zeros({2, 3}, st::f64), c));
    CHECK_THROWS(st::raw::adam_step_(x, raw_zeros({2, 3}), x, raw_zeros({2, 3}), c));
    CHECK(x.version() == v0);
  }
}

TEST_CASE("undefined (default-constructed) tensors -> ValueError", "[raw]") {
  const RawTensor u;
  const RawTensor x = raw_zeros({2});
  REQUIRE_FALSE(u.defined());
  SECTION("elementwise") {
    CHECK_THROWS_AS(st::raw::unary(UnaryOp::neg, u), st::ValueError);
    CHECK_THROWS_WITH(st::raw::unary(UnaryOp::neg, u), Contains("neg") && Contains("undefined"));
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::add, u, x), st::ValueError);
    CHECK_THROWS_AS(st::raw::binary(BinaryOp::add, x, u), st::ValueError);
    CHECK_THROWS_AS(st::raw::where(u, x, x), st::ValueError);
  }
  SECTION("creation and transfer") {
    double buf[2];
    CHECK_THROWS_AS(st::raw::to_host(u, buf), st::ValueError);
    CHECK_THROWS_AS(st::raw::to_device(u, st::Device::cpu()), st::ValueError);
  }
  SECTION("movement") {
    CHECK_THROWS_AS(st::raw::contiguous(u), st::ValueError);
    CHECK_THROWS_AS(st::raw::reshape(u, {1}), st::ValueError);
    CHECK_THROWS_AS(st::raw::pad(u, {}), st::ValueError);
    CHECK_THROWS_AS(st::raw::concat({x, u}, 0), st::ValueError);
    CHECK_THROWS_AS(st::raw::cast(u, st::f64), st::ValueError);
    CHECK_THROWS_WITH(st::raw::cast(u, st::f64), Contains("cast"));
  }
  SECTION("in place") {
    CHECK_THROWS_AS(st::raw::fill_(u, 0), st::ValueError);
    CHECK_THROWS_AS(st::raw::copy_(u, x), st::ValueError);
    CHECK_THROWS_AS(st::raw::copy_(x, u), st::ValueError);
    CHECK_THROWS_AS(st::raw::binary_(BinaryOp::add, u, x), st::ValueError);
    CHECK_THROWS_AS(st::raw::axpby_(u, 1, x, 1), st::ValueError);
    CHECK_THROWS_AS(st::raw::axpby_(x, 1, u, 1), st::ValueError);
    const st::AdamStepCoefficients c{
        .beta1 = 0.9, .beta2 = 0.999, .step = 0.1, .sqrt_bc2 = 1, .eps = 1e-8};
    CHECK_THROWS_AS(st::raw::adam_step_(u, raw_zeros({2}), raw_zeros({2}), x, c), st::ValueError);
    CHECK_THROWS_AS(st::raw::adam_step_(x, raw_zeros({2}), raw_zeros({2}), u, c), st::ValueError);
  }
  SECTION("accessors that need storage") {
    // Found on the first GPU run: device() of an undefined tensor read through a null pointer.
    CHECK_THROWS_AS(u.device(), st::ValueError);
    CHECK_THROWS_WITH(u.device(), Contains("device") && Contains("undefined"));
    CHECK_THROWS_AS(u.version(), st::ValueError);
    CHECK_THROWS_WITH(u.data<float>(), Contains("data") && Contains("undefined"));
    // The accessors that need none still answer.
    CHECK(u.ndim() == 0);
  }
}

TEST_CASE("every raw error derives from st::Error", "[raw]") {
  const RawTensor x = raw_zeros({2, 3});
  CHECK_THROWS_AS(st::raw::binary(BinaryOp::add, x, raw_zeros({3, 2})), st::Error);   // ShapeError
  CHECK_THROWS_AS(st::raw::unary(UnaryOp::exp, raw_zeros({2}, st::i64)), st::Error);  // DTypeError
  CHECK_THROWS_AS(st::raw::empty({-1}, st::f32), st::Error);                          // ValueError
  CHECK_THROWS_AS(st::raw::concat({x}, 7), st::Error);                                // IndexError
  CHECK_THROWS_AS(st::raw::to_device(x, st::Device::cuda(st::cuda_device_count())),
                  st::Error);                                             // DeviceError
  CHECK_THROWS_AS(st::raw::unary(UnaryOp::neg, RawTensor()), st::Error);  // ValueError
  CHECK_THROWS_AS(st::raw::empty({-1}, st::f32), std::runtime_error);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::ShapeError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::IndexError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::DTypeError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::DeviceError>);
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::ValueError>);
}

TEST_CASE("overflow: every entry taking user sizes names its op", "[raw]") {
  // DESIGN §6: element counts, byte counts, strides and offsets built from
  // user values are checked; an overflow is a ValueError naming the public op.
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  const int64_t e40 = int64_t{1} << 40, e62 = int64_t{1} << 62;
  SECTION("view (as_strided): the reach of the strides past int64") {
    // The case: 16 elements of storage, strides 2^61 on [2, 2, 2, 2]:
    // the last element sits at 4 * 2^61 = 2^63, past INT64_MAX; the span used
    // to wrap around, pass the bounds check, and reading the view segfaulted.
    const RawTensor x = raw_zeros({16});
    const int64_t s = int64_t{1} << 61;
    const st::Layout bad{{2, 2, 2, 2}, {s, s, s, s}, 0};
    CHECK_THROWS_AS(x.view(bad), st::ValueError);
    CHECK_THROWS_WITH(x.view(bad), Contains("view") && Contains("[2, 2, 2, 2]") &&
                                       Contains("2305843009213693952"));
    CHECK_THROWS_WITH(RawTensor(x.storage(), bad, st::f32), Contains("RawTensor"));
    const st::Layout negative{{2, 2, 2, 2, 2}, {-s, -s, -s, -s, -s}, 15};
    CHECK_THROWS_AS(x.view(negative), st::ValueError);
    CHECK_THROWS_AS(x.view(st::Layout{{2}, {1}, max}), st::ValueError);
    CHECK_THROWS_AS(x.view(st::Layout{{2}, {max}, 0}), st::ValueError);
    CHECK_THROWS_AS(x.view(st::Layout{{e40, e40}, {0, 0}, 0}), st::ValueError);
    // A wide stride that stays in range is still a bounds error, not an overflow.
    CHECK_THROWS_WITH(x.view(st::Layout{{2}, {e62}, 0}), Contains("outside a storage of 16"));
    // And a legal view through the same door reads the right elements.
    const RawTensor r = st::raw::arange(0, 16, 1, st::f32);
    CHECK(tt::values(r.view(st::Layout{{2, 2}, {-8, 3}, 9})) == std::vector<double>{9, 12, 1, 4});
  }
  SECTION("creation: empty, full, from_host, uniform, normal") {
    CHECK_THROWS_WITH(st::raw::empty({e40, e40}, st::f32),
                      Contains("empty") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::full({e40, e40}, 1, st::f32),
                      Contains("full") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::full({e62}, 1, st::f64),
                      Contains("full") && Contains("overflow"));  // bytes
    CHECK_THROWS_WITH(st::raw::from_host(nullptr, {e40, e40}, st::f32),
                      Contains("from_host") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::uniform({e40, e40}, 1, st::f32),
                      Contains("uniform") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::normal({e40, e40}, 1, st::f64),
                      Contains("normal") && Contains("overflow"));
    for (DType t : {st::f32, st::f64, st::i64}) {
      CHECK_THROWS_AS(st::raw::full({max}, 0, t), st::ValueError);
    }
    // Counts that fit int64 and size_t but no memory: the allocator's error
    // under the op's name (2^62 bytes is past its largest request).
    CHECK_THROWS_AS(st::raw::full({e62 / 2 + 1}, 0, st::f32), st::ValueError);
    CHECK_THROWS_WITH(st::raw::full({e62 / 2 + 1}, 0, st::f32),
                      Contains("full") && Contains("larger than any memory"));
  }
  SECTION("arange: counts past int64, size_t or memory") {
    CHECK_THROWS_WITH(st::raw::arange(0, 1e19, 1, st::f32),
                      Contains("arange") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::arange(-4e18, 4e18, 1, st::f64), Contains("arange"));
    CHECK_THROWS_AS(st::raw::arange(-4e18, 4e18, 1, st::f64), st::ValueError);
    CHECK_THROWS_AS(st::raw::arange(0, 1e18, 1, st::i64), st::ValueError);  // 8e18 bytes
    CHECK_THROWS_WITH(st::raw::arange(0, 1e18, 1, st::i64), Contains("arange"));
    CHECK_THROWS_AS(st::raw::arange(1e18, 0, -1, st::i64), st::ValueError);
  }
  SECTION("expand to a shape whose element count overflows") {
    const RawTensor one = raw_zeros({1, 1});
    CHECK_THROWS_AS(one.expand({e40, e40}), st::ValueError);
    CHECK_THROWS_WITH(one.expand({e40, e40}), Contains("expand") && Contains("overflow"));
    CHECK_THROWS_WITH(one.expand({4, e40, e40}), Contains("expand") && Contains("overflow"));
    CHECK(one.expand({e62, 1}).numel() == e62);  // just fits: a view, no memory
  }
  SECTION("reshape to a shape whose element count overflows") {
    const RawTensor none = raw_zeros({0});
    CHECK_THROWS_AS(st::raw::reshape(none, {0, e40, e40}), st::ValueError);
    CHECK_THROWS_WITH(st::raw::reshape(none, {0, e40, e40}),
                      Contains("reshape") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::reshape(raw_zeros({4}), {-1, e40, e40}),
                      Contains("reshape") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::reshape(raw_zeros({4}), {e40, e40, 4}),
                      Contains("reshape") && Contains("overflow"));
  }
  SECTION("slice and select with extreme steps and positions") {
    const RawTensor r = st::raw::arange(0, 10, 1, st::f64);
    CHECK(tt::values(r.slice(0, std::nullopt, std::nullopt, max)) == std::vector<double>{0});
    CHECK(tt::values(r.slice(0, std::nullopt, std::nullopt, min)) == std::vector<double>{9});
    CHECK(tt::values(r.slice(0, min, max, max - 1)) == std::vector<double>{0});
    CHECK(tt::values(r.slice(0, max, min, min + 1)) == std::vector<double>{9});
    CHECK(r.slice(0, max, min).numel() == 0);
    CHECK_THROWS_AS(r.select(0, min), st::IndexError);
    CHECK_THROWS_AS(r.select(0, max), st::IndexError);
    // On a broadcast view with 2^62 positions the slice is still exact.
    const RawTensor wide = r.slice(0, 3, 4).expand({e62});
    CHECK(tt::values(wide.slice(0, e62 - 2, std::nullopt, max)) == std::vector<double>{3});
  }
  SECTION("pad: per-axis sizes fit, the element count does not") {
    CHECK_THROWS_AS(st::raw::pad(raw_zeros({2, 2}), {{e40, 0}, {0, e40}}), st::ValueError);
    CHECK_THROWS_WITH(st::raw::pad(raw_zeros({2, 2}), {{e40, 0}, {0, e40}}),
                      Contains("pad") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::pad(raw_zeros({2}), {{max, max}}),
                      Contains("pad") && Contains("overflow"));
  }
  SECTION("concat: the joined axis, or the element count, overflows") {
    const RawTensor long_row = raw_zeros({1}).expand({e62});
    CHECK_THROWS_WITH(st::raw::concat({long_row, long_row}, 0),
                      Contains("concat") && Contains("overflow"));
    const RawTensor half = raw_zeros({1, 1}).expand({int64_t{1} << 31, int64_t{1} << 31});
    CHECK_THROWS_AS(st::raw::concat({half, half}, 0), st::ValueError);
    CHECK_THROWS_WITH(st::raw::concat({half, half}, 0), Contains("concat") && Contains("overflow"));
  }
  SECTION("matmul: a result element count that overflows") {
    const RawTensor col = raw_zeros({1, 1}).expand({e62, 1});
    const RawTensor row = raw_zeros({1, 1}).expand({1, e62});
    CHECK_THROWS_WITH(st::raw::matmul(col, row), Contains("matmul") && Contains("overflow"));
    // Batch dims that broadcast to an overflowing count.
    const RawTensor ba = raw_zeros({1, 1, 1}).expand({e40, 1, 1});
    const RawTensor bb = raw_zeros({1, 1, 1, 1}).expand({e40, 1, 1, 1});
    CHECK_THROWS_WITH(st::raw::matmul(ba, bb), Contains("matmul") && Contains("overflow"));
  }
  SECTION("index_select / index_add: index values at the int64 limits") {
    const RawTensor x = raw_zeros({4, 3});
    for (int64_t v : {min, min + 1, max, int64_t{-5}, int64_t{4}}) {
      INFO("index " << v);
      std::vector<int64_t> host{1, v};
      const RawTensor bad = st::raw::from_host(host.data(), {2}, st::i64);
      CHECK_THROWS_AS(st::raw::index_select(x, 0, bad), st::IndexError);
      CHECK_THROWS_WITH(st::raw::index_select(x, 0, bad),
                        Contains("index_select") && Contains(std::to_string(v)));
      CHECK_THROWS_AS(st::raw::index_add(x, 0, bad, raw_zeros({2, 3})), st::IndexError);
      CHECK_THROWS_WITH(st::raw::index_add(x, 0, bad, raw_zeros({2, 3})), Contains("index_add"));
    }
    // A result shape (index dims replacing the axis) that overflows.
    const RawTensor row = raw_zeros({1, 1}).expand({1, e62});
    const RawTensor many = st::raw::full({1}, 0, st::i64).expand({8});
    CHECK_THROWS_WITH(st::raw::index_select(row, 0, many),
                      Contains("index_select") && Contains("overflow"));
    CHECK_THROWS_WITH(st::raw::index_add(row, 0, many, raw_zeros({1, 1}).expand({8, 1})),
                      Contains("index_add") && Contains("overflow"));
  }
}
