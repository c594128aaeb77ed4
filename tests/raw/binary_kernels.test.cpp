// SPDX-License-Identifier: MIT
// The plain binary kernels of jit's fused blocks (raw/cpu/vmath.hpp's binary_f32/binary_f64:
// add, sub, mul, div, maximum, minimum) against the scalar functors of raw/scalar/binary.hpp,
// bit for bit, on every instruction set this CPU runs, both operands dense or one broadcast,
// at every length around the vector widths, on values holding NaNs of both signs and distinct
// payloads, zeros of both signs, infinities and ties. A kernel may decline a block where two
// NaNs meet (it returns false, and the caller recomputes the block): only there. And the eager
// raw::binary, which runs these kernels on dense blocks: the functors' bits on dense,
// broadcast, transposed and in-place layouts.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "raw/cpu/vmath.hpp"
#include "raw/ops.hpp"
#include "raw/scalar_ops.hpp"
#include "support/each_isa.hpp"
#include "support/float_bits.hpp"

namespace vm = strata::detail::vmath;
namespace sc = strata::detail::scalar;
using strata::testing::nan_with;
using strata::testing::same_float_bits;

namespace {

/// n values: special ones (every NaN distinct) at fixed places, small integers (ties), normals.
template <class T>
std::vector<T> draw_operands(std::size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch ((i + seed) % 9) {
      case 0:
        v[i] = nan_with<T>(1 + i + seed, i % 2 == 1);
        break;
      case 1:
        v[i] = i % 2 ? T(0) : -T(0);
        break;
      case 2:
        v[i] = i % 2 ? inf : -inf;
        break;
      case 3:
        v[i] = T(int(normal(gen)) % 3);
        break;
      default:
        v[i] = T(normal(gen));
    }
  }
  return v;
}

template <class T, class F>
void check_op(bool (*kernel)(const T*, int64_t, const T*, int64_t, T*, int64_t), F f) {
  REQUIRE(kernel != nullptr);
  for (const int64_t sa : {1, 0}) {
    for (const int64_t sb : {1, 0}) {
      for (int64_t n = 1; n <= 40; ++n) {
        for (const uint64_t seed : {1u, 2u, 5u}) {
          const std::vector<T> a = draw_operands<T>(std::size_t(n), seed),
                               b = draw_operands<T>(std::size_t(n), seed + 3);
          std::vector<T> o(static_cast<std::size_t>(n));
          const bool clean = kernel(a.data(), sa, b.data(), sb, o.data(), n);
          bool two_nans = false;
          bool equal = true;
          for (int64_t i = 0; i < n; ++i) {
            const T x = a[std::size_t(i * sa)], y = b[std::size_t(i * sb)];
            two_nans = two_nans || (std::isnan(x) && std::isnan(y));
            equal = equal && same_float_bits(o[std::size_t(i)], f(x, y));
          }
          INFO("n " << n << " sa " << sa << " sb " << sb << " seed " << seed);
          CHECK(clean == !two_nans);  // declines exactly where two NaNs meet
          if (clean) CHECK(equal);
        }
      }
    }
  }
}

template <class T>
void check_binary_isa(const vm::Kernels& k) {
  auto table = [&](int fn) {
    if constexpr (sizeof(T) == 4) {
      return k.binary_f32[fn];
    } else {
      return k.binary_f64[fn];
    }
  };
  check_op<T>(table(vm::kAdd), [](T x, T y) { return sc::Add{}(x, y); });
  check_op<T>(table(vm::kSub), [](T x, T y) { return sc::Sub{}(x, y); });
  check_op<T>(table(vm::kMul), [](T x, T y) { return sc::Mul{}(x, y); });
  check_op<T>(table(vm::kDiv), [](T x, T y) { return sc::Div{}(x, y); });
  check_op<T>(table(vm::kMaximum), [](T x, T y) { return sc::Maximum{}(x, y); });
  check_op<T>(table(vm::kMinimum), [](T x, T y) { return sc::Minimum{}(x, y); });
}

}  // namespace

TEST_CASE("the fused blocks' binary kernels give the scalar functors' bits on every ISA", "[raw]") {
  const int ran = strata::testing::for_each_isa([](const vm::Kernels& k) {
    check_binary_isa<float>(k);
    check_binary_isa<double>(k);
  });
  CHECK(ran >= 1);
}

namespace {

/// raw::binary(op) and raw::binary_ (in place) on four layouts of [rows, cols] operands: the
/// functor's bits wherever both operands are not NaN, a NaN where both are.
template <class T, class F>
void check_eager(strata::BinaryOp op, F f) {
  namespace raw = strata::raw;
  constexpr int64_t rows = 37, cols = 53;  // blocks with tails on every vector width
  const std::vector<T> av = draw_operands<T>(rows * cols, 11),
                       bv = draw_operands<T>(rows * cols, 12);
  const strata::DType dt = sizeof(T) == 4 ? strata::f32 : strata::f64;
  const strata::RawTensor a = raw::from_host(av.data(), {rows, cols}, dt);
  const strata::RawTensor b = raw::from_host(bv.data(), {rows, cols}, dt);
  // b's first element broadcast; b read transposed (as [cols, rows] viewed back).
  const strata::RawTensor one = raw::from_host(bv.data(), {1, 1}, dt);
  const strata::RawTensor one_b = one.view({{rows, cols}, {0, 0}, 0});
  const strata::RawTensor bt_store = raw::from_host(bv.data(), {cols, rows}, dt);
  const strata::RawTensor b_t = bt_store.view({{rows, cols}, {1, rows}, 0});
  auto check = [&](const strata::RawTensor& y, const strata::RawTensor& bb) {
    std::vector<T> got(rows * cols), bvals(rows * cols);
    raw::to_host(y, got.data());
    raw::to_host(raw::contiguous(bb), bvals.data());
    int bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const T x = av[i], z = bvals[i];
      if (std::isnan(x) && std::isnan(z)) {
        bad += !std::isnan(got[i]);
      } else {
        bad += !same_float_bits(got[i], f(x, z));
      }
    }
    CHECK(bad == 0);
  };
  check(raw::binary(op, a, b), b);
  check(raw::binary(op, a, one_b), one_b);
  check(raw::binary(op, a, b_t), b_t);
  const strata::RawTensor dst = raw::contiguous(raw::from_host(av.data(), {rows, cols}, dt));
  raw::binary_(op, dst, b);  // out is a: the functor's map
  check(dst, b);
}

}  // namespace

TEST_CASE("eager float binary ops give the functors' bits on every layout", "[raw]") {
  check_eager<float>(strata::BinaryOp::maximum,
                     [](float x, float y) { return sc::Maximum{}(x, y); });
  check_eager<double>(strata::BinaryOp::maximum,
                      [](double x, double y) { return sc::Maximum{}(x, y); });
  check_eager<float>(strata::BinaryOp::minimum,
                     [](float x, float y) { return sc::Minimum{}(x, y); });
  check_eager<double>(strata::BinaryOp::minimum,
                      [](double x, double y) { return sc::Minimum{}(x, y); });
  check_eager<float>(strata::BinaryOp::add, [](float x, float y) { return sc::Add{}(x, y); });
  check_eager<double>(strata::BinaryOp::sub, [](double x, double y) { return sc::Sub{}(x, y); });
  check_eager<float>(strata::BinaryOp::mul, [](float x, float y) { return sc::Mul{}(x, y); });
  check_eager<double>(strata::BinaryOp::div, [](double x, double y) { return sc::Div{}(x, y); });
}
