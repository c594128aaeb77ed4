// SPDX-License-Identifier: MIT
#pragma once
/// Vectorised math over contiguous arrays: the transcendental functions
/// (SLEEF's 1-ULP variants; the f32 exp its algorithm written inline, the f32 tanh in f64 lanes),
/// sqrt, negation and absolute value, compiled once per x86 instruction set in vmath_<isa>.cpp and
/// chosen at run time for the CPU the program runs on, so one build is fast on an AVX-512 server
/// and still runs on any x86-64 CPU. Plus the sum and extreme kernels the reductions use.
#include <cstdint>

namespace strata::detail::vmath {

/// The functions, in the order of Kernels' tables; kNone (the last column of a unary op's
/// row in raw/primitives.hpp) is an op without a vector kernel.
enum Fn : int { kNone = -1, kExp, kLog, kSin, kCos, kTanh, kSqrt, kNeg, kAbs, kFnCount };

/// y[i] = f(x[i]) for i < n; x and y may be the same array.
using KernelF32 = void (*)(const float* x, float* y, int64_t n);
using KernelF64 = void (*)(const double* x, double* y, int64_t n);

/// o[i] = a[i * sa] * b[i * sb] (or a quotient) for i < n, plain IEEE arithmetic, with the
/// strides sa and sb each 1 or 0 (a value broadcast over the block); returns true when every
/// o[i] is finite (the check is fused into the same pass: the NaN-safe ops use it to skip
/// their fixup pass). o may be a or b.
using ProductF32 = bool (*)(const float* a, int64_t sa, const float* b, int64_t sb, float* o,
                            int64_t n);
using ProductF64 = bool (*)(const double* a, int64_t sa, const double* b, int64_t sb, double* o,
                            int64_t n);
/// The coefficients of an AdamW update, rounded to T (raw/scalar/binary.hpp's AdamStep<T>).
template <class T>
struct AdamCoefficients {
  T beta1, one_minus_beta1, beta2, one_minus_beta2, l2, decay, sqrt_bc2, eps, neg_step;
};
/// AdamStep's update of p[i], m[i], v[i] from g[i] for i < n (contiguous, not overlapping):
/// the same IEEE operations in the same order, uncontracted, so every instruction set gives
/// the scalar functor's bits.
using AdamF32 = void (*)(float* p, float* m, float* v, const float* g, int64_t n,
                         const AdamCoefficients<float>& c);
using AdamF64 = void (*)(double* p, double* m, double* v, const double* g, int64_t n,
                         const AdamCoefficients<double>& c);

/// The instruction sets with their own build of the kernels.
enum class Isa : int { sse2, avx2, avx512 };

/// Writes `blocks` copies of the 64-byte `pattern` to `dst` (64-byte aligned)
/// with non-temporal (streaming) stores, which bypass the caches and skip the
/// read-for-ownership of each line, then fences them (sfence).
using StreamFill = void (*)(void* dst, int64_t blocks, const void* pattern);
/// Rows [lo, hi) of a gather of rows of `lines` whole 64-byte lines: row j
/// copied from src + pos[j] * sab to dst + j * lines * 64 (dst 64-byte
/// aligned) with non-temporal stores, the rows fetched ahead; then sfence.
using GatherLines = void (*)(char* dst, const char* src, int64_t sab, const int64_t* pos,
                             int64_t lines, int64_t lo, int64_t hi);
/// Transposes a block of 4-byte (Transpose32) or 8-byte (Transpose64) elements (any type:
/// only bits move): dst[b * ldd + a] = src[a * lds + b] for b < rows, a < cols (lds may be
/// negative).
using Transpose32 = void (*)(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows,
                             int64_t cols);
using Transpose64 = Transpose32;
/// dst[b * ldd + a] = f(src[a * lds + b]) for b < rows, a < cols (lds > 0), for one function
/// f of Fn on f32 or f64 elements, or the bits unchanged (a copy of any type of 4 or 8 bytes):
/// blocks of one 64-byte line's elements square, transposed in registers, f applied row by
/// row, and each block row that is a whole 64-byte line of dst written with a non-temporal
/// store (other rows and the edges with plain stores); then sfence. Source rows are read in
/// bands of one block, each band along its whole length: one run per row, which the
/// hardware prefetcher follows.
using StreamTranspose = void (*)(const void* src, int64_t lds, void* dst, int64_t ldd, int64_t rows,
                                 int64_t cols);

/// Copies `lines` 64-byte lines from src to dst (64-byte aligned) with non-temporal stores (one
/// a line with AVX-512), without a fence: the caller ends its run of them with store_fence().
using StreamLines = void (*)(char* dst, const char* src, int64_t lines);

/// Orders the non-temporal stores before it (sfence) before any later store; nothing off x86.
inline void store_fence() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#endif
}

/// The plain binary ops with a kernel per instruction set (Kernels::binary_f32/f64), for the
/// fused blocks of a jit plan, whose blocks stay in L1 where the vector width decides the
/// speed. Each computes the scalar functor's formula (raw/scalar/binary.hpp) lane by lane.
enum BinaryFn : int { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kBinaryFnCount };
/// o[i] = op(a[i * sa], b[i * sb]) for i < n; sa and sb are 1 or 0 (one value broadcast).
/// False when some a[i] and b[i] are both NaN: the one case whose bits (the NaN's payload) may
/// differ from the eager kernel's, which the caller then recomputes with that kernel's code.
using BinaryF32 = bool (*)(const float* a, int64_t sa, const float* b, int64_t sb, float* o,
                           int64_t n);
using BinaryF64 = bool (*)(const double* a, int64_t sa, const double* b, int64_t sb, double* o,
                           int64_t n);

struct Kernels {
  Isa isa;
  KernelF32 f32[kFnCount];
  KernelF64 f64[kFnCount];
  StreamFill stream_fill;
  GatherLines gather_lines;
  Transpose32 transpose32;
  Transpose64 transpose64;
  StreamTranspose stream_f32[kFnCount];
  StreamTranspose stream_f64[kFnCount];
  StreamTranspose stream_copy32, stream_copy64;
  StreamLines stream_lines;
  // The summation kernels below, compiled for this instruction set.
  double (*sum_f32)(const float* x, int64_t n);
  double (*sum_f64)(const double* x, int64_t n);
  void (*sum_columns_f32)(const float* x, int64_t rows, int64_t ld, int64_t cols, double* acc);
  void (*sum_columns_f64)(const double* x, int64_t rows, int64_t ld, int64_t cols, double* acc);
  // The extremes below (max: [0], min: [1]), compiled for this instruction set.
  bool (*extreme_f32[2])(const float* x, int64_t n, float* out);
  bool (*extreme_f64[2])(const double* x, int64_t n, double* out);
  // first_outside below, compiled for this instruction set.
  int64_t (*first_outside)(const int64_t* v, int64_t n, int64_t lo, int64_t hi);
  // The products and quotients of the NaN-safe ops, with their finiteness check fused.
  ProductF32 mul_f32, div_f32;
  ProductF64 mul_f64, div_f64;
  // The plain binary ops (BinaryFn), compiled for this instruction set.
  BinaryF32 binary_f32[kBinaryFnCount];
  BinaryF64 binary_f64[kBinaryFnCount];
  // The AdamW update, compiled for this instruction set.
  AdamF32 adam_f32;
  AdamF64 adam_f64;
};

/// The kernels for `isa`, or nullptr when this CPU (or this build) lacks it.
const Kernels* kernels_for(Isa isa);
/// The fastest kernels this CPU runs (nullptr off x86-64, where callers use
/// the scalar std:: functions); STRATA_ISA=sse2|avx2|avx512 caps the choice.
const Kernels* best();
/// "sse2", "avx2" or "avx512".
const char* isa_name(Isa isa);

/// Elements per block of the blocked sums below.
inline constexpr int64_t kSumBlock = 4096;

/// Blocked sums of contiguous arrays: lanes of partial sums over blocks of at most kSumBlock
/// elements, each block's sum added in double to a total that starts at 0, in order. The f32
/// sum of 2^24 ones is exact; rounding error grows with the block size, not with n. The same
/// lanes and order on every instruction set (only adds: no contraction), so the result does
/// not depend on the CPU's vector width either.
double sum(const float* x, int64_t n);
double sum(const double* x, int64_t n);
/// acc[j] += sum over r < rows of x[r * ld + j], for j < cols (column sums of a
/// row-major block, blocked over rows the same way).
void sum_columns(const float* x, int64_t rows, int64_t ld, int64_t cols, double* acc);
void sum_columns(const double* x, int64_t rows, int64_t ld, int64_t cols, double* acc);

/// The maximum (min = false) or minimum of x[0, n), n >= 1, into *out; false, with *out unset,
/// when a NaN is among x or the extreme is a zero (either sign): there the bits depend on which
/// element is taken first, which the scalar reducer decides (raw/scalar/reducers.hpp).
bool extreme(const float* x, int64_t n, bool min, float* out);
bool extreme(const double* x, int64_t n, bool min, double* out);

/// The first j < n with v[j] outside [lo, hi) (lo <= hi), or n when every
/// entry is inside: the range check of index tensors, vectorised where the
/// CPU has 64-bit compares (AVX2, AVX-512).
int64_t first_outside(const int64_t* v, int64_t n, int64_t lo, int64_t hi);

}  // namespace strata::detail::vmath
