// SPDX-License-Identifier: MIT
// CPU matmul: out[b, m, n] = sum_k a[b, m, k] * b[b, k, n].
//
// `a` and `b` arrive expanded to out's batch dims (zero strides where a batch
// dim is broadcast); `out` is contiguous. Each operand's storage order and
// leading dimension come from its strides, so a row-major, column-major,
// transposed or column-sliced operand is read in place; only a matrix whose
// strides a GEMM cannot express (both strides non-unit, negative or zero) is
// packed into a scratch buffer first. Every batch is read at its own offset,
// so batches (uniform batch strides or not) are never copied either.
//
// f32 products of at least kDnnlMinFlops go to oneDNN's sgemm (JIT kernels
// for the CPU's instruction set; docs/PERFORMANCE.md has the measurements
// that chose it), called single-threaded: strata's pool splits the work.
// Smaller f32 products and f64 go to Eigen's GEMM through Maps (no call
// overhead beyond the product itself), also single-threaded, built for the
// CPU's instruction set (raw/cpu/eigen_gemm.hpp). Integers use a plain
// triple loop.
//
// Determinism: a GEMM's blocking and summation order depend on the m and n of
// the call, so a product cut into one block per thread gave different bits
// for different thread counts. Each product is cut into tiles chosen from the
// shapes alone (tile_product); the pool only decides which thread runs which
// tile, and every tile is the same call whatever the thread count.
#include <algorithm>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "raw/cpu/cpu_backend.hpp"
#include "raw/cpu/eigen_gemm.hpp"
#include "raw/cpu/vmath.hpp"
#include "raw/cpu/walk.hpp"

#if defined(STRATA_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.h>
extern "C" void omp_set_num_threads(int);  // libgomp, oneDNN's runtime
#endif

namespace strata::detail {
namespace {

// Below this many multiply-adds Eigen's inlined kernels beat a library call.
constexpr double kDnnlMinFlops = 48.0 * 48.0 * 48.0;

// How products are cut into tiles (tile_product), per GEMM: at least `flops`
// multiply-adds per tile, at most `max_tiles` tiles over all batches
// together; the first cut (into 2) keeps edges of at least `min_edge`, later
// cuts edges of at least `big_edge`; edges are multiples of kEdgeAlign
// (64-byte column offsets for f32). oneDNN packs a tm x k panel of A and a
// k x tn panel of B on every call, (tm + tn) / (tm * tn) element copies per
// multiply-add, so small tiles pay for their packing: its first cut halves
// any product of 2^20 multiply-adds and later cuts keep 1024-wide tiles
// (2 tiles for n = 1024, 4 for 2048, 16 for 4096). Eigen's f64 GEMM is fast
// on small tiles (64 x 64) or the whole product, not on 128-wide blocks.
struct TilePolicy {
  double flops;
  int64_t max_tiles, min_edge, big_edge;
};
constexpr TilePolicy kDnnlTiles{double(1 << 19), 64, 32, 1024};
constexpr TilePolicy kEigenTiles{double(1 << 20), 16, 32, 32};
constexpr int64_t kEdgeAlign = 16;
// A column-major B is never cut by columns (oneDNN's transposed-B path is
// 2-4x slower on column blocks of a 256-wide product), and every row tile
// packs all of it: past the first cut, row tiles keep this many rows.
constexpr int64_t kMinRowsColMajorB = 256;

/// How one m x n product is cut: tiles of tm x tn (the last row and column of
/// tiles may be smaller), rows x cols of them.
struct Tiling {
  int64_t tm, tn, rows, cols;
};

/// The tiles of each of `batches` m x n x k products, from the shapes, B's
/// storage order and the GEMM only, never from the thread count.
Tiling tile_product(int64_t m, int64_t n, int64_t k, int64_t batches, bool b_row_major,
                    const TilePolicy& p) {
  const double flops = double(m) * double(n) * double(k);
  int64_t want = 1;
  while (2 * want * batches <= p.max_tiles && flops / double(2 * want) >= p.flops) want *= 2;
  auto edge = [](int64_t extent, int64_t parts) {
    const int64_t e = (extent + parts - 1) / parts;
    return (e + kEdgeAlign - 1) / kEdgeAlign * kEdgeAlign;
  };
  Tiling t{m, n, 1, 1};
  while (t.rows * t.cols < want) {
    const int64_t rows_edge = edge(m, 2 * t.rows), cols_edge = edge(n, 2 * t.cols);
    const bool first = t.rows * t.cols == 1;
    const int64_t min_cols = first ? p.min_edge : p.big_edge;
    const int64_t min_rows =
        first ? p.min_edge : std::max(p.big_edge, b_row_major ? int64_t{0} : kMinRowsColMajorB);
    const bool rows_ok = rows_edge >= min_rows && rows_edge < t.tm;
    const bool cols_ok = b_row_major && cols_edge >= min_cols && cols_edge < t.tn;
    // Halve the longer edge.
    if (cols_ok && (t.tn >= t.tm || !rows_ok)) {
      t.cols *= 2;
      t.tn = cols_edge;
    } else if (rows_ok) {
      t.rows *= 2;
      t.tm = rows_edge;
    } else {
      break;
    }
  }
  t.rows = (m + t.tm - 1) / t.tm;
  t.cols = (n + t.tn - 1) / t.tn;
  return t;
}

/// How a GEMM can read a rows x cols matrix with strides (rs, cs), if at all.
template <class T>
bool describe(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, Mat<T>& m) {
  // A size-1 dim's stride never moves the pointer: pick whatever fits.
  if (cols == 1) cs = 1;
  if (rows == 1) rs = std::max<int64_t>(cols, 1) * cs;
  if (cs == 1 && rs >= cols) {
    m = {p, rows, cols, rs, true};
    return true;
  }
  if (rows == 1 && cols > 1 && cs >= 1) {
    // A single row with a wide stride is a column-major 1 x cols matrix.
    m = {p, rows, cols, cs, false};
    return true;
  }
  if (rs == 1 && cs >= rows) {
    m = {p, rows, cols, cs, false};
    return true;
  }
  if (cols == 1 && rows > 1 && rs >= 1) {
    m = {p, rows, cols, rs, true};
    return true;
  }
  return false;
}

/// Eigen's GEMM for the instruction set vmath chose (STRATA_ISA caps it too).
const GemmKernels& eigen_kernels() {
  static const GemmKernels* const k = [] {
    const vmath::Kernels* v = vmath::best();
    const GemmKernels* g = v ? gemm_kernels_for(v->isa) : nullptr;
    return g ? g : gemm_kernels_for(vmath::Isa::sse2);
  }();
  return *k;
}

#if defined(STRATA_HAVE_DNNL)
// Tiles of at least this many multiply-adds refill the tcache bins on every
// call (fill_tcache_bins costs a few microseconds, a small part of such a
// tile's time even at one core's AVX-512 peak); smaller ones on a thread's
// first call only.
constexpr double kRefillMinFlops = double(1 << 24);

/// Fills this thread's glibc tcache bins, so that the packing buffers oneDNN
/// allocates on every call reuse the last call's pages.
///
/// dnnl_sgemm posix_memaligns its packing buffers (up to a few MiB, 128-byte
/// or 4 KiB aligned) on every call and frees them on return. glibc cuts an
/// aligned block out of a larger chunk and frees the slivers left over into
/// the thread's tcache while the bin for their size has room. A chunk in the
/// tcache counts as in use, so the freed buffer cannot merge with its
/// neighbours; the next request, a little larger than the hole it left, is
/// cut from untouched memory further on, and every page of it faults. That
/// went on for tens of calls until the bins filled, and for good on a thread
/// whose own small allocations kept emptying them: hundreds of page faults
/// per thread per call. With every bin full (seven chunks,
/// glibc's default count) the slivers go back to the arena and merge with
/// the freed buffer. Outside glibc nothing is done; under another malloc
/// preloaded into a glibc process it is 448 small mallocs and frees.
void fill_tcache_bins(double tile_flops) {
#if defined(__GLIBC__)
  thread_local bool filled = false;
  if (filled && tile_flops < kRefillMinFlops) return;
  filled = true;
  constexpr int kBins = 64, kPerBin = 7;  // tcache's chunk sizes: 32, 48, ..., 1040 bytes
  // Thread-local, so that the compiler cannot drop the malloc/free pairs.
  thread_local void* held[kBins][kPerBin];
  for (int bin = 0; bin < kBins; ++bin) {
    for (void*& p : held[bin]) p = std::malloc(std::size_t(24 + 16 * bin));
  }
  for (auto& bin : held) {
    for (void*& p : bin) {
      std::free(p);
      p = nullptr;
    }
  }
#else
  (void)tile_flops;
#endif
}

/// c[r0..r1, c0..c1] = a[r0..r1, :] * b[:, c0..c1] with oneDNN's row-major
/// sgemm on this thread only. A column-major operand is the transpose of a
/// row-major one with the same leading dimension.
void dnnl_block(const Mat<float>& a, const Mat<float>& b, float* c, int64_t ldc, int64_t r0,
                int64_t r1, int64_t c0, int64_t c1) {
  thread_local bool single = (omp_set_num_threads(1), true);
  (void)single;
  const int64_t k = a.cols;
  fill_tcache_bins(double(r1 - r0) * double(c1 - c0) * double(k));
  const float* pa = a.data + (a.row_major ? r0 * a.ld : r0);
  const float* pb = b.data + (b.row_major ? c0 : c0 * b.ld);
  const dnnl_status_t st =
      dnnl_sgemm(a.row_major ? 'N' : 'T', b.row_major ? 'N' : 'T', r1 - r0, c1 - c0, k, 1.0f, pa,
                 a.ld, pb, b.ld, 0.0f, c + r0 * ldc + c0, ldc);
  if (st != dnnl_success) {
    fail<ValueError>("matmul", "oneDNN sgemm failed (status ", int(st), ") for a [", r1 - r0, ", ",
                     k, "] x [", k, ", ", c1 - c0, "] block");
  }
}
#endif

/// c[rows r0..r1, cols c0..c1] = a[r0..r1, :] * b[:, c0..c1].
template <class T>
void gemm_block(const Mat<T>& a, const Mat<T>& b, T* c, int64_t ldc, int64_t r0, int64_t r1,
                int64_t c0, int64_t c1) {
  const int64_t k = a.cols;
#if defined(STRATA_HAVE_DNNL)
  if constexpr (std::is_same_v<T, float>) {
    if (k > 0 && double(r1 - r0) * double(c1 - c0) * double(k) >= kDnnlMinFlops) {
      return dnnl_block(a, b, c, ldc, r0, r1, c0, c1);
    }
  }
#endif
  if constexpr (std::is_same_v<T, float>) {
    eigen_kernels().f32(a, b, c, ldc, r0, r1, c0, c1);
  } else {
    eigen_kernels().f64(a, b, c, ldc, r0, r1, c0, c1);
  }
}

/// c = a * b for integers, wrapping like the other integer kernels.
template <class T>
void int_gemm(const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs, T* c,
              int64_t m, int64_t k, int64_t n) {
  using U = std::make_unsigned_t<T>;
  for (int64_t i = 0; i < m; ++i) {
    U* row = reinterpret_cast<U*>(c + i * n);
    std::fill(row, row + n, U(0));
    for (int64_t p = 0; p < k; ++p) {
      const U av = U(a[i * ars + p * acs]);
      for (int64_t j = 0; j < n; ++j) row[j] += av * U(b[p * brs + j * bcs]);
    }
  }
}

/// Packs a rows x cols strided matrix into `buf` row-major.
template <class T>
Mat<T> pack(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, std::vector<T>& buf) {
  buf.resize(std::size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) buf[std::size_t(i * cols + j)] = p[i * rs + j * cs];
  }
  return {buf.data(), rows, cols, cols, true};
}

template <class T>
void matmul_typed(const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  const int64_t nd = out.ndim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[nd - 1];
  const int64_t ars = a.strides()[nd - 2], acs = a.strides()[nd - 1];
  const int64_t brs = b.strides()[nd - 2], bcs = b.strides()[nd - 1];

  // Batch offsets of out, a and b, in batch order.
  Layout bo{Shape(out.shape().begin(), out.shape().end() - 2),
            Strides(out.strides().begin(), out.strides().end() - 2), out.offset()};
  Layout ba{bo.shape, Strides(a.strides().begin(), a.strides().end() - 2), a.offset()};
  Layout bb{bo.shape, Strides(b.strides().begin(), b.strides().end() - 2), b.offset()};
  const int64_t batches = bo.numel();
  std::vector<std::array<int64_t, 3>> offsets;
  offsets.reserve(std::size_t(batches));
  for_each_block(
      make_plan<3>(bo.shape, {&bo, &ba, &bb}), 0, batches,
      [&](const auto& off, int64_t cnt, const auto& st) {
        for (int64_t i = 0; i < cnt; ++i) {
          offsets.push_back({off[0] + i * st[0], off[1] + i * st[1], off[2] + i * st[2]});
        }
      });
  T* ob = base_ptr<T>(out);
  const T* ab = base_ptr<T>(a);
  const T* bb_ = base_ptr<T>(b);

  if constexpr (std::is_integral_v<T>) {
    parallel_for(0, batches, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const auto& o = offsets[std::size_t(t)];
        int_gemm(ab + o[1], ars, acs, bb_ + o[2], brs, bcs, ob + o[0], m, k, n);
      }
    });
  } else {
    // Operands for batch t, packed into per-thread scratch when GEMM cannot read them.
    auto operands = [&](int64_t t, std::vector<T>& sa, std::vector<T>& sb) {
      const auto& o = offsets[std::size_t(t)];
      Mat<T> A, B;
      if (!describe(ab + o[1], m, k, ars, acs, A)) A = pack(ab + o[1], m, k, ars, acs, sa);
      if (!describe(bb_ + o[2], k, n, brs, bcs, B)) B = pack(bb_ + o[2], k, n, brs, bcs, sb);
      return std::pair{A, B};
    };
    // B's storage order decides whether its columns may be cut; packing
    // (when no GEMM reads B in place) gives a row-major copy.
    const bool b_row_major = [&] {
      Mat<T> probe;
      return !describe(bb_, k, n, brs, bcs, probe) || probe.row_major;
    }();
    bool dnnl = false;
#if defined(STRATA_HAVE_DNNL)
    dnnl = std::is_same_v<T, float>;
#endif
    const Tiling tl = tile_product(m, n, k, batches, b_row_major, dnnl ? kDnnlTiles : kEigenTiles);
    const int64_t per = tl.rows * tl.cols;
    const double tile_flops = double(std::min(m, tl.tm)) * double(std::min(n, tl.tn)) * double(k);
    // Small products are grouped so that a piece has about 1e6 multiply-adds.
    const int64_t grain = std::max<int64_t>(1, int64_t(1e6 / std::max(tile_flops, 1.0)));
    parallel_for(0, batches * per, grain, [&](int64_t lo, int64_t hi) {
      std::vector<T> sa, sb;
      int64_t packed = -1;  // the batch whose operands sa/sb (and A, B) hold
      Mat<T> A{}, B{};
      for (int64_t task = lo; task < hi; ++task) {
        const int64_t t = task / per, tile = task % per;
        if (t != packed) {
          const auto operands_t = operands(t, sa, sb);
          A = operands_t.first;
          B = operands_t.second;
          packed = t;
        }
        const int64_t r0 = tile / tl.cols * tl.tm, c0 = tile % tl.cols * tl.tn;
        gemm_block(A, B, ob + offsets[std::size_t(t)][0], n, r0, std::min(m, r0 + tl.tm), c0,
                   std::min(n, c0 + tl.tn));
      }
    });
  }
}

}  // namespace

const GemmKernels* gemm_kernels_for(vmath::Isa isa) {
  static const GemmKernels baseline{eigen_gemm<float>, eigen_gemm<double>};
  if (isa == vmath::Isa::sse2) return &baseline;
#if defined(STRATA_HAVE_ISA_GEMM)
  if (vmath::kernels_for(isa) != nullptr) {  // the CPU runs it
    if (isa == vmath::Isa::avx2) return &gemm_avx2::kGemm;
    if (isa == vmath::Isa::avx512) return &gemm_avx512::kGemm;
  }
#endif
  return nullptr;
}

void CpuBackend::matmul(const RawTensor& out, const RawTensor& a, const RawTensor& b) {
  visit_dtype(out.dtype(), "matmul", [&]<class T>(type_tag<T>) {
    if constexpr (!std::is_same_v<T, bool>) matmul_typed<T>(out, a, b);
  });
}

}  // namespace strata::detail
