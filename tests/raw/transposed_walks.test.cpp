// SPDX-License-Identifier: MIT
// The CPU's walks of transposed operands against independent loops: the
// vectorised 4- and 8-byte transpose kernels of every instruction set; the staged
// (transposed-into-a-buffer) walk over the edges of either CPU's tiles, odd sizes,
// negative strides and every element size; copies of transposed views straight
// into their result (contiguous, concat); the same bits on 1 and 2 threads; the
// per-thread staging buffer.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "raw/cpu/prefetch.hpp"
#include "raw/cpu/staged_walk.hpp"
#include "raw/cpu/tuning.hpp"
#include "raw/cpu/vmath.hpp"
#include "support/elementwise_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
namespace raw = strata::raw;
namespace vm = strata::detail::vmath;
using st::BinaryOp;
using st::RawTensor;
using st::Shape;
using st::UnaryOp;
using Idx = std::vector<int64_t>;

namespace {
/// Runs the transpose kernel of elements E (uint32_t: transpose32, uint64_t: transpose64)
/// on padded strides and odd sizes, forwards and with a negative source stride, against a
/// double loop.
template <class E>
void check_transpose_kernel(vm::Transpose32 transpose) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{16, 16},
                                   {8, 8},
                                   {33, 47},
                                   {1, 17},
                                   {17, 1},
                                   {64, 15},
                                   {15, 64},
                                   {48, 32},
                                   {9, 23}}) {
    const int64_t lds = rows + 5, ldd = cols + 3;  // padded, unlike the callers
    std::vector<E> src(std::size_t(cols * lds));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = E(i * 0x9E3779B97F4A7C15ull);
    const E fill = E(0xdeadbeefcafef00dull);
    std::vector<E> dst(std::size_t(rows * ldd), fill);
    transpose(src.data(), lds, dst.data(), ldd, rows, cols);
    bool ok = true;
    for (int64_t b = 0; b < rows; ++b) {
      for (int64_t a = 0; a < ldd; ++a) {
        const E want = a < cols ? src[std::size_t(a * lds + b)] : fill;
        ok = ok && dst[std::size_t(b * ldd + a)] == want;
      }
    }
    INFO(sizeof(E) << "-byte elements, " << rows << " x " << cols);
    CHECK(ok);
    // Negative source stride: rows read from the last one backwards.
    std::vector<E> neg(std::size_t(rows * ldd), 0);
    transpose(src.data() + (cols - 1) * lds, -lds, neg.data(), ldd, rows, cols);
    for (int64_t b = 0; b < rows; ++b) {
      for (int64_t a = 0; a < cols; ++a) {
        ok = ok && neg[std::size_t(b * ldd + a)] == src[std::size_t((cols - 1 - a) * lds + b)];
      }
    }
    CHECK(ok);
  }
}
}  // namespace

TEST_CASE("the 4- and 8-byte transpose kernels of every instruction set match a double loop",
          "[raw]") {
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const vm::Kernels* k = vm::kernels_for(isa);
    if (!k) continue;
    INFO("isa " << vm::isa_name(isa));
    check_transpose_kernel<uint32_t>(k->transpose32);
    check_transpose_kernel<uint64_t>(k->transpose64);
  }
}

TEST_CASE("transposed operands staged in either CPU's tiles match the reference", "[raw]") {
  tt::ThreadCountGuard restore;
  // Both tiles CpuTuning::for_this_cpu() chooses from (64 x 1024 and 512 x 128),
  // whichever CPU runs the test; their edges and those of the 16 x 16 kernel, odd sizes.
  struct RestoreTuning {
    st::detail::CpuTuning saved = st::detail::cpu_tuning();
    ~RestoreTuning() { st::detail::set_cpu_tuning(saved); }
  } restore_tuning;
  const std::vector<Shape> shapes{{256, 256}, {257, 300},  {513, 77},  {70, 1000},
                                  {300, 255}, {130, 1030}, {63, 2049}, {1025, 131}};
  for (const st::detail::StageTile tile : {st::detail::StageTile{64, 1024}, {512, 128}})
    for (int threads : {1, 2}) {
      st::detail::CpuTuning tuning = restore_tuning.saved;
      tuning.stage_tile = tile;
      st::detail::set_cpu_tuning(tuning);
      REQUIRE(st::detail::cpu_tuning().stage_tile.rows == tile.rows);
      st::set_num_threads(threads);
      for (st::DType t : {st::f32, st::f64, st::i32, st::i64}) {
        for (const Shape& s : shapes) {
          const RawTensor n = raw::normal({s[1], s[0]}, 9, st::f64);
          const RawTensor base =
              st::is_floating(t)
                  ? raw::cast(n, t)
                  : raw::cast(raw::binary(BinaryOp::mul, n, raw::full(n.shape(), 1000, st::f64)),
                              t);
          const RawTensor xt = base.transpose(0, 1);
          const RawTensor y = raw::cast(raw::normal(s, 10, st::f64), t);
          INFO(tt::dname(t) << " shape " << s << " threads " << threads << " tile " << tile.rows
                            << " x " << tile.cols);
          CHECK(tt::first_mismatch(raw::contiguous(xt), s, t,
                                   [&](const Idx& i) { return tt::get(xt, i); }) == "");
          CHECK(tt::first_mismatch(raw::binary(BinaryOp::add, y, xt), s, t, [&](const Idx& i) {
                  return tt::round_to(t, tt::get(y, i) + tt::get(xt, i));
                }) == "");
          // Negative strides on the transposed operand (flipped along both dims).
          const RawTensor xf = xt.flip(0).flip(1);
          CHECK(tt::first_mismatch(raw::binary(BinaryOp::sub, xf, y), s, t, [&](const Idx& i) {
                  return tt::round_to(t, tt::get(xf, i) - tt::get(y, i));
                }) == "");
          if (st::is_floating(t)) {
            CHECK(tt::first_mismatch(raw::unary(UnaryOp::exp, xt), s, t,
                                     [&](const Idx& i) { return std::exp(tt::get(xt, i)); }) == "");
            CHECK(tt::first_mismatch(raw::unary(UnaryOp::tanh, xf), s, t, [&](const Idx& i) {
                    return std::tanh(tt::get(xf, i));
                  }) == "");
          }
        }
      }
      // 1-byte elements (bool, scalar transpose), rank 3 with the transposed
      // pair innermost and a cast on the way.
      const RawTensor n3 = raw::normal({3, 300, 270}, 11, st::f64);
      const RawTensor b = raw::binary(BinaryOp::gt, n3, raw::full(n3.shape(), 0, st::f64));
      const RawTensor bt = b.permute({0, 2, 1});
      CHECK(tt::first_mismatch(raw::contiguous(bt), bt.shape(), st::bool_,
                               [&](const Idx& i) { return tt::get(bt, i); }) == "");
      const RawTensor f3 = raw::normal({3, 300, 270}, 12, st::f32).permute({0, 2, 1});
      CHECK(tt::first_mismatch(raw::cast(f3, st::f64), f3.shape(), st::f64,
                               [&](const Idx& i) { return tt::get(f3, i); }) == "");
    }
}

TEST_CASE("copies of transposed views go straight into their result, at any offset", "[raw]") {
  tt::ThreadCountGuard restore;
  for (int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (st::DType t : {st::f32, st::f64, st::i32, st::i64, st::bool_}) {
      // Odd sizes across the 1024-column and 8/16/32-row tile edges.
      for (const Shape& s : std::vector<Shape>{{67, 1500}, {300, 1031}, {1029, 70}}) {
        const RawTensor big =
            raw::cast(raw::binary(BinaryOp::mul, raw::normal({s[1] + 3, s[0] + 5}, 21, st::f64),
                                  raw::full({s[1] + 3, s[0] + 5}, 100, st::f64)),
                      t);
        // A transposed view starting inside a wider matrix (offset and padded strides).
        const RawTensor xt = big.slice(0, 2, 2 + s[1], 1).slice(1, 3, 3 + s[0], 1).transpose(0, 1);
        INFO(tt::dname(t) << " shape " << s << " threads " << threads);
        CHECK(tt::first_mismatch(raw::contiguous(xt), s, t,
                                 [&](const Idx& i) { return tt::get(xt, i); }) == "");
        // Into slices of a wider result: concat along the columns and the rows.
        const RawTensor y = raw::cast(raw::normal(s, 22, st::f64), t);
        const RawTensor cols = raw::concat({y, xt}, 1);
        CHECK(tt::first_mismatch(cols, {s[0], 2 * s[1]}, t, [&](const Idx& i) {
                return i[1] < s[1] ? tt::get(y, i) : tt::get(xt, {i[0], i[1] - s[1]});
              }) == "");
        const RawTensor rows = raw::concat({xt, y}, 0);
        CHECK(tt::first_mismatch(rows, {2 * s[0], s[1]}, t, [&](const Idx& i) {
                return i[0] < s[0] ? tt::get(xt, i) : tt::get(y, {i[0] - s[0], i[1]});
              }) == "");
      }
      // Rank 3: an outer axis, the transposed pair inside it.
      const RawTensor r3 = raw::cast(raw::normal({4, 90, 530}, 23, st::f64), t).permute({0, 2, 1});
      CHECK(tt::first_mismatch(raw::contiguous(r3), r3.shape(), t,
                               [&](const Idx& i) { return tt::get(r3, i); }) == "");
    }
  }
}

TEST_CASE("staged transposed walks give the same bits on 1 and 2 threads", "[raw][threads]") {
  tt::ThreadCountGuard restore;
  const RawTensor xt = raw::normal({600, 530}, 13, st::f32).transpose(0, 1);
  const RawTensor y = raw::normal({530, 600}, 14, st::f32);
  st::set_num_threads(1);
  const auto e1 = tt::host_elems<float>(raw::unary(UnaryOp::exp, xt));
  const auto a1 = tt::host_elems<float>(raw::binary(BinaryOp::add, xt, y));
  st::set_num_threads(2);
  CHECK(tt::host_elems<float>(raw::unary(UnaryOp::exp, xt)) == e1);
  CHECK(tt::host_elems<float>(raw::binary(BinaryOp::add, xt, y)) == a1);
}

TEST_CASE("the staging buffer is a whole huge page per thread, kept and grown on demand",
          "[raw][threads]") {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  auto aligned = [](const char* p) { return reinterpret_cast<std::uintptr_t>(p) % kHuge == 0; };
  char* const small = st::detail::stage_buffer(1000);
  REQUIRE(aligned(small));
  std::memset(small, 1, kHuge);                     // at least 2 MiB, whatever was asked
  CHECK(st::detail::stage_buffer(kHuge) == small);  // kept between calls
  char* const big = st::detail::stage_buffer(3 * kHuge + 5);
  REQUIRE(aligned(big));
  std::memset(big, 2, 3 * kHuge + 5);
  CHECK(st::detail::stage_buffer(10) == big);
  char* other = nullptr;
  std::thread([&] { other = st::detail::stage_buffer(10); }).join();
  CHECK(other != nullptr);
  CHECK(aligned(other));
  CHECK(other != big);  // every thread has its own
}
