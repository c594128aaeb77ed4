// SPDX-License-Identifier: MIT
// The streamed results of walks over transposed views (raw/cpu/streaming.hpp,
// raw/cpu/staged_walk.hpp):
// vmath's transposed maps and line streaming of every instruction set against
// the same instruction set's contiguous kernels and plain loops, edges,
// padded and unaligned destinations included; stream_transposed's choice of
// layouts; the staged walk's streamed result rows; and, through the public
// ops, results streamed (stream_transposed_bytes lowered to 0) against the
// same ops unstreamed and against reference loops, on 1 and 2 threads. And the
// streaming fill of large contiguous tensors (unaligned starts, tails, every element
// size), and the index_add that starts from it.
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "raw/cpu/staged_walk.hpp"
#include "raw/cpu/streaming.hpp"
#include "raw/cpu/tuning.hpp"
#include "raw/cpu/vmath.hpp"
#include "support/elementwise_ref.hpp"

namespace st = strata;
namespace sd = strata::detail;
namespace tt = strata::testing;
namespace raw = strata::raw;
namespace vm = strata::detail::vmath;
using st::BinaryOp;
using st::RawTensor;
using st::Shape;
using st::UnaryOp;
using Idx = std::vector<int64_t>;

namespace {

/// Restores the thread count and the CPU tuning when a test ends.
struct Restore {
  tt::ThreadCountGuard threads;
  sd::CpuTuning tuning = sd::cpu_tuning();
  ~Restore() { sd::set_cpu_tuning(tuning); }
};

/// Streams the results of walks over transposed views from `bytes` on.
void set_stream_bytes(int64_t bytes) {
  sd::CpuTuning t = sd::cpu_tuning();
  t.stream_transposed_bytes = bytes;
  sd::set_cpu_tuning(t);
}

std::vector<vm::Isa> isas() {
  std::vector<vm::Isa> out;
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    if (vm::kernels_for(isa)) out.push_back(isa);
  }
  return out;
}

/// An input for function fn of vmath (log and sqrt: positive; exp: within its
/// finite range, and past it on both sides).
template <class T>
T input_for(int fn, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const double v = u(rng);
  switch (fn) {
    case vm::kLog:
    case vm::kSqrt:
      return T(std::fabs(v) * 50 + 1e-3);
    case vm::kExp:
      return T(v * 120);
    default:
      return T(v * 8);
  }
}

/// Runs a StreamTranspose kernel on `rows x cols` blocks into destinations
/// with padded rows, once with rows of whole lines from a line boundary
/// (streamed) and once shifted by one element (plain stores), and checks every
/// element against want(a, b) and the padding left alone.
template <class T, class Want>
void check_stream_kernel(vm::StreamTranspose kernel, const std::vector<T>& src, int64_t lds,
                         int64_t rows, int64_t cols, Want want) {
  constexpr int64_t kB = 64 / int64_t(sizeof(T));
  for (const int64_t shift : {int64_t{0}, int64_t{1}}) {
    const int64_t ldd = (cols + kB - 1) / kB * kB + kB;  // whole lines, one spare
    // 64-byte aligned storage: dst row b starts on a line when shift is 0.
    std::vector<T> store(std::size_t(rows * ldd + 2 * kB));
    T* const base =
        reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(store.data()) + 63) / 64 * 64);
    T* const dst = base + shift;
    T sentinel;
    std::memset(&sentinel, 0xA5, sizeof sentinel);
    std::fill(store.begin(), store.end(), sentinel);
    kernel(src.data(), lds, dst, ldd, rows, cols);
    bool ok = true;
    int64_t bad_a = -1, bad_b = -1;
    for (int64_t b = 0; b < rows; ++b) {
      for (int64_t a = 0; a + shift < ldd; ++a) {
        const T got = dst[b * ldd + a];
        const T exp = a < cols ? want(a, b) : sentinel;
        if (std::memcmp(&got, &exp, sizeof(T)) != 0 && ok) ok = false, bad_a = a, bad_b = b;
      }
    }
    INFO(sizeof(T) << "-byte elements, " << rows << " x " << cols << ", shift " << shift
                   << ": first mismatch at a " << bad_a << " b " << bad_b);
    CHECK(ok);
  }
}

const std::vector<std::pair<int64_t, int64_t>> kBlocks{
    {16, 16}, {8, 8}, {33, 47}, {1, 17}, {17, 1}, {64, 15}, {15, 64}, {48, 32}, {9, 23}, {130, 70}};

/// The transposed maps of T (float: stream_f32, double: stream_f64) of every
/// function, against the contiguous kernel of the same instruction set.
template <class T>
void check_stream_maps(const vm::Kernels& k) {
  std::mt19937_64 rng(41);
  for (int fn = 0; fn < vm::kFnCount; ++fn) {
    for (const auto& [rows, cols] : kBlocks) {
      const int64_t lds = rows + 5;
      std::vector<T> src(std::size_t(cols * lds));
      for (T& v : src) v = input_for<T>(fn, rng);
      // f of each source row by the contiguous kernel: the values the map must give.
      std::vector<T> fx(src.size());
      if constexpr (sizeof(T) == 4) {
        k.f32[fn](src.data(), fx.data(), int64_t(src.size()));
      } else {
        k.f64[fn](src.data(), fx.data(), int64_t(src.size()));
      }
      INFO("function " << fn);
      check_stream_kernel<T>(sizeof(T) == 4 ? k.stream_f32[fn] : k.stream_f64[fn], src, lds, rows,
                             cols,
                             [&](int64_t a, int64_t b) { return fx[std::size_t(a * lds + b)]; });
    }
  }
}

/// The transposed copies of E's size: every bit pattern moves unchanged (NaN payloads too).
template <class E>
void check_stream_copy(vm::StreamTranspose copy) {
  for (const auto& [rows, cols] : kBlocks) {
    const int64_t lds = rows + 3;
    std::vector<E> src(std::size_t(cols * lds));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = E((i + 1) * 0x9E3779B97F4A7C15ull);
    check_stream_kernel<E>(copy, src, lds, rows, cols,
                           [&](int64_t a, int64_t b) { return src[std::size_t(a * lds + b)]; });
  }
}

}  // namespace

TEST_CASE("the streamed transposed maps of every instruction set match their contiguous kernels",
          "[raw][cpu_only]") {
  for (vm::Isa isa : isas()) {
    INFO("isa " << vm::isa_name(isa));
    const vm::Kernels& k = *vm::kernels_for(isa);
    check_stream_maps<float>(k);
    check_stream_maps<double>(k);
    check_stream_copy<uint32_t>(k.stream_copy32);
    check_stream_copy<uint64_t>(k.stream_copy64);
  }
}

TEST_CASE("stream_lines of every instruction set copies whole lines and nothing else",
          "[raw][cpu_only]") {
  for (vm::Isa isa : isas()) {
    INFO("isa " << vm::isa_name(isa));
    const vm::Kernels& k = *vm::kernels_for(isa);
    for (const int64_t lines : {1, 2, 7, 16, 33}) {
      std::vector<uint8_t> src(std::size_t(lines * 64));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 37 + 11);
      std::vector<uint8_t> store(std::size_t(lines * 64 + 192), 0x5A);
      uint8_t* const dst = reinterpret_cast<uint8_t*>(
          (reinterpret_cast<uintptr_t>(store.data()) + 63) / 64 * 64 + 64);
      k.stream_lines(reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src.data()),
                     lines);
      vm::store_fence();
      CHECK(std::memcmp(dst, src.data(), src.size()) == 0);
      CHECK(dst[-1] == 0x5A);
      CHECK(dst[lines * 64] == 0x5A);
    }
  }
}

TEST_CASE("stream_transposed takes large transposed views into aligned rows only",
          "[raw][cpu_only]") {
  Restore restore;
  const vm::Kernels* k = vm::best();
  if (!k) return;  // not an x86-64 CPU: nothing streams
  const st::Device cpu = st::Device::cpu();
  auto data = [](const RawTensor& t) { return static_cast<char*>(t.storage()->data()); };
  // A transposed f32 view into a fresh row-major result: streamed once the
  // result reaches the threshold, with the right values.
  const RawTensor x = raw::normal({320, 520}, 51, st::f32, cpu);
  const RawTensor xt = x.transpose(0, 1);
  const RawTensor out = raw::empty(xt.shape(), st::f32, cpu);
  set_stream_bytes(out.numel() * 4 + 1);
  CHECK_FALSE(
      sd::stream_transposed(data(out), out.layout(), data(x), xt.layout(), 4, k->stream_copy32));
  set_stream_bytes(out.numel() * 4);
  REQUIRE(
      sd::stream_transposed(data(out), out.layout(), data(x), xt.layout(), 4, k->stream_copy32));
  CHECK(tt::first_mismatch(out, xt.shape(), st::f32,
                           [&](const Idx& i) { return tt::get(xt, i); }) == "");
  set_stream_bytes(0);
  // Declined: rows that are not whole lines (520 x 301), a flipped view
  // (negative strides), a contiguous source, 1-byte elements.
  const RawTensor x2 = raw::normal({301, 520}, 52, st::f32, cpu);
  const RawTensor out2 = raw::empty({520, 301}, st::f32, cpu);
  CHECK_FALSE(sd::stream_transposed(data(out2), out2.layout(), data(x2),
                                    x2.transpose(0, 1).layout(), 4, k->stream_copy32));
  CHECK_FALSE(sd::stream_transposed(data(out), out.layout(), data(x), xt.flip(0).flip(1).layout(),
                                    4, k->stream_copy32));
  const RawTensor same = raw::normal({520, 320}, 53, st::f32, cpu);
  CHECK_FALSE(sd::stream_transposed(data(out), out.layout(), data(same), same.layout(), 4,
                                    k->stream_copy32));
  const RawTensor h = raw::empty({320, 520}, st::bool_, cpu);
  const RawTensor out_h = raw::empty({520, 320}, st::bool_, cpu);
  CHECK_FALSE(sd::stream_transposed(data(out_h), out_h.layout(), data(h),
                                    h.transpose(0, 1).layout(), 1, k->stream_copy32));
  // Rank 3 with the transposed pair inside an outer axis, f64: streamed, right values.
  const RawTensor x3 = raw::normal({3, 136, 200}, 55, st::f64, cpu).permute({0, 2, 1});
  const RawTensor out3 = raw::empty(x3.shape(), st::f64, cpu);
  REQUIRE(
      sd::stream_transposed(data(out3), out3.layout(), data(x3), x3.layout(), 8, k->stream_copy64));
  CHECK(tt::first_mismatch(out3, x3.shape(), st::f64,
                           [&](const Idx& i) { return tt::get(x3, i); }) == "");
}

TEST_CASE("the staged walk streams its result rows from the threshold on",
          "[raw][cpu_only][threads]") {
  Restore restore;
  if (!vm::best()) return;
  const st::Device cpu = st::Device::cpu();
  // out = 2 * xt: the result rows are whole lines (a multiple of 16 f32
  // elements), so every staged row is streamed when the result is large
  // enough, and none below.
  const RawTensor x = raw::normal({512, 384}, 61, st::f32, cpu);
  const RawTensor xt = x.transpose(0, 1);
  for (const int64_t threshold : {int64_t{0}, std::numeric_limits<int64_t>::max()}) {
    for (int threads : {1, 2}) {
      st::set_num_threads(threads);
      set_stream_bytes(threshold);
      const RawTensor out = raw::empty(xt.shape(), st::f32, cpu);
      auto* const ob = static_cast<float*>(out.storage()->data());
      std::atomic<int64_t> streamed{0}, plain{0};
      std::atomic<bool> bad{false};
      sd::parallel_walk_staged<2>(
          out.shape(), {&out.layout(), &xt.layout()}, {out.storage()->data(), x.storage()->data()},
          {4, 4}, [&](const sd::StagedBlock<2>& blk) {
            // The transposed operand is staged: read from the buffer's row, unit stride;
            // the results go to the streamed row or to the result's storage.
            float* o = blk.result(ob);
            const float* r = blk.input(1, static_cast<const float*>(x.storage()->data()));
            if (blk.staged != 1 || blk.st[1] != 1 || !blk.row || r != blk.row ||
                o != (blk.out ? static_cast<float*>(blk.out) : ob + blk.off[0])) {
              bad = true;
              return;
            }
            for (int64_t i = 0; i < blk.n; ++i) o[i * blk.st[0]] = 2 * r[i];
            (blk.out ? streamed : plain) += 1;
          });
      INFO("threshold " << threshold << " threads " << threads);
      CHECK_FALSE(bad.load());
      // One call per result row per tile column.
      const int64_t cols = sd::cpu_tuning().stage_tile.cols;
      const int64_t calls = xt.shape()[0] * ((xt.shape()[1] + cols - 1) / cols);
      CHECK(streamed.load() == (threshold == 0 ? calls : 0));
      CHECK(plain.load() == (threshold == 0 ? 0 : calls));
      CHECK(tt::first_mismatch(out, xt.shape(), st::f32,
                               [&](const Idx& i) { return 2 * tt::get(xt, i); }) == "");
    }
  }
}

TEST_CASE("ops on transposed views give the same bits streamed and not, and match loops", "[raw]") {
  Restore restore;
  // Results whose rows are whole lines (streamed), with rows past the 16 x 16 / 8 x 8 blocks
  // and the staged tiles, and columns past the 4096-element runs; then rows that are not
  // whole lines (not streamed: the same walks as below the threshold).
  const std::vector<Shape> shapes{{256, 256}, {263, 320},  {1030, 144}, {70, 4608},
                                  {257, 300}, {130, 1030}, {48, 4500}};
  for (int threads : {1, 2}) {
    st::set_num_threads(threads);
    for (st::DType t : {st::f32, st::f64}) {
      for (const Shape& s : shapes) {
        const RawTensor x = raw::normal({s[1], s[0]}, 71, t);
        const RawTensor xt = x.transpose(0, 1);
        const RawTensor pos = raw::unary(UnaryOp::abs, x).transpose(0, 1);
        const RawTensor y = raw::normal(s, 72, t);
        INFO(tt::dname(t) << " shape " << s << " threads " << threads);
        auto both = [&](auto op) {
          set_stream_bytes(std::numeric_limits<int64_t>::max());
          const RawTensor plain = op();
          set_stream_bytes(0);
          const RawTensor streamed = op();
          if (t == st::f32) {
            CHECK(tt::host_elems<float>(streamed) == tt::host_elems<float>(plain));
          } else {
            CHECK(tt::host_elems<double>(streamed) == tt::host_elems<double>(plain));
          }
          return streamed;
        };
        CHECK(tt::first_mismatch(both([&] { return raw::unary(UnaryOp::exp, xt); }), s, t,
                                 [&](const Idx& i) { return std::exp(tt::get(xt, i)); }) == "");
        CHECK(tt::first_mismatch(both([&] { return raw::unary(UnaryOp::log, pos); }), s, t,
                                 [&](const Idx& i) { return std::log(tt::get(pos, i)); }) == "");
        CHECK(tt::first_mismatch(both([&] { return raw::unary(UnaryOp::sqrt, pos); }), s, t,
                                 [&](const Idx& i) { return std::sqrt(tt::get(pos, i)); }) == "");
        CHECK(tt::first_mismatch(both([&] { return raw::contiguous(xt); }), s, t,
                                 [&](const Idx& i) { return tt::get(xt, i); }) == "");
        CHECK(tt::first_mismatch(both([&] { return raw::binary(BinaryOp::add, xt, y); }), s, t,
                                 [&](const Idx& i) {
                                   return tt::round_to(t, tt::get(xt, i) + tt::get(y, i));
                                 }) == "");
        CHECK(tt::first_mismatch(both([&] { return raw::binary(BinaryOp::mul, y, xt); }), s, t,
                                 [&](const Idx& i) {
                                   return tt::round_to(t, tt::get(y, i) * tt::get(xt, i));
                                 }) == "");
      }
    }
    // 4- and 8-byte integers copied transposed; rank 3 with an outer axis.
    for (st::DType t : {st::i32, st::i64}) {
      const RawTensor n = raw::normal({2, 300, 170}, 73, st::f64);
      const RawTensor xt =
          raw::cast(raw::binary(BinaryOp::mul, n, raw::full(n.shape(), 1e5, st::f64)), t)
              .permute({0, 2, 1});
      set_stream_bytes(std::numeric_limits<int64_t>::max());
      const RawTensor plain = raw::contiguous(xt);
      set_stream_bytes(0);
      const RawTensor streamed = raw::contiguous(xt);
      INFO(tt::dname(t) << " threads " << threads);
      CHECK(tt::first_mismatch(streamed, xt.shape(), t,
                               [&](const Idx& i) { return tt::get(xt, i); }) == "");
      CHECK(tt::first_mismatch(plain, xt.shape(), t,
                               [&](const Idx& i) { return tt::get(streamed, i); }) == "");
    }
  }
}

TEST_CASE("the staged walk's unstaged blocks read and write the operands' storage", "[raw]") {
  Restore restore;
  const st::Device cpu = st::Device::cpu();
  // No transposed operand (a contiguous add, a one-element add, a small
  // transposed view below the tiled walk): every block has nothing staged, and
  // input() and result() are the storage at the block's offsets.
  const RawTensor big = raw::normal({300, 200}, 81, st::f32, cpu);
  const RawTensor one = raw::normal({1, 1}, 82, st::f32, cpu);
  const RawTensor small = raw::normal({40, 30}, 83, st::f32, cpu);
  for (const RawTensor& a : {big, one, small.transpose(0, 1)}) {
    const RawTensor out = raw::empty(a.shape(), st::f32, cpu);
    auto* const ob = static_cast<float*>(out.storage()->data());
    const auto* const ab = static_cast<const float*>(a.storage()->data());
    std::atomic<bool> bad{false};
    std::atomic<int64_t> elements{0};
    auto block = [&](const sd::StagedBlock<2>& blk) {
      float* o = blk.result(ob);
      const float* p = blk.input(1, ab);
      if (blk.staged != -1 || blk.row || blk.out || o != ob + blk.off[0] || p != ab + blk.off[1]) {
        bad = true;
      }
      for (int64_t i = 0; i < blk.n; ++i) o[i * blk.st[0]] = p[i * blk.st[1]] + 1;
      elements += blk.n;
    };
    sd::parallel_walk_staged<2>(out.shape(), {&out.layout(), &a.layout()}, {ob, ab}, {4, 4}, block);
    INFO("shape " << a.shape());
    CHECK_FALSE(bad.load());
    CHECK(elements.load() == a.numel());
    CHECK(tt::first_mismatch(out, a.shape(), st::f32, [&](const Idx& i) {
            return tt::round_to(st::f32, tt::get(a, i) + 1);
          }) == "");
  }
}

TEST_CASE("large contiguous fills stream every element, unaligned starts and tails included",
          "[raw][threads]") {
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

TEST_CASE("index_add into a large broadcast zero matches a scatter loop", "[raw][threads]") {
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
