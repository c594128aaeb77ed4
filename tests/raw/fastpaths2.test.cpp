// SPDX-License-Identifier: MIT
// The second round of CPU fast paths against independent loops: the staged
// (transposed-into-a-buffer) walk of transposed operands over 64 x 1024 tile
// edges, odd sizes, negative strides and every element size; copies of
// transposed views straight into the result (contiguous, concat); the
// vectorised 4- and 8-byte transposes per instruction set; the streaming fill of large
// contiguous tensors (unaligned starts, tails, every element size) and the
// index_add that starts from it; large row gathers with streaming stores and
// without; the blocked sums of every instruction set
// (same bits, exact on 2^24 ones); results the same bits on 1 and 2 threads;
// the range scan of index entries of every instruction set; the streaming
// gather of whole lines of every instruction set.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
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

TEST_CASE("staged transposed walks give the same bits on 1 and 2 threads", "[raw]") {
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

TEST_CASE("the staging buffer is a whole huge page per thread, kept and grown on demand", "[raw]") {
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

TEST_CASE("row_prefetcher has a fixed-count prefetcher for rows of 1 to 16 lines only", "[raw]") {
  namespace sd = st::detail;
  std::vector<char> row(sd::kMaxFixedLines * 64 + 64);
  for (int64_t lines = 1; lines <= sd::kMaxFixedLines; ++lines) {
    INFO("lines " << lines);
    auto write = sd::row_prefetcher<1>(lines);
    auto read = sd::row_prefetcher<0>(lines);
    REQUIRE(write != nullptr);
    REQUIRE(read != nullptr);
    CHECK(write != read);
    CHECK(write != sd::row_prefetcher<1>(lines == 1 ? 2 : lines - 1));  // one per count
    write(row.data() + 1);  // any start, as the rows of a tile have
    read(row.data());
  }
  for (const int64_t lines : {int64_t{-1}, int64_t{0}, int64_t{sd::kMaxFixedLines + 1}}) {
    CHECK(sd::row_prefetcher<1>(lines) == nullptr);  // the caller's loop covers these
    CHECK(sd::row_prefetcher<0>(lines) == nullptr);
  }
}

TEST_CASE("large contiguous fills stream every element, unaligned starts and tails included",
          "[raw]") {
  tt::ThreadCountGuard restore;
  // 8 MiB and up take the streaming path; offsets make the start unaligned.
  for (int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (int64_t extra : {0, 1, 7, 19}) {
      const int64_t n = (int64_t{9} << 20) / 4 + extra;
      const RawTensor big = raw::full({n + 40}, 5, st::f32);
      const RawTensor part =
          big.slice(0, 3 + extra, 3 + extra + n, 1);  // a contiguous view, offset start
      raw::fill_(part, -2.5);
      const auto v = tt::host_elems<float>(big);
      bool ok = true;
      for (int64_t i = 0; i < n + 40; ++i) {
        const bool inside = i >= 3 + extra && i < 3 + extra + n;
        ok = ok && v[std::size_t(i)] == (inside ? -2.5f : 5.0f);
      }
      INFO("extra " << extra << " threads " << threads);
      CHECK(ok);
    }
    for (st::DType t : {st::f64, st::i64, st::i32, st::bool_}) {
      const int64_t n = (int64_t{17} << 20) / int64_t(st::dtype_size(t)) + 13;
      const RawTensor x = raw::full({n}, 3, t);
      const auto want = raw::cast(raw::full({1}, 3, t), st::f64);
      double w = 0;
      raw::to_host(want, &w);
      const auto v = tt::host_elems<double>(raw::cast(x, st::f64));
      bool ok = true;
      for (double e : v) ok = ok && e == w;
      INFO(tt::dname(t));
      CHECK(ok);
    }
  }
}

TEST_CASE("index_add into a large broadcast zero matches a scatter loop", "[raw]") {
  tt::ThreadCountGuard restore;
  const int64_t rows = 40000, cols = 64, picks = 5000;  // 10 MiB: the streaming fill
  std::vector<int64_t> idx(picks);
  for (int64_t j = 0; j < picks; ++j) idx[std::size_t(j)] = (j * 7919) % rows / ((j % 3) + 1);
  const RawTensor it = raw::from_host(idx.data(), {picks}, st::i64);
  const RawTensor src = raw::normal({picks, cols}, 15, st::f32);
  const RawTensor zero = raw::full({1, 1}, 0, st::f32).expand({rows, cols});
  const auto s = tt::host_elems<float>(src);
  std::vector<double> want(std::size_t(rows * cols), 0.0);
  for (int64_t j = 0; j < picks; ++j) {
    for (int64_t c = 0; c < cols; ++c) {
      want[std::size_t(idx[std::size_t(j)] * cols + c)] += double(s[std::size_t(j * cols + c)]);
    }
  }
  std::vector<float> first;
  for (int threads : {1, 2}) {
    st::set_num_threads(threads);
    const auto got = tt::host_elems<float>(raw::index_add(zero, 0, it, src));
    bool ok = true;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ok = ok && std::abs(double(got[i]) - want[i]) <= 1e-5 * (1 + std::abs(want[i]));
    }
    CHECK(ok);
    if (first.empty()) {
      first = got;
    } else {
      CHECK(got == first);
    }
  }
}

TEST_CASE("gathers of whole rows of every length, 4 bytes to past 1 KiB, copy every row", "[raw]") {
  // The row loop is compiled per count of 64-byte lines prefetched (1 to 16,
  // then 16 for longer rows): i32 rows of 1 to 300 elements cover each count,
  // starting at any 4-byte offset (column slices), and the last rows of each
  // thread's piece, which are prefetched nothing ahead.
  tt::ThreadCountGuard restore;
  const int64_t rows = 701, picks = 2999, width = 301;
  std::vector<int32_t> table(std::size_t(rows * width));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = int32_t(i * 2654435761u % 1000003);
  const RawTensor t = raw::from_host(table.data(), {rows, width}, st::i32);
  std::vector<int64_t> idx(picks);
  for (int64_t j = 0; j < picks; ++j) idx[std::size_t(j)] = (j * 389 + j / 7) % rows;
  const RawTensor it = raw::from_host(idx.data(), {picks}, st::i64);
  for (int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (const int64_t c0 : {int64_t{0}, int64_t{1}}) {
      for (const int64_t cols :
           {1, 2, 15, 16, 17, 31, 32, 33, 64, 65, 112, 128, 129, 200, 255, 256, 257, 300}) {
        const RawTensor x = t.slice(1, c0, c0 + cols, 1);
        const auto got = tt::host_elems<int32_t>(raw::index_select(x, 0, it));
        bool ok = got.size() == std::size_t(picks * cols);
        for (int64_t j = 0; ok && j < picks; ++j) {
          ok = std::memcmp(&got[std::size_t(j * cols)],
                           &table[std::size_t(idx[std::size_t(j)] * width + c0)],
                           std::size_t(cols) * sizeof(int32_t)) == 0;
        }
        INFO("threads " << threads << " c0 " << c0 << " cols " << cols);
        CHECK(ok);
      }
    }
  }
}

TEST_CASE("large gathers of table rows, streamed or not, copy every row", "[raw]") {
  tt::ThreadCountGuard restore;
  struct RestoreTuning {
    st::detail::CpuTuning saved = st::detail::cpu_tuning();
    ~RestoreTuning() { st::detail::set_cpu_tuning(saved); }
  } restore_tuning;
  // 40000 picks of 64 f32 (10 MiB, past the 8 MiB streaming threshold: whole
  // lines, streamed by gather_lines where stream_gather_lines, else in
  // 16-byte units where stream_gather_units) and of 62 f32 (rows not whole
  // 16-byte units, never streamed), out of column slices of a 65-column table
  // (rows start at any 4-byte offset); indices with repeats, the first and the
  // last row.
  const int64_t rows = 30011, picks = 40000;
  std::vector<int64_t> idx(picks);
  for (int64_t j = 0; j < picks; ++j) idx[std::size_t(j)] = (j * 7919 + j / 3) % rows;
  idx[0] = 0;
  idx[picks - 1] = rows - 1;
  const RawTensor it = raw::from_host(idx.data(), {picks}, st::i64);
  const RawTensor table = raw::normal({rows, 65}, 16, st::f32);
  for (const int stream : {0, 1, 2}) {
    st::detail::CpuTuning tuning = restore_tuning.saved;
    tuning.stream_gather_units = stream == 1;
    tuning.stream_gather_lines = stream == 2;
    st::detail::set_cpu_tuning(tuning);
    for (int threads : {1, 2}) {
      st::set_num_threads(threads);
      for (const int64_t c0 : {int64_t{0}, int64_t{1}}) {
        for (const int64_t cols : {int64_t{64}, int64_t{62}}) {
          const RawTensor x = table.slice(1, c0, c0 + cols, 1);
          const auto got = tt::host_elems<float>(raw::index_select(x, 0, it));
          const auto xs = tt::host_elems<float>(raw::contiguous(x));
          bool ok = got.size() == std::size_t(picks * cols);
          for (int64_t j = 0; ok && j < picks; ++j) {
            ok = std::memcmp(&got[std::size_t(j * cols)],
                             &xs[std::size_t(idx[std::size_t(j)] * cols)],
                             std::size_t(cols) * sizeof(float)) == 0;
          }
          INFO("stream " << stream << " threads " << threads << " cols " << cols);
          CHECK(ok);
        }
      }
    }
  }
}

TEST_CASE("the streaming gather of whole lines of every instruction set copies its rows only",
          "[raw]") {
  // Rows of 1 to 20 lines (past 16 the prefetch covers the first 16), rows
  // [lo, hi) of 100 picks with repeats, into a 64-byte aligned result whose
  // other rows must stay untouched.
  const int64_t rows = 37, picks = 100, lo = 3, hi = 97;
  std::vector<int64_t> pos(picks);
  for (int64_t j = 0; j < picks; ++j) pos[std::size_t(j)] = (j * 13 + j / 7) % rows;
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const vm::Kernels* k = vm::kernels_for(isa);
    if (!k) continue;
    for (const int64_t lines : {1, 2, 3, 4, 7, 16, 17, 20}) {
      const int64_t row = lines * 64;
      // The table's rows start 16 bytes past a line: the loads are unaligned.
      std::vector<unsigned char> table(std::size_t(rows * row + 16));
      for (std::size_t i = 0; i < table.size(); ++i) table[i] = (unsigned char)(i * 131 + 7);
      const char* src = reinterpret_cast<const char*>(table.data() + 16);
      auto* out = static_cast<unsigned char*>(std::aligned_alloc(64, std::size_t(picks * row)));
      std::memset(out, 0xAB, std::size_t(picks * row));
      k->gather_lines(reinterpret_cast<char*>(out), src, row, pos.data(), lines, lo, hi);
      bool ok = true;
      for (int64_t j = 0; ok && j < picks; ++j) {
        const unsigned char* got = out + j * row;
        if (j >= lo && j < hi) {
          ok = std::memcmp(got, src + pos[std::size_t(j)] * row, std::size_t(row)) == 0;
        } else {
          for (int64_t b = 0; ok && b < row; ++b) ok = got[b] == 0xAB;
        }
      }
      std::free(out);
      INFO(vm::isa_name(isa) << " lines " << lines);
      CHECK(ok);
    }
  }
}

TEST_CASE("the blocked sums of every instruction set give the same bits and match double loops",
          "[raw]") {
  // Odd lengths around the 32-lane and 4096-element block edges, and rows.
  std::vector<float> x(70001);
  std::vector<double> xd(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = float(std::sin(double(i) * 0.37) * 3 + 0.25);
    xd[i] = double(x[i]) * 1.0000001;
  }
  std::vector<double> first;
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const vm::Kernels* k = vm::kernels_for(isa);
    if (!k) continue;
    INFO("isa " << vm::isa_name(isa));
    std::vector<double> got;
    for (int64_t n : {0, 1, 31, 33, 1025, 4095, 4096, 4097, 8191, 8193, 70001}) {
      double want = 0, want_d = 0;
      for (int64_t i = 0; i < n; ++i) want += double(x[std::size_t(i)]);
      for (int64_t i = 0; i < n; ++i) want_d += xd[std::size_t(i)];
      const double s = k->sum_f32(x.data(), n), sd = k->sum_f64(xd.data(), n);
      CHECK(std::abs(s - want) <= 1e-5 * (1 + std::abs(want)) + 1e-4);
      CHECK(std::abs(sd - want_d) <= 1e-12 * (1 + std::abs(want_d)));
      got.push_back(s);
      got.push_back(sd);
    }
    // Column sums of a 67 x 601 block inside rows of 700 (row blocks of 32:
    // rows added four at a time, then the rest one at a time), and of a
    // 15 x 4500 one inside rows of 4600 (column blocks of 4096 f32 and 2048
    // f64, each with a tail).
    for (const auto& [rows, cols, ld] : {std::array<int64_t, 3>{67, 601, 700}, {15, 4500, 4600}}) {
      std::vector<double> acc(std::size_t(cols), 0.5), accd(std::size_t(cols), 0.5);
      k->sum_columns_f32(x.data(), rows, ld, cols, acc.data());
      k->sum_columns_f64(xd.data(), rows, ld, cols, accd.data());
      bool ok = true;
      for (int64_t j = 0; j < cols; ++j) {
        double w = 0.5, wd = 0.5;
        for (int64_t r = 0; r < rows; ++r) w += double(x[std::size_t(r * ld + j)]);
        for (int64_t r = 0; r < rows; ++r) wd += xd[std::size_t(r * ld + j)];
        ok = ok && std::abs(acc[std::size_t(j)] - w) <= 1e-5 * (1 + std::abs(w));
        ok = ok && std::abs(accd[std::size_t(j)] - wd) <= 1e-12 * (1 + std::abs(wd));
      }
      INFO(rows << " x " << cols);
      CHECK(ok);
      got.insert(got.end(), acc.begin(), acc.end());
      got.insert(got.end(), accd.begin(), accd.end());
    }
    // 2^24 ones: exact in every build.
    std::vector<float> ones(std::size_t(1) << 24, 1.0f);
    CHECK(k->sum_f32(ones.data(), int64_t(ones.size())) == 16777216.0);
    if (first.empty()) {
      first = got;
    } else {
      CHECK(got == first);
    }
  }
}

TEST_CASE("the range scan of every instruction set finds the first entry outside", "[raw]") {
  // One bad entry (below, at or past the ends, the int64 extremes) at
  // positions around the 256-entry blocks, in arrays of lengths around them;
  // ranges that start below zero, and the empty range.
  const int64_t lo = -7, hi = 1000;
  auto naive = [](const std::vector<int64_t>& v, int64_t n, int64_t a, int64_t b) {
    int64_t j = 0;
    while (j < n && v[std::size_t(j)] >= a && v[std::size_t(j)] < b) ++j;
    return j;
  };
  std::vector<int64_t> base(1100);
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = lo + int64_t(i * 7919 % 1007);
  const int64_t bad_values[] = {lo - 1, hi, hi + 12345, std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max()};
  std::vector<vm::Isa> isas;
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    if (vm::kernels_for(isa)) isas.push_back(isa);
  }
  for (vm::Isa isa : isas) {
    const vm::Kernels* k = vm::kernels_for(isa);
    INFO("isa " << vm::isa_name(isa));
    bool ok = true;
    for (int64_t n : {0, 1, 255, 256, 257, 511, 512, 513, 1100}) {
      ok = ok && k->first_outside(base.data(), n, lo, hi) == n;  // every entry inside
      ok = ok && k->first_outside(base.data(), n, 0, 0) == 0;    // the empty range: none inside
      for (int64_t at : {0, 1, 254, 255, 256, 257, 511, 512, 700, 1099}) {
        if (at >= n) continue;
        for (int64_t bad : bad_values) {
          std::vector<int64_t> v = base;
          v[std::size_t(at)] = bad;
          v[std::size_t(std::min<int64_t>(n - 1, at + 300))] = bad;  // a later one changes nothing
          const int64_t got = k->first_outside(v.data(), n, lo, hi);
          if (got != naive(v, n, lo, hi) || got != at) {
            ok = false;
            INFO("n " << n << " at " << at << " bad " << bad << " got " << got);
            CHECK(got == at);
          }
        }
      }
    }
    CHECK(ok);
  }
  // The dispatching entry point agrees.
  std::vector<int64_t> v = base;
  v[600] = hi;
  CHECK(vm::first_outside(v.data(), int64_t(v.size()), lo, hi) == 600);
  CHECK(vm::first_outside(v.data(), 600, lo, hi) == 600);
}
