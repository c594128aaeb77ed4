// SPDX-License-Identifier: MIT
#pragma once
/// The Backend interface: the kernels of one device, destination-passing.
///
/// The front end (raw/ops/) validates every argument (shapes, dtypes,
/// devices, axes, index ranges), computes output shapes, allocates outputs and
/// only then calls a backend, so a backend implements arithmetic and nothing
/// else. Inputs may have any strides (zero, negative, offsets) unless a method
/// says otherwise; outputs are fresh contiguous tensors unless a method says
/// otherwise.
///
/// Backends are leaves: raw/cpu/ and raw/cuda/ never call the front end
/// (raw/ops.hpp). Scratch space and dense copies a kernel needs come from
/// backend_empty / backend_contiguous below, which use only the backend's own
/// allocator and copy kernel (tests/layers.cmake checks it).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/allocator.hpp"
#include "raw/primitives.hpp"
#include "raw/raw_tensor.hpp"

namespace strata {

/// The distribution of Backend::random.
enum class RandomKind : uint8_t {
  uniform,  ///< uniform on [0, 1)
  normal    ///< standard normal
};

/// The kernels of one device (CPU, or one CUDA device): what the front end (raw/ops/) calls after
/// it has validated the arguments and allocated the outputs. Users reach it through backend_for.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The device this backend computes on.
  virtual Device device() const = 0;
  /// The caching allocator of that device.
  virtual CachingAllocator& allocator() = 0;

  /// out[...] = value (out may be any non-overlapping view).
  virtual void fill(const RawTensor& out, double value) = 0;
  /// out[...] = cast(x[...]); same shape, dtypes may differ; out any non-overlapping view.
  virtual void copy(const RawTensor& out, const RawTensor& x) = 0;
  /// out[i] = start + i * step, for the flat index i of contiguous out.
  virtual void arange(const RawTensor& out, double start, double step) = 0;
  /// out[i] = Philox draw i under seed (core/random.hpp); float out.
  virtual void random(const RawTensor& out, RandomKind kind, uint64_t seed) = 0;
  /// Contiguous out <- host bytes in row-major order.
  virtual void from_host(const RawTensor& out, const void* src) = 0;
  /// Host bytes in row-major order <- x (any layout).
  virtual void to_host(const RawTensor& x, void* dst) = 0;

  /// out[...] = op(x[...]); x has out's shape (and dtype, except for logical_not).
  virtual void unary(UnaryOp op, const RawTensor& out, const RawTensor& x) = 0;
  /// out may be a view aliasing a exactly (in-place ops); a and b have out's shape.
  virtual void binary(BinaryOp op, const RawTensor& out, const RawTensor& a,
                      const RawTensor& b) = 0;
  /// out[...] = alpha * out[...] + beta * x[...] in place (raw::axpby_); x of out's shape and
  /// float dtype, aliasing out exactly or not at all; alpha and beta rounded to the dtype.
  virtual void axpby(const RawTensor& out, double alpha, const RawTensor& x, double beta) = 0;
  /// One Adam step in place (raw::adam_step_, scalar::AdamStep): p, m, v and g of one shape
  /// and float dtype; p, m and v in separate storages, g aliasing one of them exactly or not
  /// at all.
  virtual void adam_step(const RawTensor& p, const RawTensor& m, const RawTensor& v,
                         const RawTensor& g, const AdamStepCoefficients& c) = 0;
  /// out[...] = cond[...] ? a[...] : b[...]; all of out's shape, cond bool.
  virtual void where(const RawTensor& out, const RawTensor& cond, const RawTensor& a,
                     const RawTensor& b) = 0;
  /// out has x's shape with the reduced axes set to 1 (keepdims); axes sorted, unique.
  virtual void reduce(ReduceOp op, const RawTensor& out, const RawTensor& x, const Shape& axes) = 0;
  /// out[..., m, n] = a[..., m, k] @ b[..., k, n]; a and b already expanded to out's batch dims.
  virtual void matmul(const RawTensor& out, const RawTensor& a, const RawTensor& b) = 0;
  /// out = x with `axis` replaced by idx's dims: out[p, j..., q] = x[p, idx[j...], q].
  /// idx arrives normalised by the front end (raw/index_positions.hpp): contiguous i64, every
  /// entry in [0, x.shape[axis]), at least one entry; the backend trusts it and never reads it
  /// back to check it.
  virtual void index_select(const RawTensor& out, const RawTensor& x, int64_t axis,
                            const RawTensor& idx) = 0;
  /// out (a contiguous copy of the base) += src scattered along axis by idx; duplicates add up
  /// in index order. idx is normalised as for index_select (entries in [0, out.shape[axis]));
  /// src is contiguous, of out's dtype, with `axis` replaced by idx's dims.
  virtual void index_add(const RawTensor& out, int64_t axis, const RawTensor& idx,
                         const RawTensor& src) = 0;

  /// out [B..., S...] = the windows y [B..., O..., K...] summed back into place (raw::fold):
  /// out[b, p] = the sum over the k with p = o * w.stride + k * w.dilation (each axis) of
  /// y[b, o, k], added in row-major order of k starting from 0, so that every device gives the
  /// same bits; 0 where no window covers p. The shapes are checked (fold_shape) and out has at
  /// least one element; y has any strides and out's numeric dtype.
  virtual void fold(const RawTensor& out, const RawTensor& y, const Window& w) = 0;

  // --- linear algebra (raw/linalg.hpp) ---------------------------------------------
  // Every output is contiguous and has at least one element; inputs have any strides and
  // f32 or f64 elements of the outputs' dtype. `info` is a contiguous i32 tensor of the batch
  // shape on this device: the kernel sets each element to 0, to a negative code of
  // LinAlgInfo (a NaN or infinity in what the op reads; the outputs of that batch element are
  // then unspecified and no factorisation runs on it), or to the op's positive failure code.
  // raw/linalg.cpp reads it back and throws.

  /// l[..., n, n] = the lower Cholesky factor of a (lower triangle read), upper triangle zero.
  /// info: the order of the first leading minor that is not positive.
  virtual void cholesky(const RawTensor& l, const RawTensor& a, const RawTensor& info) = 0;
  /// x = op(a)^-1 b (left) or b op(a)^-1 (right), x [..., n, k] or [..., k, n]; a and b arrive
  /// expanded to x's batch dims. info: 1 + the index of the first zero on a's diagonal (never
  /// for unit_diagonal); kNonFiniteB for b.
  virtual void triangular_solve(const RawTensor& x, const RawTensor& a, const RawTensor& b,
                                const TriangularSolve& opts, const RawTensor& info) = 0;
  /// lu[..., n, n] the packed L and U factors, pivots and perm [..., n] i64 (raw::lu's meaning); no
  /// positive info (a singular a is factorised like any other).
  virtual void lu(const RawTensor& lu, const RawTensor& pivots, const RawTensor& perm,
                  const RawTensor& a, const RawTensor& info) = 0;
  /// x[..., n, n] = A^-1 from A's packed LU factors lu and its permutation perm [..., n] i64
  /// (raw::lu's outputs; A[perm] = L U), both arriving expanded to x's batch dims. info: 1 + the
  /// index of the first zero on U's diagonal; kBadPermutation when perm is not a permutation
  /// of 0..n-1.
  virtual void lu_inverse(const RawTensor& x, const RawTensor& lu, const RawTensor& perm,
                          const RawTensor& info) = 0;
  /// w[..., n] ascending eigenvalues, v[..., n, n] eigenvectors as columns (lower triangle of
  /// a read). info: positive when the algorithm did not converge.
  virtual void eigh(const RawTensor& w, const RawTensor& v, const RawTensor& a,
                    const RawTensor& info) = 0;
  /// u[..., m, k], s[..., k] descending, vh[..., k, n], k = min(m, n) >= 1. info: positive when
  /// the algorithm did not converge.
  virtual void svd(const RawTensor& u, const RawTensor& s, const RawTensor& vh, const RawTensor& a,
                   const RawTensor& info) = 0;
  /// q[..., m, k], r[..., k, n], k = min(m, n) >= 1. No positive info.
  virtual void qr(const RawTensor& q, const RawTensor& r, const RawTensor& a,
                  const RawTensor& info) = 0;
};

/// The negative codes a linear-algebra kernel writes to its info tensor (Backend::cholesky...).
enum LinAlgInfo : int32_t {
  kNonFinite = -1,       ///< the matrix (a) holds a NaN or an infinity where the op reads it
  kNonFiniteB = -2,      ///< triangular_solve's right-hand side b holds a NaN or an infinity
  kBadPermutation = -3,  ///< lu_inverse's perm is not a permutation of 0..n-1
};

namespace detail {

/// The byte count of a contiguous tensor of shape and dtype; a ValueError naming op when
/// the element or the byte count overflows.
std::size_t checked_bytes(const Shape& shape, DType dtype, std::string_view op);
/// An uninitialised contiguous tensor from be's own allocator: scratch space
/// inside a backend, which allocates without the front end (raw::empty).
RawTensor backend_empty(Backend& be, const Shape& shape, DType dtype);
/// x itself when contiguous, else a row-major copy made by be's copy kernel
/// into backend_empty storage (a backend's raw::contiguous).
RawTensor backend_contiguous(Backend& be, const RawTensor& x);

}  // namespace detail

/// The backend of a device; throws DeviceError when the device is not available.
Backend& backend_for(Device device);

/// Whether this build has the CUDA backend (CMake found the CUDA Toolkit).
bool cuda_built();
/// How many CUDA devices this build can use (0 without the backend or a GPU).
int cuda_device_count();

}  // namespace strata
