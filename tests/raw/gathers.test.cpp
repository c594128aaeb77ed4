// SPDX-License-Identifier: MIT
// The CPU's gathers against independent loops: the fixed-count row prefetchers;
// gathers of whole rows of every length (each prefetch count, any 4-byte offset);
// large gathers of table rows, streamed and not; the streaming gather of whole lines
// of every instruction set; the range scan of index entries (the bounds check before a
// gather) of every instruction set.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
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

TEST_CASE("gathers of whole rows of every length, 4 bytes to past 1 KiB, copy every row",
          "[raw][threads]") {
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

TEST_CASE("large gathers of table rows, streamed or not, copy every row", "[raw][threads]") {
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
