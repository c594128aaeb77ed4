// SPDX-License-Identifier: MIT
// The machine's limits, measured in the same run as the workloads:
//   memory bandwidth: STREAM copy (a = b) and triad (a = b + s * c) over
//     arrays far larger than the caches, split over the threads, counting the
//     bytes read + written (as the workloads count theirs);
//   f32 FMA peak: independent FMA chains in registers on every thread, with
//     the widest vectors the CPU has and the run's instruction set allows
//     (AVX-512, else AVX2 + FMA, else SSE).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/peers.hpp"

namespace bench {
namespace {

template <class Fn>
double best_seconds(int reps, Fn fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

// fn(lo, hi) over [0, n) on `threads` threads.
template <class Fn>
void split(int threads, int64_t n, Fn fn) {
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t)
    ts.emplace_back([=] { fn(n * t / threads, n * (t + 1) / threads); });
  fn(0, n / threads);
  for (auto& t : ts) t.join();
}

constexpr int64_t kFmaIters = 20'000'000;

__attribute__((target("avx512f"))) float fma_avx512(float seed) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(seed + float(i));
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < kFmaIters; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float fma_avx2(float seed) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(seed + float(i));
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < kFmaIters; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  }
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

float fma_sse(float seed) {  // multiply + add: 2 flops per lane, no fused instruction
  __m128 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm_set1_ps(seed + float(i));
  const __m128 m = _mm_set1_ps(0.999999f), a = _mm_set1_ps(1e-7f);
  for (int64_t it = 0; it < kFmaIters; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm_add_ps(_mm_mul_ps(acc[i], m), a);
  }
  float out[4];
  __m128 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm_add_ps(s, acc[i]);
  _mm_storeu_ps(out, s);
  return out[0];
}

volatile float g_fma_sink;

}  // namespace

Limits measure_limits(int threads, const std::string& isa) {
  Limits l;
  // 3 arrays of 64 Mi floats (256 MiB each): far beyond any cache.
  const int64_t n = int64_t{1} << 26;
  auto* a = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
  auto* b = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
  auto* c = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
  split(threads, n, [&](int64_t lo, int64_t hi) {  // first touch on the threads that use them
    for (int64_t i = lo; i < hi; ++i) a[i] = 0.0f, b[i] = 1.0f, c[i] = 2.0f;
  });
  const double copy_s = best_seconds(5, [&] {
    split(threads, n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) a[i] = b[i];
    });
  });
  const double triad_s = best_seconds(5, [&] {
    split(threads, n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
    });
  });
  g_fma_sink = a[n / 2];
  std::free(a), std::free(b), std::free(c);
  l.copy_gbps = 2.0 * 4.0 * double(n) / copy_s / 1e9;
  l.triad_gbps = 3.0 * 4.0 * double(n) / triad_s / 1e9;

  __builtin_cpu_init();
  int lanes = 4;
  float (*kernel)(float) = fma_sse;
  l.fma_isa = "sse (mul + add)";
  // The widest vectors the CPU has and the run allows (make bench-avx2 caps it at AVX2,
  // so "of peak" is held against what that instruction set can do).
  if (__builtin_cpu_supports("avx512f") && isa == "avx512") {
    kernel = fma_avx512, lanes = 16, l.fma_isa = "avx512 fma";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             (isa == "avx512" || isa == "avx2")) {
    kernel = fma_avx2, lanes = 8, l.fma_isa = "avx2 fma";
  }
  const double fma_s = best_seconds(3, [&] {
    split(threads, threads, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) g_fma_sink = kernel(float(t));
    });
  });
  l.fma_gflops = 2.0 * 12.0 * lanes * double(kFmaIters) * threads / fma_s / 1e9;
  return l;
}

}  // namespace bench
